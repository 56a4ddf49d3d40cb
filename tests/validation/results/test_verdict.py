"""Grading runs into verdicts: transitions, success and change coverage, by hand-computed cases."""

from __future__ import annotations

from reprobot.validation.results.testrun import FileCoverage, Outcome, TestRun
from reprobot.validation.results.verdict import (
    ChangedLines,
    as_applied,
    broken_tests,
    change_coverage,
    changed_lines,
    executable_lines,
    is_success,
    transitions,
)
from reprobot.validation.source.patch import Patch
from reprobot.validation.verify import GuardRuns, grade

P, F, E, S, M = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.MISSING


def test_transition_kinds() -> None:
    graded = transitions(
        {"a": F, "b": P, "c": E, "d": P, "e": S}, {"a": P, "b": P, "c": P, "d": F, "f": P}
    )
    assert {k: t.kind for k, t in graded.items()} == {
        "a": "F->P",
        "b": "P->P",
        "c": "E->P",
        "d": "P->F",
        "e": "S->E",
        "f": "E->P",
    }
    assert [k for k, t in graded.items() if t.fail_to_pass] == ["a", "c", "f"]


def test_success_needs_a_fail_to_pass_and_nothing_failing_after() -> None:
    assert is_success(transitions({"a": F, "b": P}, {"a": P, "b": P}))
    assert not is_success(transitions({"a": P}, {"a": P}))  # nothing reproduced
    assert not is_success(transitions({"a": F, "b": P}, {"a": P, "b": F}))  # b broke
    assert not is_success(transitions({"a": F, "b": F}, {"a": P, "b": F}))  # b still fails
    assert not is_success(transitions({"a": F, "b": P}, {"a": P}))  # b went missing
    assert is_success(transitions({"a": F, "b": S}, {"a": P, "b": S}))  # skipped is not failing
    assert not is_success({})


def test_selected_tests_limit_the_grading() -> None:
    graded = transitions({"a": F, "b": P}, {"a": P, "b": F}, tests=["a"])
    assert list(graded) == ["a"]
    assert is_success(graded)


DIFF = """\
--- a/pkg/mod.py
+++ b/pkg/mod.py
@@ -1,6 +1,7 @@
 def f(x):
-    if x:
-        return 1
+    if x > 0:
+        return (1 +
+                0)
     return 2
 
 
@@ -10,3 +11,2 @@ def g():
     a = 1
-    b = 2
     return a
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-old
+new
"""

OLD = (
    b"def f(x):\n    if x:\n        return 1\n    return 2\n\n\n"
    b"# pad\n# pad\ndef g():\n    a = 1\n    b = 2\n    return a\n"
)
NEW = (
    b"def f(x):\n    if x > 0:\n        return (1 +\n                0)\n    return 2\n\n\n"
    b"# pad\n# pad\n# pad\ndef g():\n    a = 1\n    return a\n"
)


def test_changed_lines_of_python_files_only() -> None:
    changes = changed_lines(Patch(DIFF))
    assert list(changes) == ["pkg/mod.py"]
    assert changes["pkg/mod.py"].removed == {2, 3, 11}
    assert changes["pkg/mod.py"].added == {2, 3, 4}


def test_executable_lines_map_continuations_to_their_statement() -> None:
    mapping = executable_lines(NEW)
    assert mapping is not None
    assert mapping[3] == 3 and mapping[4] == 3  # the two lines of one return statement
    assert 8 not in mapping  # a comment
    assert executable_lines(b"def broken(:\n") is None


def test_change_coverage_by_hand() -> None:
    changes = {
        "pkg/mod.py": ChangedLines(
            "pkg/mod.py", frozenset({2, 3, 11}), frozenset({2, 3, 4}), "pkg/mod.py"
        )
    }
    # Before the fix the tests ran f with a falsy x: line 2 ran, line 3 did not; g never ran.
    before = {
        "pkg/mod.py": FileCoverage(frozenset({1, 2, 3, 4, 9, 10, 11, 12}), frozenset({1, 2, 4, 9}))
    }
    # After the fix they ran f with x > 0: lines 2 and 3 (and so its continuation 4) ran.
    after = {"pkg/mod.py": FileCoverage(frozenset({1, 2, 3, 5, 11, 12, 13}), frozenset({1, 2, 3}))}
    cc = change_coverage(changes, {"pkg/mod.py": OLD}, {"pkg/mod.py": NEW}, before, after)
    [file] = cc.files
    assert file.executable_removed == {2, 3, 11}
    assert file.covered_removed == {2}
    assert file.executable_added == {2, 3, 4}
    assert file.covered_added == {2, 3, 4}
    assert (cc.covered, cc.executable) == (4, 6)
    assert cc.ratio == 4 / 6
    assert file.uncovered == ["-3", "-11"]


def test_change_coverage_with_reference_executable_lines() -> None:
    changes = {
        "pkg/mod.py": ChangedLines(
            "pkg/mod.py", frozenset({2, 3, 11}), frozenset({2, 3, 4}), "pkg/mod.py"
        )
    }
    cc = change_coverage(
        changes,
        {"pkg/mod.py": OLD},
        {"pkg/mod.py": NEW},
        None,
        None,
        executable_before={"pkg/mod.py": frozenset({2})},
        executable_after={"pkg/mod.py": frozenset()},
    )
    assert (cc.covered, cc.executable) == (0, 1)


def test_no_executable_change_gives_none() -> None:
    changes = {"doc.py": ChangedLines("doc.py", frozenset(), frozenset({1}), "doc.py")}
    cc = change_coverage(changes, {}, {"doc.py": b"# only a comment\n"}, None, None)
    assert cc.ratio is None


def _run(outcomes: dict[str, Outcome], applied: bool = True, error: str | None = None) -> TestRun:
    return TestRun(outcomes=outcomes, patches_applied=applied, error=error)


def test_grade_statuses() -> None:
    fix = Patch(DIFF)
    ok = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "base", None)
    assert (ok.status, ok.success) == ("verified", True)
    assert ok.to_json()["transitions"] == {"t::a": "F->P"}
    bad = grade(
        _run({"t::a": F, "t::b": P}), _run({"t::a": P, "t::b": F}), fix, {}, {}, "base", None
    )
    assert (bad.status, bad.success) == ("not_verified", False)
    unapplied = grade(_run({}, applied=False), _run({"t::a": P}), fix, {}, {}, "base", None)
    assert (unapplied.status, unapplied.success) == ("inconclusive", False)
    died = grade(
        _run({"t::a": F}), _run({}, error="the sandbox returned no result"), fix, {}, {}, "b", None
    )
    assert died.status == "inconclusive"
    assert any("no result" in r for r in died.reasons)


def test_changed_lines_are_located_where_the_patch_applied() -> None:
    # The hunk header says line 2; the file has grown three lines above it since the patch was
    # written, so it applied at an offset, and the change is at line 5.
    headed = ChangedLines("m.py", frozenset({2}), frozenset({2}), "m.py")
    old = b"import os\nimport sys\nimport re\ndef f():\n    return 1\n"
    new = b"import os\nimport sys\nimport re\ndef f():\n    return 2\n"
    applied = as_applied(headed, old, new)
    assert (applied.removed, applied.added) == (frozenset({5}), frozenset({5}))
    # The tests imported the module and never called f: the header's line 2 ran, line 5 not.
    ran = {"m.py": FileCoverage(frozenset({1, 2, 3, 4, 5}), frozenset({1, 2, 3, 4}))}
    cc = change_coverage({"m.py": headed}, {"m.py": old}, {"m.py": new}, ran, ran)
    assert (cc.covered, cc.executable) == (0, 2)
    # An added file has no old text: its header numbers stand.
    assert as_applied(headed, None, new) == headed


def test_broken_tests_are_those_passing_before_and_failing_after() -> None:
    before = {"m.py::ok": P, "m.py::broke": P, "m.py::erred": P, "m.py::old": F, "m.py::gone": P}
    after = {"m.py::ok": P, "m.py::broke": F, "m.py::erred": E, "m.py::old": F, "m.py": E}
    # Failing on both sides says nothing of the fix; removed by it is not broken by it.
    assert {k: t.kind for k, t in broken_tests(before, after).items()} == {
        "m.py::broke": "P->F",
        "m.py::erred": "P->E",
    }


def test_a_module_that_no_longer_collects_breaks_every_test_that_passed_in_it() -> None:
    before = {"m.py::a": P, "m.py::b": P, "m.py::c": F, "n.py::d": P, "o.py::e": P}
    # m.py errors as a whole and none of its tests ran; n.py's test was removed; o.py's ran.
    after = {"m.py": E, "o.py::e": P, "o.py": E}
    assert {k: t.kind for k, t in broken_tests(before, after).items()} == {
        "m.py::a": "P->E",
        "m.py::b": "P->E",
    }


def test_a_guard_test_broken_by_the_fix_overrides_the_reproducing_tests() -> None:
    fix = Patch(DIFF)
    kept = GuardRuns(("g.py",), _run({"g.py::x": P, "g.py::y": F}), _run({"g.py::x": P}))
    assert (
        grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, guard=kept).status
        == "verified"
    )
    assert grade(
        _run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, guard=kept
    ).guard_modules == ("g.py",)
    broke = GuardRuns(("g.py",), _run({"g.py::x": P}), _run({"g.py::x": F}))
    verdict = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, guard=broke)
    assert (verdict.status, verdict.success) == ("not_verified", False)
    assert verdict.to_json()["transitions"] == {"g.py::x": "P->F", "t::a": "F->P"}
    assert verdict.reasons == (
        "1 existing test(s) of g.py pass before this change and fail with it",
    )
    # A guard that cannot run (killed, timed out, erred) shows nothing: never verified.
    died = GuardRuns(("g.py",), _run({"g.py::x": P}), _run({}, error="limits hit"))
    unrun = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, guard=died)
    assert (unrun.status, unrun.success) == ("needs_review", False)
    assert unrun.review == (
        "the existing tests of g.py could not be run (after it: limits hit): nothing shows the "
        "change keeps them passing",
    )
    # A fix that is already not verified is not judged again by the guard.
    assert (
        grade(_run({"t::a": F}), _run({"t::a": F}), fix, {}, {}, "b", None, guard=broke).reasons
        == ()
    )


def test_a_success_that_removes_a_passing_guard_test_needs_review() -> None:
    fix = Patch(DIFF)
    # The fix deletes g.py::y, which passed: a removed test cannot fail.
    gone = GuardRuns(("g.py",), _run({"g.py::x": P, "g.py::y": P}), _run({"g.py::x": P}))
    verdict = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, guard=gone)
    assert (verdict.status, verdict.success) == ("needs_review", False)
    assert verdict.review == (
        "it removes 1 existing test(s) of g.py that pass before it (e.g. g.py::y): a removed "
        "test cannot fail, so a maintainer must confirm it should go",
    )
    assert verdict.reasons == tuple(
        f"the change needs a maintainer's review: {c}" for c in verdict.review
    )


def test_review_reasons_turn_a_success_into_needs_review_and_nothing_else() -> None:
    fix = Patch(DIFF)
    why = ("it also edits tests/t.py, which holds the reproducing tests",)
    passing = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None, review=why)
    assert passing.status == "needs_review" and passing.review == why
    failing = grade(_run({"t::a": F}), _run({"t::a": F}), fix, {}, {}, "b", None, review=why)
    assert failing.status == "not_verified"


def test_a_run_that_loses_its_coverage_on_one_side_only_needs_review() -> None:
    # The process with the change left before coverage.py saved (an exec, ``os._exit``): which
    # of its lines ran is unknown, whatever its tests say.
    fix = Patch(DIFF)
    measured = {"a.py": FileCoverage(statements=frozenset({1}), executed=frozenset({1}))}
    before = TestRun(outcomes={"t::a": F}, patches_applied=True, coverage=measured)
    lost = TestRun(outcomes={"t::a": P}, patches_applied=True, coverage=None)
    verdict = grade(before, lost, fix, {}, {}, "b", None)
    assert verdict.status == "needs_review" and not verdict.success
    assert "the test run with the change did not save what it ran" in verdict.review[0]
    # Neither side measured (a project where coverage cannot run): nothing to tell apart.
    neither = grade(_run({"t::a": F}), _run({"t::a": P}), fix, {}, {}, "b", None)
    assert neither.status == "verified"
