"""Change coverage ΔC as SWT-Bench defines it: executable changed lines of the golden fix, and
the share of them the prediction's own tests execute."""

from __future__ import annotations

import math

from reprobot.bench.swt.metrics import (
    CoverageDelta,
    coverage_delta,
)
from reprobot.validation.results.testrun import FileCoverage, Outcome
from reprobot.validation.source.patch import Patch

P, F, E, S, M = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.MISSING


# --- change coverage ----------------------------------------------------------------------------

# The golden fix X* of pkg/mod.py: line 4 (a continuation line of the statement that starts on
# line 2) is replaced, and a statement is added as new line 10.
# Removed: old {4}; added: new {4, 10}.
OLD_SOURCE = b"""\
def f(x):
    y = compute(
        x,
        1,
    )
    return y


def g():
    return 0
"""
NEW_SOURCE = b"""\
def f(x):
    y = compute(
        x,
        2,
    )
    return y


def g():
    log()
    return 0
"""
GOLDEN_FIX = Patch(
    """\
diff --git a/pkg/mod.py b/pkg/mod.py
index 1111111..2222222 100644
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,10 +1,11 @@
 def f(x):
     y = compute(
         x,
-        1,
+        2,
     )
     return y
 
 
 def g():
+    log()
     return 0
""",
    name="golden.diff",
)
MOD = "pkg/mod.py"
OLD_SOURCES: dict[str, bytes | None] = {MOD: OLD_SOURCE}
NEW_SOURCES: dict[str, bytes | None] = {MOD: NEW_SOURCE}
NEW, OLD = "tests/test_mod.py::test_new", "tests/test_mod.py::test_old"


def cov(executed: set[int], contexts: dict[int, set[str]] | None = None) -> FileCoverage:
    """coverage.py's data for one file: it records statement first lines only."""
    return FileCoverage(
        statements=frozenset({1, 2, 6, 9, 10, 11}),
        executed=frozenset(executed),
        contexts={line: frozenset(labels) for line, labels in (contexts or {}).items()},
    )


# Before the fix (R): the golden tests never call f; the existing tests (base) do, so old line 2,
# the statement of removed line 4, ran in a reference run -> removed line 4 is executable.
GOLD_PRE = {MOD: cov({1, 9})}
BASE_PRE = {MOD: cov({1, 2, 6, 9}, {2: {OLD}, 6: {OLD}})}
# The prediction's run has test_old and its own test_new, which also runs f: old line 4 covered.
PRED_PRE = {MOD: cov({1, 2, 6, 9}, {2: {OLD, NEW}, 6: {OLD, NEW}})}

# After the fix (R∘X*): the golden tests call f (new line 2 ran -> added line 4, a continuation
# line of it, is executable); nobody in gold or base runs g's body, so added line 10 is not.
GOLD_POST = {MOD: cov({1, 2, 6, 9})}
# Base: test_old runs only another file here, but is still one of the base run's test functions.
BASE_POST = {
    MOD: cov({1, 9}),
    "tests/test_mod.py": FileCoverage(frozenset({1, 2}), frozenset({1, 2}), {2: frozenset({OLD})}),
}
# Pred: f runs only under test_old (a base test, not the prediction's own) -> added line 4 not
# covered; test_new runs g's new line 10, which is not executable, so it does not count.
PRED_POST = {MOD: cov({1, 2, 6, 9, 10, 11}, {2: {OLD}, 6: {OLD}, 10: {NEW}, 11: {NEW}})}


def test_the_golden_fix_is_what_the_example_says() -> None:
    assert GOLDEN_FIX.files == (MOD,)
    diff_lines = GOLDEN_FIX.diff.splitlines()
    assert sum(1 for ln in diff_lines if ln.startswith("-") and not ln.startswith("---")) == 1
    assert sum(1 for ln in diff_lines if ln.startswith("+") and not ln.startswith("+++")) == 2


def test_coverage_delta_by_hand() -> None:
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(PRED_PRE, PRED_POST),
        gold=(GOLD_PRE, GOLD_POST),
        base=(BASE_PRE, BASE_POST),
    )
    # Executable: old -4 (via base pre) and new +4 (via gold post); +10 ran in neither -> 2.
    # Covered: -4 only (test_new ran old line 2; new line 2 ran only under test_old) -> 1.
    assert delta == CoverageDelta(executable=2, covered=1, uncovered=(f"{MOD}:+4",))
    assert delta.ratio == 0.5


def test_coverage_delta_counts_a_line_the_own_tests_run_after_the_fix() -> None:
    # test_new now runs f after the fix too: new line 2 -> added line 4 covered. 2 of 2.
    pred_post = {MOD: cov({1, 2, 6, 9, 10}, {2: {OLD, NEW}, 6: {OLD}, 10: {NEW}})}
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(PRED_PRE, pred_post),
        gold=(GOLD_PRE, GOLD_POST),
        base=(BASE_PRE, BASE_POST),
    )
    assert delta == CoverageDelta(executable=2, covered=2, uncovered=())
    assert delta.ratio == 1.0


def test_coverage_delta_does_not_credit_tests_the_base_run_has() -> None:
    # If the base run had test_new too (the prediction adds no test function), nothing is own.
    base_pre = {MOD: cov({1, 2, 6, 9}, {2: {OLD, NEW}})}
    base_post = {MOD: cov({1, 9}, {9: {NEW}}), **{k: v for k, v in BASE_POST.items() if k != MOD}}
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(PRED_PRE, PRED_POST),
        gold=(GOLD_PRE, GOLD_POST),
        base=(base_pre, base_post),
    )
    # Executable lines are unchanged (base pre still ran old line 2): 2, covered 0.
    assert delta == CoverageDelta(2, 0, (f"{MOD}:-4", f"{MOD}:+4"))
    assert delta.ratio == 0.0


def test_coverage_delta_when_the_reference_runs_execute_g_too() -> None:
    # Base post runs g's new body (line 10) -> added line 10 becomes executable, and test_new's
    # run of it counts: executable {-4, +4, +10} = 3, covered {-4, +10} = 2.
    base_post = {**BASE_POST, MOD: cov({1, 9, 10, 11})}
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(PRED_PRE, PRED_POST),
        gold=(GOLD_PRE, GOLD_POST),
        base=(BASE_PRE, base_post),
    )
    assert delta == CoverageDelta(3, 2, (f"{MOD}:+4",))
    assert delta.ratio is not None
    assert math.isclose(delta.ratio, 2 / 3)


def test_coverage_delta_of_a_prediction_without_coverage() -> None:
    # A prediction that does not apply has no runs: the executable lines stay, none is covered.
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(None, None),
        gold=(GOLD_PRE, GOLD_POST),
        base=(BASE_PRE, BASE_POST),
    )
    assert (delta.executable, delta.covered) == (2, 0)
    assert delta.ratio == 0.0


def test_coverage_delta_with_no_reference_run_has_no_executable_line() -> None:
    delta = coverage_delta(
        GOLDEN_FIX,
        OLD_SOURCES,
        NEW_SOURCES,
        pred=(PRED_PRE, PRED_POST),
        gold=(None, None),
        base=(None, None),
    )
    assert delta == CoverageDelta(0, 0, ())
    assert delta.ratio is None
