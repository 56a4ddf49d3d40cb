"""The benchmark executor: file-safe keys, worker counts, the result store, resumable runs."""

from __future__ import annotations

import io
import json
import os
import signal
import threading
import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console

from reprobot.bench.run import executor
from reprobot.bench.run.executor import Done, Store, Unit, default_workers, run_units, safe_key
from reprobot.errors import ReprobotError
from reprobot.validation.errors import SnapshotError


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("django__django-11099", "django__django-11099"),
        ("acme/w #1--SWE agent--3", "acme_w_1--SWE_agent--3"),
        ("a\tb\nc", "a_b_c"),
        ("..hidden.", "hidden"),
        ("_x_", "x"),
        ("", "unit"),
        ("///", "unit"),
        ("é", "unit"),
    ],
)
def test_safe_key(text: str, key: str) -> None:
    assert safe_key(text) == key


def test_default_workers_is_between_one_and_the_core_count() -> None:
    cores = os.cpu_count() or 1
    for memory_mb in (0, 1, 512, 4096, 10**9):
        assert 1 <= default_workers(memory_mb) <= cores
    # No machine holds a million GiB per run: one worker.
    assert default_workers(10**9) == 1


def test_default_workers_by_memory(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(os, "cpu_count", lambda: 8)
    monkeypatch.setattr(executor, "_available_memory_mb", lambda: 4096)
    assert default_workers(1024) == 4  # 4096 // 1024 = 4 < 8 cores
    assert default_workers(3000) == 1  # 4096 // 3000 = 1
    assert default_workers(100) == 8  # 40 by memory, capped by the cores
    monkeypatch.setattr(executor, "_available_memory_mb", lambda: None)
    assert default_workers(10**9) == 8  # memory unknown: the cores decide
    monkeypatch.setattr(os, "cpu_count", lambda: None)
    assert default_workers(1024) == 1


# --- the store ----------------------------------------------------------------------------------


def test_store_round_trip(tmp_path: Path) -> None:
    store = Store(tmp_path / "out")
    assert store.results.is_dir()
    assert store.logs.is_dir()
    unit = Unit("k1", "fp-1", "label")
    assert store.load(unit) is None  # nothing stored yet
    store.save(unit, {"value": 3, "path": Path("x/y")})
    # Values JSON cannot hold are stored as strings; the fingerprint goes with the result.
    assert store.load(unit) == {"value": 3, "path": "x/y", "fingerprint": "fp-1"}
    assert [p.name for p in store.results.iterdir()] == ["k1.json"]  # no temporary file left
    assert store.log_dir("k1") == tmp_path / "out" / "logs" / "k1"
    assert store.log_dir("k1").is_dir()


def test_store_rejects_another_fingerprint(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.save(Unit("k", "old"), {"value": 1})
    assert store.load(Unit("k", "new")) is None
    assert store.load(Unit("k", "old")) is not None


def test_store_rejects_a_stored_error(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.save(Unit("k", "fp"), {"error": "SandboxError: boom"})
    assert store.load(Unit("k", "fp")) is None
    # An empty error is no error.
    store.save(Unit("k", "fp"), {"error": "", "value": 2})
    assert store.load(Unit("k", "fp")) == {"error": "", "value": 2, "fingerprint": "fp"}


@pytest.mark.parametrize("text", ["{not json", "[1, 2]", '"fp"', ""])
def test_store_rejects_a_corrupt_result(tmp_path: Path, text: str) -> None:
    store = Store(tmp_path)
    (store.results / "k.json").write_text(text, encoding="utf-8")
    assert store.load(Unit("k", "fp")) is None


# --- resumable runs -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Value:
    """A unit's record in these tests."""

    key: str
    value: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"key": self.key, "value": self.value}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Value:
        return cls(data["key"], data["value"])


class Work:
    """A work function that counts its calls and fails on demand."""

    def __init__(self) -> None:
        self.calls: Counter[str] = Counter()
        self.raise_for: dict[str, Exception] = {}
        self._lock = threading.Lock()

    def __call__(self, unit: Unit) -> Value:
        with self._lock:
            self.calls[unit.key] += 1
        if unit.key in self.raise_for:
            raise self.raise_for[unit.key]
        return Value(unit.key, f"{unit.key}@{unit.fingerprint}")


def quiet() -> tuple[Console, io.StringIO]:
    buffer = io.StringIO()
    return Console(file=buffer, width=120), buffer


def run(
    units: list[Unit], work: Callable[[Unit], Value], store: Store, workers: int = 3
) -> tuple[dict[str, dict[str, Any]], str]:
    """The results as their JSON, and what the console said."""
    console, buffer = quiet()
    results = run_units(units, work, Value.from_json, store, workers, console, "units")
    out = {}
    for key, result in results.items():
        out[key] = result.to_json()
        # Every computed unit carries its own time; the tests compare the rest.
        if isinstance(result, Done):
            assert result.unit_s is not None and result.unit_s >= 0
            assert float(out[key].pop("unit_s")) == result.unit_s
    return out, buffer.getvalue()


UNITS = [Unit("a", "1"), Unit("b", "1"), Unit("c", "1", label="the c unit")]


def test_run_units_computes_every_unit_once(tmp_path: Path) -> None:
    work, store = Work(), Store(tmp_path)
    results, _ = run(UNITS, work, store)
    assert work.calls == Counter({"a": 1, "b": 1, "c": 1})
    assert results == {u.key: {"key": u.key, "value": f"{u.key}@1"} for u in UNITS}
    # Each result was stored with its fingerprint.
    for unit in UNITS:
        stored = json.loads((store.results / f"{unit.key}.json").read_text(encoding="utf-8"))
        assert stored.pop("unit_s") >= 0
        assert stored == {**results[unit.key], "fingerprint": "1"}


def test_run_units_tells_each_unit_as_it_ends_when_no_terminal_shows_a_bar(
    tmp_path: Path,
) -> None:
    _, output = run(UNITS, Work(), Store(tmp_path), workers=1)
    assert "units: 0 finished earlier, 3 to run" in output
    for n, name in enumerate(["a", "b", "the c unit"], start=1):
        assert f"units [{n}/3] {name}: done in " in output
    # One line each, never broken at the console's width.
    assert all(len(line) < 120 for line in output.splitlines())


def test_a_resumed_benchmark_reports_the_time_of_all_its_runs(tmp_path: Path) -> None:
    store = Store(tmp_path)
    first = store.record_run("swt", 90.0)
    assert (first.this_run_s, first.total_s, first.runs) == (90.0, 90.0, 1)
    assert first.sentence() == "Wall time 1 min 30 s"
    store.record_run("pod", 500.0)  # another command's runs into the same folder do not count
    second = store.record_run("swt", 30.0)
    assert (second.this_run_s, second.total_s, second.runs) == (30.0, 120.0, 2)
    assert (
        second.sentence()
        == "Wall time 30.0 s for this run, 2 min 00 s over the 2 runs into this folder"
    )


def test_run_units_resumes(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run(UNITS, Work(), store)
    again = Work()
    results, output = run(UNITS, again, store)
    assert again.calls == Counter()  # every unit finished earlier
    assert results == {
        u.key: {"key": u.key, "value": f"{u.key}@1", "fingerprint": "1"} for u in UNITS
    }
    assert "3 finished earlier, 0 to run" in output


def test_run_units_recomputes_a_unit_whose_inputs_changed(tmp_path: Path) -> None:
    store = Store(tmp_path)
    run(UNITS, Work(), store)
    changed = [UNITS[0], Unit("b", "2"), UNITS[2]]
    again = Work()
    results, output = run(changed, again, store)
    assert again.calls == Counter({"b": 1})
    assert results["b"] == {"key": "b", "value": "b@2"}
    assert "2 finished earlier, 1 to run" in output
    # The new result replaced the old one, so a third run computes nothing.
    third = Work()
    run(changed, third, store)
    assert third.calls == Counter()


def test_run_units_stores_a_reprobot_error_and_retries_it(tmp_path: Path) -> None:
    store = Store(tmp_path)
    work = Work()
    work.raise_for["c"] = SnapshotError("unknown commit")
    results, output = run(UNITS, work, store)
    assert results["c"] == {"key": "c", "error": "SnapshotError: unknown commit"}
    assert results["a"]["value"] == "a@1"
    stored = json.loads((store.results / "c.json").read_text(encoding="utf-8"))
    assert stored == {"key": "c", "error": "SnapshotError: unknown commit", "fingerprint": "1"}
    # The console names the unit by its label.
    assert "the c unit: error: SnapshotError: unknown commit" in output

    retry = Work()  # the cause went away
    results, _ = run(UNITS, retry, store)
    assert retry.calls == Counter({"c": 1})
    assert results["c"] == {"key": "c", "value": "c@1"}


def test_run_units_stores_an_os_error_too(tmp_path: Path) -> None:
    work = Work()
    work.raise_for["a"] = OSError("disk full")
    work.raise_for["b"] = ReprobotError("plain")
    results, _ = run(UNITS, work, Store(tmp_path))
    assert results["a"]["error"] == "OSError: disk full"
    assert results["b"]["error"] == "ReprobotError: plain"


def test_run_units_records_a_bug_and_goes_on(tmp_path: Path) -> None:
    store = Store(tmp_path)
    work = Work()
    work.raise_for["b"] = ValueError("a bug")
    results, output = run(UNITS, work, store, workers=1)
    # The other units finished and were kept; the bug is the unit's error, with where it was.
    assert results["a"]["value"] == "a@1" and results["c"]["value"] == "c@1"
    assert results["b"]["error"].startswith("bug: ValueError: a bug (")
    assert "test_executor.py:" in results["b"]["error"]
    assert "b: error: bug: ValueError: a bug" in output
    for key in ("a", "b", "c"):
        assert (store.results / f"{key}.json").exists()
    # A unit with an error is computed again on the next run.
    retry = Work()
    results, _ = run(UNITS, retry, store)
    assert retry.calls == Counter({"b": 1})
    assert results["b"] == {"key": "b", "value": "b@1"}


def test_run_units_runs_again_a_unit_whose_stored_result_it_cannot_read(tmp_path: Path) -> None:
    store = Store(tmp_path)
    store.save(Unit("a", "1"), {"key": "a", "other": 1})  # no "value": not a Value's JSON
    work = Work()
    results, output = run([Unit("a", "1")], work, store)
    assert work.calls == Counter({"a": 1})
    assert results == {"a": {"key": "a", "value": "a@1"}}
    assert "0 finished earlier, 1 to run" in output


def test_run_units_of_nothing(tmp_path: Path) -> None:
    results, _ = run([], Work(), Store(tmp_path))
    assert results == {}


def test_sigterm_stops_the_units_and_ends_the_running_ones(tmp_path: Path) -> None:
    """Told to stop, the run starts no more units, calls ``on_stop`` (which removes the running
    ones' containers: here it releases them) and raises; what finished is stored."""
    store = Store(tmp_path)
    release, started = threading.Event(), threading.Event()
    calls: list[str] = []

    def work(unit: Unit) -> Value:
        calls.append(unit.key)
        if unit.key != "a":
            started.set()
            release.wait(30)
        return Value(unit.key)

    def stop() -> None:
        release.set()

    def terminate() -> None:
        started.wait(30)
        # Once "a" is stored: the main thread saves a unit after its thread returns.
        deadline = time.monotonic() + 30
        while store.load(units[0]) is None and time.monotonic() < deadline:
            time.sleep(0.01)
        os.kill(os.getpid(), signal.SIGTERM)

    units = [Unit(key, "1") for key in ("a", "b", "c", "d")]
    previous = signal.getsignal(signal.SIGTERM)
    executor.interrupt_on_sigterm()
    killer = threading.Thread(target=terminate)
    console, _ = quiet()
    try:
        killer.start()
        with pytest.raises(KeyboardInterrupt):
            run_units(units, work, Value.from_json, store, 1, console, "units", on_stop=stop)
    finally:
        killer.join()
        signal.signal(signal.SIGTERM, previous)
    assert release.is_set()
    # One worker: "a" finished and is stored, "b" was running, "c" and "d" never started.
    assert calls == ["a", "b"]
    assert store.load(units[0]) is not None and store.load(units[2]) is None
