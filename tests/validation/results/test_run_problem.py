"""run_problem: a run that tells nothing about the tests says why in one line; a run whose tests
ran, whatever they did, has no problem."""

from __future__ import annotations

import pytest

from reprobot.validation.results.run_problem import (
    is_collection_error,
    missing_modules,
    run_problem,
)
from reprobot.validation.results.testrun import Outcome, TestRun

CMD = "python -m pytest"
NO_NUMPY = (
    "collection failure\nImportError while importing test module '/work/repo/tests/test_np.py'.\n"
    "tests/test_np.py:1: in <module>\n    import numpy\nE   ModuleNotFoundError: No module named "
    "'numpy'"
)
SYNTAX = "collection failure\nE     def test(:\nE             ^\nE   SyntaxError: invalid syntax"


@pytest.mark.parametrize(
    "outcomes",
    [
        {"t.py::a": Outcome.PASSED},
        {"t.py::a": Outcome.FAILED, "t.py::b": Outcome.ERROR},
        {"t.py::a": Outcome.SKIPPED},
        {"t.py::a": Outcome.XFAILED, "t.py::b": Outcome.MISSING},
        # A collection error reported as an outcome is one: the tree itself is broken.
        {"tests/test_syntax.py": Outcome.ERROR},
    ],
)
def test_tests_that_ran_whatever_they_did_are_no_problem(outcomes: dict[str, Outcome]) -> None:
    failures = {"tests/test_syntax.py": SYNTAX}
    assert run_problem(TestRun(outcomes=outcomes, failures=failures, pytest_exit=1), CMD) is None


def test_the_runs_own_error_is_its_problem() -> None:
    run = TestRun(outcomes={"t.py::a": Outcome.PASSED}, error="the tree requires lxml, which ...")
    assert run_problem(run, CMD) == "the tree requires lxml, which ..."


def test_no_test_collected_names_the_command() -> None:
    run = TestRun(outcomes={}, pytest_exit=5)
    assert run_problem(run, CMD) == "no test ran: `python -m pytest` collected no test (exit 5)"


def test_selected_tests_never_reported_are_named() -> None:
    run = TestRun(outcomes={f"t.py::t{i}": Outcome.MISSING for i in range(5)}, pytest_exit=4)
    assert run_problem(run, CMD) == (
        "no test ran: `python -m pytest` reported none of the selected tests "
        "(t.py::t0, t.py::t1, t.py::t2 and 2 more)"
    )


def test_a_run_stopped_at_its_deadline_says_so() -> None:
    run = TestRun(outcomes={"t.py::a": Outcome.MISSING}, limits_hit=frozenset({"timeout"}))
    assert run_problem(run, CMD) == (
        "no test ran: the run passed its time limit before any test was reported"
    )


def test_a_patch_that_does_not_apply_is_a_result_not_a_problem() -> None:
    assert run_problem(TestRun(outcomes={}, patches_applied=False), CMD) is None


def test_only_modules_missing_a_module_is_no_test_run_and_names_the_module() -> None:
    run = TestRun(
        outcomes={
            "tests/test_np.py": Outcome.ERROR,
            # Selected in that module: an error only because the module is.
            "tests/test_np.py::test_sum": Outcome.ERROR,
            "tests/test_syntax.py": Outcome.ERROR,
        },
        failures={"tests/test_np.py": NO_NUMPY, "tests/test_syntax.py": SYNTAX},
        pytest_exit=2,
    )
    assert missing_modules(run) == ["numpy"]
    assert run_problem(run, CMD) == (
        "no test ran: the tests cannot import numpy, which the environment does not have"
    )


def test_a_missing_module_beside_tests_that_ran_is_no_problem() -> None:
    run = TestRun(
        outcomes={"tests/test_np.py": Outcome.ERROR, "tests/test_ok.py::test": Outcome.PASSED},
        failures={"tests/test_np.py": NO_NUMPY},
        pytest_exit=2,
    )
    assert run_problem(run, CMD) is None


def test_a_test_that_fails_importing_a_module_ran() -> None:
    run = TestRun(
        outcomes={"tests/test_np.py::test": Outcome.FAILED},
        failures={"tests/test_np.py::test": "E   ModuleNotFoundError: No module named 'numpy'"},
        pytest_exit=1,
    )
    assert missing_modules(run) == []
    assert run_problem(run, CMD) is None


def test_collection_errors_are_modules_and_the_tests_selected_in_them() -> None:
    outcomes = {
        "m.py": Outcome.ERROR,
        "m.py::t": Outcome.ERROR,
        "n.py::t": Outcome.ERROR,
        "n.py::u": Outcome.PASSED,
    }
    assert [t for t in outcomes if is_collection_error(t, outcomes)] == ["m.py", "m.py::t"]
