"""The fix filter's pure parts: candidates, plans, calibration and calls (no Docker); and
``Patch.without_files``, checked with ``git apply`` on real repositories in tmp_path."""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import pytest

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.pod.judge import (
    Call,
    CandidateFix,
    TestPlan,
    calibrate,
    graded_ids,
    judge,
    load_candidates,
    predicted_plan,
)
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.sandbox_runs import run_summary
from reprobot.validation.results.testrun import Outcome, TestRun
from reprobot.validation.source.patch import Patch
from tests.support.repos import commit_files, git, make_repo

# --- candidates ---------------------------------------------------------------------------------


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


def test_load_candidates(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "candidates.jsonl",
        [
            {
                "instance_id": "acme__w-1",
                "system": "agent",
                "model_name_or_path": "gpt",
                "model_patch": "diff",
                "resolved": True,
            },
            "",  # a blank line is skipped but still numbered
            {"instance_id": "acme__w-1", "model_name_or_path": "claude", "resolved": False},
            {"instance_id": 7, "model_patch": None, "resolved": False},
        ],
    )
    got = load_candidates(path)
    assert got == [
        CandidateFix("acme__w-1", "agent", "gpt", "diff", True, 1),
        # No system: the model names it; no patch: empty.
        CandidateFix("acme__w-1", "claude", "claude", "", False, 3),
        # Neither: "?" and "", and the id is made a string.
        CandidateFix("7", "?", "", "", False, 4),
    ]


@pytest.mark.parametrize("value", ["true", 1, None, 0])
def test_load_candidates_rejects_a_resolved_that_is_not_a_bool(tmp_path: Path, value: Any) -> None:
    path = write_lines(
        tmp_path / "c.jsonl",
        [
            {"instance_id": "a", "resolved": True},
            {"instance_id": "b", "resolved": value},
        ],
    )
    with pytest.raises(DatasetError, match=r"c\.jsonl:2: 'resolved' must be true or false"):
        load_candidates(path)


def test_load_candidates_rejects_a_line_without_instance_id(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [{"system": "s", "resolved": True}])
    with pytest.raises(DatasetError, match=r"c\.jsonl:1: a candidate lacks 'instance_id'"):
        load_candidates(path)


def test_load_candidates_rejects_a_line_without_resolved(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [{"instance_id": "a"}])
    with pytest.raises(DatasetError, match="lacks 'resolved'"):
        load_candidates(path)


def test_load_candidates_rejects_a_line_that_is_not_json(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", [{"instance_id": "a", "resolved": True}, "{oops"])
    with pytest.raises(DatasetError, match=r"c\.jsonl:2: not JSON"):
        load_candidates(path)


def test_load_candidates_rejects_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "c.jsonl", ["[1, 2]"])
    with pytest.raises(DatasetError):
        load_candidates(path)


def test_candidate_keys_are_file_names_and_keep_equal_patches_apart(tmp_path: Path) -> None:
    record = {
        "instance_id": "acme/w #1",
        "system": "SWE agent + GPT-4 (2024/05)",
        "model_patch": "same",
        "resolved": False,
    }
    first, second = load_candidates(write_lines(tmp_path / "c.jsonl", [record, record]))
    assert first.patch == second.patch
    assert first.key != second.key
    for key in (first.key, second.key):
        assert re.fullmatch(r"[A-Za-z0-9._-]+", key)
        assert "/" not in key
    assert first.key == "acme_w_1--SWE_agent_GPT-4_2024_05_--1"
    # The bootstrap cluster is the system on the issue: the same for both.
    assert first.cluster == second.cluster == "SWE agent + GPT-4 (2024/05)|acme/w #1"


# --- plans and calibration ----------------------------------------------------------------------

PLAN_DIFF = """\
diff --git a/pkg/tests/test_widgets.py b/pkg/tests/test_widgets.py
--- a/pkg/tests/test_widgets.py
+++ b/pkg/tests/test_widgets.py
@@ -1,2 +1,4 @@
 def test_old():
     pass
+def test_new():
+    assert 0
diff --git a/pkg/tests/conftest.py b/pkg/tests/conftest.py
--- a/pkg/tests/conftest.py
+++ b/pkg/tests/conftest.py
@@ -1 +1 @@
-X = 1
+X = 2
diff --git a/pkg/widgets.py b/pkg/widgets.py
--- a/pkg/widgets.py
+++ b/pkg/widgets.py
@@ -1 +1 @@
-Y = 1
+Y = 2
diff --git a/testing/helpers.py b/testing/helpers.py
new file mode 100644
--- /dev/null
+++ b/testing/helpers.py
@@ -0,0 +1 @@
+Z = 3
diff --git a/README.md b/README.md
--- a/README.md
+++ b/README.md
@@ -1 +1 @@
-a
+b
"""


def test_tests_plan_selects_the_test_modules_of_the_diff() -> None:
    plan = predicted_plan(PLAN_DIFF)
    # conftest.py, a non-test module outside test folders and a non-Python file are left out;
    # a module in a test folder (testing/) counts.
    assert plan.selection == ("pkg/tests/test_widgets.py", "testing/helpers.py")
    assert plan.tests == Patch(PLAN_DIFF, name="tests.diff")
    assert plan.mapping is None
    assert plan.expected is None


def test_tests_plan_falls_back_to_the_python_files_of_the_diff() -> None:
    diff = """\
diff --git a/repro.py b/repro.py
new file mode 100644
--- /dev/null
+++ b/repro.py
@@ -0,0 +1 @@
+assert False
"""
    assert predicted_plan(diff).selection == ("repro.py",)
    assert predicted_plan("not a diff").selection == ()


def test_plan_outcomes() -> None:
    plan = predicted_plan(PLAN_DIFF)
    run = TestRun(
        outcomes={"a.py::t": Outcome.FAILED, "a.py": Outcome.ERROR, "b.py::u": Outcome.PASSED}
    )
    # Without a mapping, every node id the run reports (a bare file's collection error is not one).
    assert plan.outcomes(run) == {"a.py::t": "failed", "b.py::u": "passed"}


def plan_expecting(expected: dict[str, str] | None) -> TestPlan:
    return TestPlan(Patch("", name="test.diff"), (), None, expected)


def test_calibrate_every_reason() -> None:
    plan = plan_expecting(
        {
            "fp_ok": "F->P",
            "fp_missing_on_r": "F->P",  # missing on R fails in the harness's sense: fine
            "fp_passes_on_r": "F->P",
            "fp_skipped_on_r": "F->P",  # skipped is not a fail
            "fp_fails_with_fix": "F->P",
            "fp_absent_with_fix": "F->P",
            "pp_ok": "P->P",
            "pp_fails_on_r": "P->P",
            "pp_errors_with_fix": "P->P",
            "not_run": "F->P",  # not in the reference run: not judged here
        }
    )
    before = {
        "fp_ok": "failed",
        "fp_missing_on_r": "missing",
        "fp_passes_on_r": "passed",
        "fp_skipped_on_r": "skipped",
        "fp_fails_with_fix": "error",
        "fp_absent_with_fix": "failed",
        "pp_ok": "passed",
        "pp_fails_on_r": "failed",
        "pp_errors_with_fix": "passed",
    }
    golden = {
        "fp_ok": "passed",
        "fp_missing_on_r": "passed",
        "fp_passes_on_r": "passed",
        "fp_skipped_on_r": "passed",
        "fp_fails_with_fix": "failed",
        "pp_ok": "passed",
        "pp_fails_on_r": "passed",
        "pp_errors_with_fix": "error",
    }
    assert calibrate(plan, before, golden) == {
        "fp_passes_on_r": "does not fail on R here (passed)",
        "fp_skipped_on_r": "does not fail on R here (skipped)",
        "fp_fails_with_fix": "does not pass with the golden fix here (failed)",
        "fp_absent_with_fix": "does not pass with the golden fix here (missing)",
        "pp_fails_on_r": "does not pass on R here (failed)",
        "pp_errors_with_fix": "does not pass with the golden fix here (error)",
    }


def test_calibrate_without_expectations_drops_nothing() -> None:
    assert calibrate(plan_expecting(None), {"t": "passed"}, {"t": "failed"}) == {}


# --- calls --------------------------------------------------------------------------------------


def ran(
    candidate: bool = True, tests: bool = True, guard_after: dict[str, str] | None = None
) -> CandidateResult:
    """A candidate's result: whether its patch and the tests applied, and its guard's outcomes
    (what ``judge`` reads of it)."""
    return CandidateResult(
        "acme__w-1",
        "agent",
        False,
        candidate,
        tests,
        {},
        run_summary(TestRun(outcomes={})),
        guard_after=guard_after,
    )


APPLIED = ran()


def test_judge_a_candidate_that_does_not_apply() -> None:
    result = ran(candidate=False)
    assert judge({"t": "failed"}, {"t": "passed"}, None, result) == Call(
        False, "the candidate does not apply", {}
    )
    # Neither applied: the candidate is what did not.
    assert judge({}, {}, None, ran(False, False)).reason == "the candidate does not apply"


def test_judge_tests_that_do_not_apply() -> None:
    result = ran(tests=False)
    assert judge({"t": "failed"}, {"t": "passed"}, None, result) == Call(
        False, "the tests do not apply on top of the candidate", {}
    )


def test_judge_verified() -> None:
    before = {"t::a": "failed", "t::b": "passed"}
    after = {"t::a": "passed", "t::b": "passed"}
    assert judge(before, after, ["t::a", "t::b"], APPLIED) == Call(
        True, "verified", {"t::a": "F->P", "t::b": "P->P"}
    )


def test_judge_calls_correct_only_when_a_test_checks_a_result() -> None:
    before = {"t::a[1]": "failed", "t::b": "failed"}
    after = {"t::a[1]": "passed", "t::b": "passed"}
    weak = judge(before, after, None, APPLIED, {"t::a": "weak", "t::b": "weak"})
    assert not weak.correct
    assert weak.reason == "the tests that go F->P only check that the reported wrong value is gone"
    crash = judge(before, after, None, APPLIED, {"t::a": "crash", "t::b": "crash"})
    assert not crash.correct
    assert crash.reason == (
        "the tests that go F->P only check that the reported error no longer occurs"
    )
    mixed = judge(before, after, None, APPLIED, {"t::a": "crash", "t::b": "weak"})
    assert not mixed.correct and mixed.reason.endswith("the reported error or wrong value is gone")
    # Such a candidate is graded weak: a maintainer opens it before the ones nothing went F->P on.
    assert weak.weak and crash.weak and mixed.weak
    nothing = judge(before, before, None, APPLIED, {"t::a": "crash", "t::b": "weak"})
    assert not nothing.correct and not nothing.weak
    assert judge(before, after, None, APPLIED, {"t::a": "weak", "t::b": "expected"}).correct
    assert judge(before, after, None, APPLIED, {"t::a": "crash", "t::b": "expected"}).correct
    assert judge(before, after, None, APPLIED, {"t::a": "crash"}).correct  # b: unknown


def test_judge_rejects_a_candidate_that_breaks_a_guard_test() -> None:
    before, after = {"t::a": "failed"}, {"t::a": "passed"}
    guard_r = {"g.py::x": "passed", "g.py::y": "failed", "g.py::z": "passed"}
    kept = ran(guard_after={"g.py::x": "passed", "g.py::y": "failed", "g.py::z": "passed"})
    assert judge(before, after, None, kept, None, guard_r) == Call(
        True, "verified", {"t::a": "F->P"}
    )
    # A candidate that removes a guard test that passed is not called correct unseen, as the
    # App would not verify it.
    removed = ran(guard_after={"g.py::x": "passed", "g.py::y": "failed"})
    call = judge(before, after, None, removed, None, guard_r)
    assert not call.correct
    assert call.reason.startswith("needs review: it removes 1 existing test(s)")
    broke = ran(guard_after={"g.py::x": "failed", "g.py::z": "error"})
    assert judge(before, after, None, broke, None, guard_r) == Call(
        False,
        "2 existing test(s) that pass on R fail with it: g.py::x, g.py::z",
        {"t::a": "F->P", "g.py::x": "P->F", "g.py::z": "P->E"},
    )
    # Without the guard's run on R (it could not run), the candidate is judged without it.
    assert judge(before, after, None, broke).correct


def test_predicted_plan_guards_with_the_test_modules_of_the_candidates_files() -> None:
    files = ["pkg/widgets.py", "pkg/tests/test_widgets.py", "pkg/gears.py", "tests/test_gears.py"]
    candidates = [
        "--- a/pkg/gears.py\n+++ b/pkg/gears.py\n@@ -1 +1 @@\n-a\n+b\n",
        "--- a/pkg/gears.py\n+++ b/pkg/gears.py\n@@ -1 +1 @@\n-a\n+c\n",
    ]
    plan = predicted_plan(PLAN_DIFF, files, candidates)
    # pkg/tests/test_widgets.py is the predicted tests' own module, not a guard.
    assert plan.guard == ("tests/test_gears.py",)
    assert predicted_plan(PLAN_DIFF).guard == ()


def test_judge_names_the_failing_graded_tests() -> None:
    before = {"t::a": "failed", "t::b": "passed"}
    after = {"t::a": "passed", "t::b": "failed"}
    call = judge(before, after, ["t::a", "t::b"], APPLIED)
    assert not call.correct
    assert call.reason == "1 test(s) fail with it: t::b"
    assert call.transitions == {"t::a": "F->P", "t::b": "P->F"}


def test_judge_lists_at_most_three_failing_tests() -> None:
    after = {f"t::{c}": "failed" for c in "edcba"}
    call = judge({}, after, None, APPLIED)
    assert call.reason == "5 test(s) fail with it: t::a, t::b, t::c"


def test_judge_ignores_a_failing_test_that_is_not_graded() -> None:
    before = {"t::a": "failed", "t::flaky": "passed"}
    after = {"t::a": "passed", "t::flaky": "failed"}
    assert judge(before, after, ["t::a"], APPLIED) == Call(True, "verified", {"t::a": "F->P"})


def test_judge_without_fail_to_pass() -> None:
    before = {"t::a": "passed"}
    after = {"t::a": "passed"}
    assert judge(before, after, None, APPLIED) == Call(
        False, "no test goes from failing to passing", {"t::a": "P->P"}
    )


def test_judge_with_graded_none_uses_every_test_of_either_run() -> None:
    # t::new exists only after (missing before: E->P); t::gone only before (P->E: fails after).
    before = {"t::a": "failed", "t::gone": "passed"}
    after = {"t::a": "passed", "t::new": "passed"}
    call = judge(before, after, None, APPLIED)
    assert call.transitions == {"t::a": "F->P", "t::gone": "P->E", "t::new": "E->P"}
    assert call.reason == "1 test(s) fail with it: t::gone"
    # Without t::gone, both tests go to passing: verified.
    del before["t::gone"]
    assert judge(before, after, None, APPLIED) == Call(
        True, "verified", {"t::a": "F->P", "t::new": "E->P"}
    )


def test_judge_with_no_test_at_all() -> None:
    expected = Call(False, "no test judges this instance", {})
    assert judge({}, {}, None, APPLIED) == expected
    assert judge({"t::a": "failed"}, {"t::a": "passed"}, [], APPLIED) == expected


def test_graded_ids() -> None:
    ref = ReferenceResult(
        "acme__w-1",
        before={"t::b": "failed", "t::a": "failed", "t::c": "passed"},
        runs={},
        dropped={"t::c": "does not pass with the golden fix here (failed)"},
    )
    assert graded_ids(ref, plan_is_gold=False) is None
    assert graded_ids(ref, plan_is_gold=True) == ["t::a", "t::b"]
    nothing_dropped = ReferenceResult("i", {"t::z": "failed", "t::y": "passed"}, {}, {})
    assert graded_ids(nothing_dropped, True) == ["t::y", "t::z"]


# --- Patch.without_files ------------------------------------------------------------------------

MOD_OLD = "def f():\n    return 1\n"
TEST_OLD = "def test_f():\n    pass\n"


def diff_since(repo: Path, first: str) -> Patch:
    """The diff from ``first`` to HEAD (binary changes included); the work tree goes back to
    ``first`` so that the diff applies to it."""
    diff = subprocess.run(
        ["git", "-C", str(repo), "diff", "--binary", first, "HEAD"],
        capture_output=True,
        check=True,
    ).stdout.decode("utf-8", "surrogateescape")
    git(repo, "checkout", "-q", first)
    return Patch(diff, name="candidate.diff")


def repo_and_change(
    tmp_path: Path, changes: dict[str, str], delete: tuple[str, ...] = ()
) -> tuple[Path, Patch]:
    """A repository at its first commit, and the diff of ``changes`` (and deletions) on it."""
    repo = make_repo(
        tmp_path / "repo",
        {"pkg/mod.py": MOD_OLD, "tests/test_mod.py": TEST_OLD, "notes.txt": "n\n"},
    )
    first = git(repo, "rev-parse", "HEAD")
    for path in delete:
        (repo / path).unlink()
    commit_files(repo, changes, "change")
    return repo, diff_since(repo, first)


def apply_check(repo: Path, patch: Patch) -> subprocess.CompletedProcess[bytes]:
    """``git apply --check`` of ``patch`` on the repository's work tree."""
    return subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"],
        input=patch.diff.encode("utf-8", "surrogateescape"),
        capture_output=True,
        check=False,
    )


def test_without_files_drops_only_the_named_file(tmp_path: Path) -> None:
    repo, patch = repo_and_change(
        tmp_path,
        {
            "pkg/mod.py": "def f():\n    return 2\n",
            "tests/test_mod.py": "def test_f():\n    assert 0\n",
            "pkg/new.py": "X = 1\n",
        },
    )
    assert set(patch.files) == {"pkg/mod.py", "tests/test_mod.py", "pkg/new.py"}
    assert apply_check(repo, patch).returncode == 0

    trimmed = patch.without_files(["tests/test_mod.py", "not/touched.py"])
    assert trimmed.name == "candidate.diff"
    assert trimmed.well_formed
    assert trimmed.files == tuple(f for f in patch.files if f != "tests/test_mod.py")
    assert "test_f" not in trimmed.diff
    assert "return 2" in trimmed.diff
    check = apply_check(repo, trimmed)
    assert check.returncode == 0, check.stderr


def test_without_files_returns_itself_when_nothing_is_dropped() -> None:
    patch = Patch(PLAN_DIFF, name="p.diff")
    assert patch.without_files(["elsewhere.py"]) is patch
    assert patch.without_files([]) is patch
    garbage = Patch("this is not a diff", name="g.diff")
    assert garbage.without_files(["pkg/widgets.py"]) is garbage


def test_without_files_keeps_deletions_and_new_files(tmp_path: Path) -> None:
    # notes.txt deleted, pkg/new.py added, tests/test_mod.py edited (then dropped).
    repo, patch = repo_and_change(
        tmp_path, {"pkg/new.py": "X = 1\n", "tests/test_mod.py": "#\n"}, delete=("notes.txt",)
    )
    assert set(patch.files) == {"notes.txt", "pkg/new.py", "tests/test_mod.py"}

    trimmed = patch.without_files(["tests/test_mod.py"])
    assert set(trimmed.files) == {"notes.txt", "pkg/new.py"}
    assert "deleted file mode" in trimmed.diff
    assert "new file mode" in trimmed.diff
    check = apply_check(repo, trimmed)
    assert check.returncode == 0, check.stderr


def test_without_every_file_is_an_empty_patch() -> None:
    diff = """\
diff --git a/tests/test_a.py b/tests/test_a.py
--- a/tests/test_a.py
+++ b/tests/test_a.py
@@ -1 +1 @@
-a = 1
+a = 2
"""
    trimmed = Patch(diff).without_files(["tests/test_a.py"])
    assert trimmed.diff == ""
    assert not trimmed.well_formed


def test_without_files_keeps_a_binary_change_of_another_file(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"tests/test_mod.py": TEST_OLD, "pkg/mod.py": MOD_OLD})
    (repo / "pkg" / "data.bin").write_bytes(b"\x00\x01\x02")
    first = commit_files(repo, {}, "binary file")
    (repo / "pkg" / "data.bin").write_bytes(b"\x00\x03\x04\x05")
    commit_files(repo, {"tests/test_mod.py": "#\n", "pkg/mod.py": "X = 1\n"}, "change")
    patch = diff_since(repo, first)
    assert apply_check(repo, patch).returncode == 0

    trimmed = patch.without_files(["tests/test_mod.py"])
    check = apply_check(repo, trimmed)
    assert check.returncode == 0, check.stderr
    assert "GIT binary patch" in trimmed.diff
