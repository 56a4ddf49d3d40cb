"""The fix filter's report, built from stored unit results (no Docker): what the change concerns
cost it."""

from __future__ import annotations

import pytest

from reprobot.bench.pod.judge import CandidateFix
from reprobot.bench.pod.report import build, review_cost_markdown
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.executor import Done, Failed, UnitResult
from reprobot.bench.run.sandbox_runs import run_summary
from reprobot.validation.results.testrun import TestRun

TOML = "pyproject.toml (build, packaging or test settings: only a linter's section may change)"


def candidate(index: int, resolved: bool) -> CandidateFix:
    return CandidateFix("acme__w-1", f"agent{index}", "", "diff", resolved, index)


def result(after: str, resolved: bool, review: tuple[str, ...] = ()) -> CandidateResult:
    return CandidateResult(
        "acme__w-1",
        "agent",
        resolved,
        True,
        True,
        {"t::a": after},
        run_summary(TestRun(outcomes={})),
        review=review,
    )


def test_the_report_counts_what_the_change_concerns_alone_keep_from_being_verified() -> None:
    fixes = [
        candidate(1, True),  # passes, nothing to review: verified
        candidate(2, True),  # passes, but a path needs review: held, labelled correct
        candidate(3, False),  # passes, but code reaches into the tests: held, labelled wrong
        candidate(4, False),  # fails, and a path needs review: rejected either way, not held
        candidate(5, True),  # its run failed: no call either way
    ]
    reference: dict[str, UnitResult[ReferenceResult]] = {
        "reference--acme__w-1": Done(
            ReferenceResult("acme__w-1", {"t::a": "failed"}, {}, {}),
        )
    }
    results: dict[str, UnitResult[CandidateResult]] = {
        fixes[0].key: Done(result("passed", True)),
        fixes[1].key: Done(result("passed", True, (f"it changes 1 file(s): {TOML}",))),
        fixes[2].key: Done(result("passed", False, ("it adds code that reaches into pytest",))),
        fixes[3].key: Done(result("failed", False, (f"it changes 1 file(s): {TOML}",))),
        fixes[4].key: Failed(fixes[4].key, "the sandbox stopped"),
    }
    report = build(fixes, reference, results, gold=True, resamples=10)
    cost = report.review_cost
    assert cost is not None
    assert [c.key for c in cost.held] == [fixes[1].key, fixes[2].key]
    assert (cost.held_correct, cost.held_incorrect) == (1, 1)
    assert report.matrix == {"tp": 1, "fp": 0, "tn": 2, "fn": 1}
    assert cost.matrix_without == {"tp": 2, "fp": 1, "tn": 1, "fn": 0}
    # Zero cells become 1e-12 before any metric (``classification.EPSILON``).
    assert cost.metrics_without["recall"] == pytest.approx(1.0)
    assert report.metrics["recall"] == pytest.approx(0.5)
    lines = review_cost_markdown(cost, report.metrics)
    assert lines[2].startswith("2 candidate(s) whose tests verify them need review")
    assert "| recall | 0.500 | 1.000 |" in lines
    assert f"- `{fixes[1].key}` (labelled correct): it changes 1 file(s): {TOML}" in lines
