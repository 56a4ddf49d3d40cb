"""What a benchmark keeps of a sandbox run: its log, one file per run, and its summary in a stored
unit result."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobot.validation import TestRun


def write_run_log(path: Path, run: TestRun) -> None:
    """A test run's log with its patch and status lines on top (one file per run)."""
    parts = [
        f"# error: {run.error}",
        f"# pytest exit: {run.pytest_exit}",
        f"# limits hit: {sorted(run.limits_hit)}",
        f"# selection mode: {run.selection_mode}",
        f"# duration: {run.duration_s:.1f} s",
    ]
    for p in run.patches:
        parts.append(f"# patch {p.name}: applied={p.applied} method={p.method}\n{p.output}")
    parts.append(run.log_excerpt)
    path.write_text("\n".join(parts), encoding="utf-8")


@dataclass(frozen=True)
class RunSummary:
    """What a stored result keeps of a run: no coverage, no per-test details."""

    patches_applied: bool
    error: str | None
    pytest_exit: int | None
    limits_hit: tuple[str, ...]
    duration_s: float
    # How many tests the run reported.
    tests: int

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result's entries, in the order they are written.
        return {
            "patches_applied": self.patches_applied,
            "error": self.error,
            "pytest_exit": self.pytest_exit,
            "limits_hit": list(self.limits_hit),
            "duration_s": self.duration_s,
            "tests": self.tests,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> RunSummary:
        # The JSON boundary: a summary as ``to_json`` wrote it.
        return cls(
            patches_applied=bool(data["patches_applied"]),
            error=data["error"],
            pytest_exit=data["pytest_exit"],
            limits_hit=tuple(data["limits_hit"]),
            duration_s=data["duration_s"],
            tests=data["tests"],
        )


def run_summary(run: TestRun) -> RunSummary:
    """What a stored result keeps of ``run``."""
    return RunSummary(
        patches_applied=run.patches_applied,
        error=run.error,
        pytest_exit=run.pytest_exit,
        limits_hit=tuple(sorted(run.limits_hit)),
        duration_s=round(run.duration_s, 2),
        tests=len(run.outcomes),
    )
