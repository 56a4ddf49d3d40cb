"""Run benchmark units in parallel, resumably, with a progress bar and one log folder each.

A unit's work returns a typed record (``Record``); its result is stored as ``results/<key>.json``,
the record's JSON with the executor's own entries (the unit's time, the fingerprint of its
inputs). A later run reads back every unit whose stored result has the same fingerprint and no
error, so an interrupted benchmark picks up where it stopped and a changed input is evaluated
again. A unit that raised is ``Failed``: stored with its cause, and run again next time.
"""

from __future__ import annotations

import json
import os
import re
import resource
import signal
import time
import traceback
from collections.abc import Callable, Collection, Iterator, Mapping, Sequence
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Generic, Protocol, TypeAlias, TypeVar

import docker.errors
import structlog
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from reprobot.errors import ReprobotError
from reprobot.progress import elapsed

log = structlog.get_logger(__name__)
_UNSAFE = re.compile(r"[^A-Za-z0-9._-]+")


@dataclass(frozen=True)
class Unit:
    """One piece of benchmark work: an instance, or a candidate patch of an instance."""

    key: str
    fingerprint: str
    label: str = ""


class Record(Protocol):
    """What a unit's work returns: a typed result that writes its own JSON entries."""

    def to_json(self) -> dict[str, Any]: ...


R = TypeVar("R", bound=Record)
_T = TypeVar("_T")


@dataclass(frozen=True)
class Done(Generic[R]):
    """A unit that finished: its record, how long it took in the run that computed it, and,
    read back from the store, the fingerprint it was stored with."""

    record: R
    unit_s: float | None = None
    fingerprint: str | None = None

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: the record's entries, then the executor's, as a stored file has them.
        data = self.record.to_json()
        if self.unit_s is not None:
            data["unit_s"] = self.unit_s
        if self.fingerprint is not None:
            data["fingerprint"] = self.fingerprint
        return data


@dataclass(frozen=True)
class Failed:
    """A unit that raised: its key and the cause (stored, and run again next time)."""

    key: str
    error: str

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a failed unit's stored entries.
        return {"key": self.key, "error": self.error}


UnitResult: TypeAlias = Done[R] | Failed


def safe_key(text: str) -> str:
    """``text`` as a file name."""
    return _UNSAFE.sub("_", text).strip("._") or "unit"


def default_workers(memory_mb_per_run: int) -> int:
    """As many parallel units as there are cores and as available memory holds sandboxes of
    ``memory_mb_per_run`` (at least one)."""
    cores = os.cpu_count() or 1
    available_mb = _available_memory_mb()
    by_memory = max(1, available_mb // max(1, memory_mb_per_run)) if available_mb else cores
    return max(1, min(cores, by_memory))


def _available_memory_mb() -> int | None:
    try:
        with open("/proc/meminfo", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


def peak_rss_mb() -> float:
    """Peak resident memory of this process and its waited-for children, in MiB."""
    own = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    return round((own + children) / 1024, 1)


@dataclass(frozen=True)
class Timing:
    """How long a report took: this run's wall time, and the wall time of every run that wrote
    into the same output folder (a resumed benchmark's real cost)."""

    this_run_s: float
    total_s: float
    runs: int

    def sentence(self) -> str:
        text = f"Wall time {elapsed(self.this_run_s)}"
        if self.runs > 1:
            text += (
                f" for this run, {elapsed(self.total_s)} over the {self.runs} runs into this folder"
            )
        return text


class Store:
    """Stored unit results under ``out/results``, per-unit logs under ``out/logs``, and one line
    per finished run in ``out/runs.jsonl``."""

    def __init__(self, out: Path) -> None:
        self.results = out / "results"
        self.logs = out / "logs"
        self.results.mkdir(parents=True, exist_ok=True)
        self.logs.mkdir(parents=True, exist_ok=True)

    def log_dir(self, key: str) -> Path:
        path = self.logs / key
        path.mkdir(parents=True, exist_ok=True)
        return path

    def load(self, unit: Unit) -> dict[str, Any] | None:
        """The stored result of ``unit`` if it is finished and its inputs are unchanged, as the
        file holds it (the JSON boundary: ``run_units`` reads it into the unit's record)."""
        path = self.results / f"{unit.key}.json"
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        if not isinstance(data, dict):
            return None
        if data.get("fingerprint") != unit.fingerprint or data.get("error"):
            return None
        return data

    def record_run(self, command: str, wall_s: float) -> Timing:
        """Add this run of ``command`` to the folder's history; the timing of all its runs."""
        path = self.results.parent / "runs.jsonl"
        with open(path, "a", encoding="utf-8") as fh:
            fh.write(json.dumps({"command": command, "wall_s": round(wall_s, 1)}) + "\n")
        runs = []
        for line in path.read_text(encoding="utf-8").splitlines():
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if isinstance(entry, dict) and entry.get("command") == command:
                runs.append(float(entry.get("wall_s", 0.0)))
        return Timing(wall_s, sum(runs), len(runs))

    def save(self, unit: Unit, result: Mapping[str, Any]) -> None:
        """Store a result's JSON (``Done.to_json``, ``Failed.to_json``) with the unit's
        fingerprint."""
        path = self.results / f"{unit.key}.json"
        tmp = path.with_suffix(".tmp")
        tmp.write_text(
            json.dumps({**result, "fingerprint": unit.fingerprint}, indent=1, default=str),
            encoding="utf-8",
        )
        tmp.replace(path)


def run_units(
    units: Sequence[Unit],
    work: Callable[[Unit], R],
    read: Callable[[Mapping[str, Any]], R],
    store: Store,
    workers: int,
    console: Console,
    title: str,
    on_stop: Callable[[], object] | None = None,
) -> dict[str, UnitResult[R]]:
    """Every unit's result by key: stored ones read back with ``read`` (the record's
    ``from_json``), the others computed by ``work`` on ``workers`` threads, each saved as soon
    as it ends. A unit that raises is ``Failed`` with the cause (stored, and retried on the next
    run), and the run goes on: one unit's failure, a bug included, never loses the others'
    results. Interrupted
    (Ctrl-C, or SIGTERM as ``interrupt_on_sigterm`` turns it), no unit starts any more and
    ``on_stop`` ends the running ones (removes their containers) before the interrupt goes on;
    the units that finished are stored, so the next run resumes."""
    results: dict[str, UnitResult[R]] = {}
    todo = []
    for unit in units:
        stored = _stored(store, unit, read)
        if stored is not None:
            results[unit.key] = stored
        else:
            todo.append(unit)
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    # Where no terminal shows the bar (a log file, CI), a line per unit as it ends tells the same.
    lines = not console.is_terminal
    with Progress(*columns, console=console) as progress:
        task = progress.add_task(title, total=len(units), completed=len(results))
        if results or lines:
            progress.console.print(f"{title}: {len(results)} finished earlier, {len(todo)} to run")
        pool = ThreadPoolExecutor(max_workers=max(1, workers))
        try:
            futures: dict[Future[UnitResult[R]], Unit] = {
                pool.submit(_guarded, work, unit): unit for unit in todo
            }
            for future in _as_they_end(futures):
                unit = futures[future]
                result = future.result()
                store.save(unit, result.to_json())
                results[unit.key] = result
                progress.advance(task)
                name = unit.label or unit.key
                if isinstance(result, Failed):
                    progress.console.print(f"{name}: error: {result.error}", markup=False)
                elif lines:
                    took = elapsed(result.unit_s or 0.0)
                    progress.console.print(
                        f"{title} [{len(results)}/{len(units)}] {name}: done in {took}",
                        markup=False,
                    )
        except (KeyboardInterrupt, SystemExit):
            pool.shutdown(wait=False, cancel_futures=True)
            if on_stop is not None:
                on_stop()
            raise
        pool.shutdown(wait=True)
    return results


# How often the main thread wakes while units run. A signal may be delivered to any thread, and
# Python runs its handler in the main thread only once that thread wakes: blocked until a unit
# ends, a SIGTERM would wait for it (and the next unit would start meanwhile).
_WAKE_S = 0.5


def _stored(store: Store, unit: Unit, read: Callable[[Mapping[str, Any]], R]) -> Done[R] | None:
    """The stored result of ``unit`` read back, or None (none stored, inputs changed, an error
    stored, or a file this code cannot read: the unit runs again)."""
    data = store.load(unit)
    if data is None:
        return None
    try:
        record = read(data)
    except (KeyError, TypeError, ValueError):
        return None
    unit_s = data.get("unit_s")
    return Done(record, unit_s if isinstance(unit_s, float | int) else None, unit.fingerprint)


def _as_they_end(futures: Collection[Future[_T]]) -> Iterator[Future[_T]]:
    """Each future as it ends (those that end together in the order given), waking the calling
    thread every ``_WAKE_S``."""
    order = {future: k for k, future in enumerate(futures)}
    pending = set(futures)
    while pending:
        done, pending = wait(pending, timeout=_WAKE_S, return_when=FIRST_COMPLETED)
        yield from sorted(done, key=order.__getitem__)


def interrupt_on_sigterm() -> None:
    """Make SIGTERM interrupt this process as Ctrl-C does, so that ``run_units`` stops its
    units (and their containers) instead of dying with them still running."""

    def interrupt(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    signal.signal(signal.SIGTERM, interrupt)


def _guarded(work: Callable[[Unit], R], unit: Unit) -> UnitResult[R]:
    structlog.contextvars.bind_contextvars(unit=unit.key)
    started = time.monotonic()
    result: UnitResult[R]
    try:
        record = work(unit)
    except (ReprobotError, docker.errors.DockerException, OSError) as exc:
        log.warning("unit failed", error=str(exc))
        result = Failed(unit.key, f"{type(exc).__name__}: {exc}")
    except Exception as exc:
        log.error("unit failed with a bug", error=str(exc), exc_info=True)
        where = traceback.extract_tb(exc.__traceback__)[-1]
        result = Failed(
            unit.key, f"bug: {type(exc).__name__}: {exc} ({where.filename}:{where.lineno})"
        )
    else:
        result = Done(record, unit_s=round(time.monotonic() - started, 1))
    finally:
        structlog.contextvars.unbind_contextvars("unit")
    return result
