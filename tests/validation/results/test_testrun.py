"""TestRun.to_json: the command line's JSON contract."""

from __future__ import annotations

import json

from reprobot.validation.results.testrun import FileCoverage, Outcome, PatchResult, TestRun

OUTCOMES = {
    "tests/test_b.py::test_gone": Outcome.MISSING,
    "tests/test_a.py::test_ok": Outcome.PASSED,
    "tests/test_a.py::test_bad": Outcome.FAILED,
    "tests/test_a.py::test_err": Outcome.ERROR,
    "tests/test_a.py::test_skip": Outcome.SKIPPED,
    "tests/test_c.py": Outcome.MISSING,
}


def test_missing_becomes_error_in_tests_and_is_listed() -> None:
    data = TestRun(outcomes=OUTCOMES).to_json()
    assert data["tests"] == {
        "tests/test_a.py::test_bad": "failed",
        "tests/test_a.py::test_err": "error",
        "tests/test_a.py::test_ok": "passed",
        "tests/test_a.py::test_skip": "skipped",
        "tests/test_b.py::test_gone": "error",
        "tests/test_c.py": "error",
    }
    assert data["missing"] == ["tests/test_b.py::test_gone", "tests/test_c.py"]


def test_tests_values_are_plain_strings_in_sorted_order() -> None:
    data = TestRun(outcomes=OUTCOMES).to_json()
    assert list(data["tests"]) == sorted(OUTCOMES)
    assert all(type(v) is str for v in data["tests"].values())
    assert set(data["tests"].values()) <= {"passed", "failed", "error", "skipped"}


def test_outcome_of_an_unlisted_test_is_missing() -> None:
    run = TestRun(outcomes={"a::b": Outcome.PASSED})
    assert run.outcome("a::b") is Outcome.PASSED
    assert run.outcome("a::c") is Outcome.MISSING
    assert Outcome.PASSED.is_pass
    assert not Outcome.MISSING.is_pass
    assert not Outcome.SKIPPED.is_pass


def test_patches_applied_and_patch_results_are_carried() -> None:
    run = TestRun(
        outcomes={},
        patches_applied=False,
        patches=(
            PatchResult(name="test.diff", applied=True, method="git apply", output="Applied"),
            PatchResult(name="fix.diff", applied=False, output="error: patch failed"),
        ),
    )
    data = run.to_json()
    assert data["patches_applied"] is False
    assert data["patches"] == [
        {"name": "test.diff", "applied": True, "method": "git apply", "output": "Applied"},
        {"name": "fix.diff", "applied": False, "method": None, "output": "error: patch failed"},
    ]
    assert TestRun(outcomes={}).to_json()["patches_applied"] is True


def test_full_document() -> None:
    run = TestRun(
        outcomes={"t.py::x": Outcome.FAILED},
        failures={"t.py::x": "assert 1 == 2"},
        install_ok=False,
        pytest_exit=1,
        log_excerpt="not in the contract",
        duration_s=1.23456,
        coverage={
            "src/m.py": FileCoverage(statements=frozenset({3, 1, 2}), executed=frozenset({2, 1})),
            "a.py": FileCoverage(statements=frozenset(), executed=frozenset()),
        },
        limits_hit=frozenset({"timeout", "output"}),
        selection_mode="files",
        error="boom",
        unmatched=("docs/x.rst::x.rst",),
    )
    assert run.to_json() == {
        "tests": {"t.py::x": "failed"},
        "missing": [],
        "unmatched": ["docs/x.rst::x.rst"],
        "patches_applied": True,
        "patches": [],
        "install_ok": False,
        "pytest_exit": 1,
        "duration_s": 1.235,
        "limits_hit": ["output", "timeout"],
        "selection_mode": "files",
        "failures": {"t.py::x": "assert 1 == 2"},
        "error": "boom",
        "coverage": {
            "a.py": {"statements": [], "executed": []},
            "src/m.py": {"statements": [1, 2, 3], "executed": [1, 2]},
        },
    }


def test_defaults_and_no_coverage() -> None:
    data = TestRun(outcomes={}).to_json()
    assert data["coverage"] is None
    assert data["tests"] == {}
    assert data["missing"] == []
    assert data["pytest_exit"] is None
    assert data["error"] is None
    assert data["selection_mode"] == "ids"
    assert data["limits_hit"] == []


def test_document_is_json_serialisable() -> None:
    run = TestRun(
        outcomes=OUTCOMES,
        coverage={"m.py": FileCoverage(frozenset({1}), frozenset({1}))},
        limits_hit=frozenset({"memory"}),
        patches=(PatchResult(name="p", applied=True),),
    )
    text = json.dumps(run.to_json(), sort_keys=True)
    assert json.loads(text) == run.to_json()
