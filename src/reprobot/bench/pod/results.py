"""What ``bench pod`` stores per unit: an instance's reference runs on R, shared by its candidates,
and one candidate's runs. Outcomes are kept by test id as their values (``"failed"``, ...), as
the stored files hold them."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from reprobot.bench.run.sandbox_runs import RunSummary


@dataclass(frozen=True)
class ReferenceResult:
    """The plan's runs on R for one instance (``judge.reference``)."""

    instance_id: str
    # The outcome on R of every graded id.
    before: Mapping[str, str]
    # Each run's summary: "R", then "R-guard" and "RX" when they ran.
    runs: Mapping[str, RunSummary]
    # Golden ids left out of the grading, with why.
    dropped: Mapping[str, str]
    # Predicted tests only: what each test checks (test id to oracle kind).
    oracles: Mapping[str, str] | None = None
    # With guard modules: which, and their outcomes on R ({}: the guard could not run there).
    guard: tuple[str, ...] | None = None
    guard_before: Mapping[str, str] | None = None

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result, in the order it is written.
        data: dict[str, Any] = {
            "instance_id": self.instance_id,
            "before": dict(self.before),
            "runs": {name: run.to_json() for name, run in self.runs.items()},
            "dropped": dict(self.dropped),
        }
        if self.oracles is not None:
            data["oracles"] = dict(self.oracles)
        if self.guard is not None:
            data["guard"] = list(self.guard)
        if self.guard_before is not None:
            data["guard_before"] = dict(self.guard_before)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> ReferenceResult:
        # The JSON boundary: a stored unit result as ``to_json`` wrote it.
        guard = data.get("guard")
        return cls(
            instance_id=str(data["instance_id"]),
            before=dict(data["before"]),
            runs={name: RunSummary.from_json(run) for name, run in data["runs"].items()},
            dropped=dict(data["dropped"]),
            oracles=data.get("oracles"),
            guard=tuple(guard) if guard is not None else None,
            guard_before=data.get("guard_before"),
        )


@dataclass(frozen=True)
class CandidateResult:
    """One candidate's runs (``judge.evaluate_candidate``): the plan's tests with it, and, when
    they accept it, the guard modules with it."""

    instance_id: str
    system: str
    resolved: bool
    candidate_applied: bool
    tests_applied: bool
    # The outcome of every graded id with the candidate ({}: the patches did not apply).
    after: Mapping[str, str]
    run: RunSummary
    # What the candidate holds that keeps any pass from being verified.
    review: tuple[str, ...] = ()
    guard_run: RunSummary | None = None
    # The guard's outcomes with the candidate ({}: the guard run failed).
    guard_after: Mapping[str, str] | None = None
    # Files the candidate leaves as the environment's set-up steps make them, left out of it.
    set_up: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result, in the order it is written.
        data: dict[str, Any] = {
            "instance_id": self.instance_id,
            "system": self.system,
            "resolved": self.resolved,
            "candidate_applied": self.candidate_applied,
            "tests_applied": self.tests_applied,
            "after": dict(self.after),
            "run": self.run.to_json(),
            "review": list(self.review),
        }
        if self.guard_run is not None:
            data["guard_run"] = self.guard_run.to_json()
        if self.guard_after is not None:
            data["guard_after"] = dict(self.guard_after)
        if self.set_up:
            data["set_up"] = list(self.set_up)
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> CandidateResult:
        # The JSON boundary: a stored unit result as ``to_json`` wrote it.
        guard_run = data.get("guard_run")
        return cls(
            instance_id=str(data["instance_id"]),
            system=str(data["system"]),
            resolved=bool(data["resolved"]),
            candidate_applied=bool(data["candidate_applied"]),
            tests_applied=bool(data["tests_applied"]),
            after=dict(data["after"]),
            run=RunSummary.from_json(data["run"]),
            review=tuple(data["review"]),
            guard_run=RunSummary.from_json(guard_run) if guard_run is not None else None,
            guard_after=data.get("guard_after"),
            set_up=tuple(data.get("set_up") or ()),
        )
