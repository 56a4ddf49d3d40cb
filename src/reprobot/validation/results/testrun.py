"""The outcome of one sandboxed test run."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any


class Outcome(StrEnum):
    PASSED = "passed"
    FAILED = "failed"
    ERROR = "error"
    SKIPPED = "skipped"
    # Marked as an expected failure (an xfail marker, or ``pytest.xfail()`` called while it ran)
    # and failing, or passing regardless: pytest's exit status counts both as success, but
    # neither shows the code behaving as the test asks, so neither is a pass here.
    XFAILED = "xfailed"
    XPASSED = "xpassed"
    # Selected but never reported by the runner (it did not exist, or the run died first).
    MISSING = "missing"

    @property
    def is_pass(self) -> bool:
        return self is Outcome.PASSED


@dataclass(frozen=True)
class FileCoverage:
    """coverage.py's view of one file: its executable statements and those that ran.

    ``contexts`` maps a line to the test functions that ran it, when the run recorded them
    (lines that ran only outside any test function are absent)."""

    statements: frozenset[int]
    executed: frozenset[int]
    contexts: Mapping[int, frozenset[str]] = field(default_factory=dict)


@dataclass(frozen=True)
class PatchResult:
    name: str
    applied: bool
    method: str | None = None
    output: str = ""


@dataclass(frozen=True)
class TestRun:
    """Per-test outcomes of one run, with what is needed to explain them."""

    __test__ = False  # not a pytest test class, whatever its name says

    outcomes: Mapping[str, Outcome]
    patches_applied: bool = True
    failures: Mapping[str, str] = field(default_factory=dict)
    patches: tuple[PatchResult, ...] = ()
    install_ok: bool = True
    pytest_exit: int | None = None
    log_excerpt: str = ""
    duration_s: float = 0.0
    coverage: Mapping[str, FileCoverage] | None = None
    limits_hit: frozenset[str] = frozenset()
    selection_mode: str = "ids"
    error: str | None = None
    # The container that ran it (its short id), for logs and for telling sandboxes apart.
    sandbox_id: str = ""
    # Tests the report names that pytest never collected: left out of ``outcomes``, since
    # nothing of pytest's own run reported them, and named so that a reader sees what was not
    # counted.
    unmatched: tuple[str, ...] = ()

    def outcome(self, test_id: str) -> Outcome:
        return self.outcomes.get(test_id, Outcome.MISSING)

    def to_json(self) -> dict[str, Any]:
        """The command-line contract: ``tests`` maps each id to passed/failed/error/skipped."""
        # "missing" is not a pytest outcome; the contract reports such a test as an error and
        # lists it separately so that a reader can tell the two apart.
        tests = {
            k: (Outcome.ERROR if v is Outcome.MISSING else v).value
            for k, v in sorted(self.outcomes.items())
        }
        return {
            "tests": tests,
            "missing": sorted(k for k, v in self.outcomes.items() if v is Outcome.MISSING),
            "unmatched": list(self.unmatched),
            "patches_applied": self.patches_applied,
            "patches": [
                {"name": p.name, "applied": p.applied, "method": p.method, "output": p.output}
                for p in self.patches
            ],
            "install_ok": self.install_ok,
            "pytest_exit": self.pytest_exit,
            "duration_s": round(self.duration_s, 3),
            "limits_hit": sorted(self.limits_hit),
            "selection_mode": self.selection_mode,
            "failures": dict(self.failures),
            "error": self.error,
            "coverage": None
            if self.coverage is None
            else {
                path: {"statements": sorted(fc.statements), "executed": sorted(fc.executed)}
                for path, fc in sorted(self.coverage.items())
            },
        }
