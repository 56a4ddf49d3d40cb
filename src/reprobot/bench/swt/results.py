"""What ``bench swt`` keeps of one instance: the result of its prediction's runs (stored per unit,
read back by a resumed run, reported in report.json's ``details``) or why it has none; and what
is read from it: the instance's score, and why its golden tests did not run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any, TypeAlias

from reprobot.bench.run.executor import Done, Failed
from reprobot.bench.run.sandbox_runs import RunSummary
from reprobot.bench.swt.metrics import NOTHING, CoverageDelta, Flags, InstanceScore


@dataclass(frozen=True)
class InstanceResult:
    """One prediction run and graded (``evaluate.evaluate_instance``), or an empty one scored
    without running (``evaluate.not_run``)."""

    instance_id: str
    model: str
    applied: bool
    flags: Flags
    delta: CoverageDelta
    # Per category (F->P, P->P, ...): the tests the prediction's report has and the base run's
    # does not, and the base run's own (the existing tests of the prediction's files).
    added: Mapping[str, tuple[str, ...]]
    base: Mapping[str, tuple[str, ...]]
    # Each run's summary, by its name (pred_pre, gold_post, ...).
    runs: Mapping[str, RunSummary]
    problems: tuple[str, ...]
    # The environment image's tag (None: nothing ran).
    environment: str | None = None
    # An empty prediction scored without running (``--skip-empty``).
    skipped: bool = False

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result, in the order it is written.
        data: dict[str, Any] = {
            "instance_id": self.instance_id,
            "model": self.model,
            "applied": self.applied,
            "flags": asdict(self.flags),
            "delta": {
                "executable": self.delta.executable,
                "covered": self.delta.covered,
                "uncovered": list(self.delta.uncovered),
            },
            "added": {kind: list(ids) for kind, ids in self.added.items()},
            "base": {kind: list(ids) for kind, ids in self.base.items()},
            "runs": {name: run.to_json() for name, run in self.runs.items()},
            "problems": list(self.problems),
        }
        if self.environment is not None:
            data["environment"] = self.environment
        if self.skipped:
            data["skipped"] = True
        return data

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> InstanceResult:
        # The JSON boundary: a stored unit result as ``to_json`` wrote it.
        delta = data["delta"]
        return cls(
            instance_id=str(data["instance_id"]),
            model=str(data["model"]),
            applied=bool(data["applied"]),
            flags=Flags(**data["flags"]),
            delta=CoverageDelta(delta["executable"], delta["covered"], tuple(delta["uncovered"])),
            added={kind: tuple(ids) for kind, ids in data["added"].items()},
            base={kind: tuple(ids) for kind, ids in data["base"].items()},
            runs={name: RunSummary.from_json(run) for name, run in data["runs"].items()},
            problems=tuple(data["problems"]),
            environment=data.get("environment"),
            skipped=bool(data.get("skipped", False)),
        )


@dataclass(frozen=True)
class NoPrediction:
    """An instance the predictions leave out: nothing to run, an error in the report."""

    instance_id: str
    error: str = "no prediction for this instance"

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: the instance's entry of report.json's ``details``.
        return {"instance_id": self.instance_id, "error": self.error}


# What the report holds of an instance: its result (computed, read back, or not run), the error
# of its unit, or no prediction at all.
InstanceEntry: TypeAlias = Done[InstanceResult] | Failed | NoPrediction


def score(entry: InstanceEntry, excluded: bool) -> InstanceScore:
    """An ``InstanceScore`` from an instance's entry (one with an error scores nothing)."""
    if isinstance(entry, Failed | NoPrediction):
        return InstanceScore(
            instance_id=entry.key if isinstance(entry, Failed) else entry.instance_id,
            flags=NOTHING,
            delta=CoverageDelta(0, 0),
            excluded=excluded,
            error=entry.error,
        )
    result = entry.record
    return InstanceScore(
        instance_id=result.instance_id,
        flags=result.flags,
        delta=result.delta,
        excluded=excluded,
        error="; ".join(result.problems) or None,
        counts={kind: len(ids) for kind, ids in result.added.items()},
    )


def not_runnable(entry: InstanceEntry) -> str | None:
    """Why an instance did not run with a golden test going F→P, in one line; None when it did
    (whether it also succeeded, with no test failing after the fix, is S's business). An error
    first (the environment, the tree, the sandbox), then what the gold runs said."""
    if isinstance(entry, Failed | NoPrediction):
        return entry.error.strip().splitlines()[0][:300]
    result = entry.record
    if result.flags.fail_to_pass:
        return None
    problems = [p for p in result.problems if "golden tests" in p]
    if problems:
        return problems[0].splitlines()[0][:300]
    stuck = result.added.get("F->F") or result.base.get("F->F") or ()
    if stuck:
        return f"golden tests fail after the fix too (F→F), e.g. {stuck[0]}"
    return "golden tests are not F→P (they pass before the fix)"
