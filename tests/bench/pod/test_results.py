"""What ``bench pod`` stores per unit: the keys of the files in their order, the entries only some
results have, and each result read back as the same record and the same bytes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.executor import Done, Record
from reprobot.bench.run.sandbox_runs import RunSummary

RUN = RunSummary(True, None, 1, ("timeout",), 2.5, 3)
GOLD_REFERENCE = ReferenceResult(
    instance_id="a__b-1",
    before={"t.py::a": "failed", "t.py::b": "passed"},
    runs={"R": RUN, "RX": RUN},
    dropped={"t.py::c": "unmappable: no function of that name in the test patch's files"},
)
PREDICTED_REFERENCE = ReferenceResult(
    instance_id="a__b-1",
    before={"t.py::a": "failed"},
    runs={"R": RUN, "R-guard": RUN},
    dropped={},
    oracles={"t.py::a": "expected"},
    guard=("tests/test_g.py",),
    guard_before={"tests/test_g.py::x": "passed"},
)
CANDIDATE = CandidateResult(
    instance_id="a__b-1",
    system="agent",
    resolved=True,
    candidate_applied=True,
    tests_applied=True,
    after={"t.py::a": "passed"},
    run=RUN,
    review=("it changes setup.py",),
)
GUARDED = CandidateResult(
    instance_id="a__b-1",
    system="agent",
    resolved=False,
    candidate_applied=True,
    tests_applied=True,
    after={"t.py::a": "passed"},
    run=RUN,
    guard_run=RUN,
    guard_after={},
    set_up=("tox.ini",),
)


def test_reference_results_have_the_keys_of_the_files_in_their_order() -> None:
    assert list(GOLD_REFERENCE.to_json()) == ["instance_id", "before", "runs", "dropped"]
    data = PREDICTED_REFERENCE.to_json()
    assert list(data) == [
        "instance_id",
        "before",
        "runs",
        "dropped",
        "oracles",
        "guard",
        "guard_before",
    ]
    assert list(data["runs"]) == ["R", "R-guard"]
    assert data["guard"] == ["tests/test_g.py"]


def test_candidate_results_have_the_keys_of_the_files_in_their_order() -> None:
    keys = [
        "instance_id",
        "system",
        "resolved",
        "candidate_applied",
        "tests_applied",
        "after",
        "run",
        "review",
    ]
    assert list(CANDIDATE.to_json()) == keys
    assert list(GUARDED.to_json()) == [*keys, "guard_run", "guard_after", "set_up"]
    assert GUARDED.to_json()["review"] == []


R = TypeVar("R", bound=Record)


def round_trip(record: R, reader: Callable[[Mapping[str, Any]], R]) -> None:
    """``record`` stored as the executor stores it reads back as itself, and writes the same
    bytes again."""
    text = json.dumps({**record.to_json(), "unit_s": 2.0, "fingerprint": "f"}, indent=1)
    data = json.loads(text)
    assert reader(data) == record
    stored = Done(reader(data), data["unit_s"], data["fingerprint"])
    assert json.dumps(stored.to_json(), indent=1) == text


def test_stored_results_read_back_as_the_same_records_and_bytes() -> None:
    for reference in (GOLD_REFERENCE, PREDICTED_REFERENCE):
        round_trip(reference, ReferenceResult.from_json)
    for candidate in (CANDIDATE, GUARDED):
        round_trip(candidate, CandidateResult.from_json)
