"""One repository's results as a row, and the rule that says whether its suite works."""

from __future__ import annotations

import pytest

from reprobot.bench.repos.row import (
    Build,
    Row,
    build_cause,
    failed_row,
    judge,
    make_row,
    missing_module,
)
from reprobot.bench.repos.selection import Selection
from reprobot.validation import Detection, EnvSpec, Outcome, TestRun

SHA = "0123456789abcdef0123456789abcdef01234567"
DETECTED = Detection(
    EnvSpec(
        python="3.11",
        install="python -m pip install -e '.[test]'",
        test_requirements=("hypothesis",),
        test_cmd="pytest",
    ),
    {"python": "requires-python >=3.9", "install": "pyproject.toml extra test"},
)
BUILT = Build(
    ok=True,
    image="reprobot/env-o-r:abc",
    build_s=42.0,
    wall_s=43.5,
    built_now=True,
    size_mb=612.3,
    added_mb=80.1,
)
WHOLE = Selection((), 3, 200)
MISSING_YAML = (
    "collection failure\nImportError while importing test module '/work/repo/tests/test_cfg.py'.\n"
    "tests/test_cfg.py:1: in <module>\n    import yaml\nE   ModuleNotFoundError: No module named "
    "'yaml'"
)


def _passing(n: int, prefix: str = "tests/test_a.py::test_") -> dict[str, Outcome]:
    return {f"{prefix}{k}": Outcome.PASSED for k in range(n)}


def _row(outcomes: dict[str, Outcome], **run: object) -> Row:
    return make_row("o/r", SHA, DETECTED, BUILT, WHOLE, TestRun(outcomes=outcomes, **run))  # type: ignore[arg-type]


def test_a_clean_suite_works_and_the_row_says_what_decided_it() -> None:
    outcomes = {
        **_passing(10),
        "tests/test_b.py::test_skip": Outcome.SKIPPED,
        "tests/test_b.py::test_known": Outcome.XFAILED,
    }
    row = _row(outcomes, duration_s=3.25)
    assert row.works
    assert row.why_not == ()
    assert (row.collected, row.passed, row.failed, row.errored, row.skipped, row.xfailed) == (
        12,
        10,
        0,
        0,
        1,
        1,
    )
    assert row.sources == DETECTED.sources
    assert (row.python, row.install, row.test_cmd) == ("3.11", DETECTED.spec.install, "pytest")
    assert row.test_requirements == ("hypothesis",)
    assert (row.build_s, row.built_now, row.size_mb, row.added_mb) == (42.0, True, 612.3, 80.1)
    assert row.selection == "whole suite"
    assert row.selected_files == 3
    assert row.run_s == 3.2


def test_two_percent_of_failures_is_the_bound() -> None:
    at_bound = {
        **_passing(98),
        "tests/test_b.py::test_x": Outcome.FAILED,
        "tests/test_b.py::test_y": Outcome.ERROR,
    }
    assert _row(at_bound).works
    past = {**at_bound, "tests/test_b.py::test_z": Outcome.MISSING}
    row = _row(past)
    assert not row.works
    assert (row.failed, row.errored) == (1, 2)  # a test never reported counts as an error
    assert row.why_not == ("3 of 101 tests failed or errored (> 2%)",)


def test_a_module_missing_a_dependency_means_it_does_not_work() -> None:
    outcomes = {**_passing(200), "tests/test_cfg.py": Outcome.ERROR}
    row = _row(outcomes, failures={"tests/test_cfg.py": MISSING_YAML})
    assert row.collected == 200  # the module's own error is not a test
    assert row.collection_errors == ("tests/test_cfg.py",)
    assert row.missing_modules == ("yaml",)
    assert row.missing_module
    assert not row.works
    assert row.why_not == ("a module does not collect: missing yaml",)


def test_a_collection_error_of_another_kind_is_listed_but_does_not_decide() -> None:
    outcomes = {**_passing(50), "tests/test_bad.py": Outcome.ERROR}
    row = _row(outcomes, failures={"tests/test_bad.py": "E   SyntaxError: invalid syntax"})
    assert row.collection_errors == ("tests/test_bad.py",)
    assert not row.missing_module
    assert row.works


def test_no_test_collected_or_a_run_that_did_not_finish_does_not_work() -> None:
    assert _row({}).why_not == ("no test collected",)
    stopped = _row(_passing(5), limits_hit=frozenset({"timeout"}), duration_s=880.0)
    assert stopped.limits_hit == ("timeout",)
    assert stopped.why_not == ("the run did not finish: stopped at the time limit after 880 s",)
    broken = _row({}, error="pytest was killed by the memory limit")
    assert broken.run_error == "pytest was killed by the memory limit"
    assert not broken.works


def test_a_failed_build_is_a_row_with_its_cause() -> None:
    message = (
        "building reprobot/env-o-r:0a1b2c failed: the install command failed (exit 1):\n"
        "  ERROR: No matching distribution for nope (build log: /c/logs/env-0a1b2c.log)"
    )
    build = Build(ok=False, cause=build_cause(message), wall_s=12.0)
    row = make_row("o/r", SHA, DETECTED, build)
    assert row.build_cause == (
        "failed: the install command failed (exit 1): ERROR: No matching distribution for nope"
    )
    assert not row.works
    assert row.why_not == ("the environment did not build",)
    assert row.python == "3.11"
    assert row.collected == 0


def test_a_step_before_the_build_that_failed_is_a_row() -> None:
    row = failed_row("o/r", "HEAD", "no clone of o/r under /repos\n(looked for o+r)")
    assert row.failure == "no clone of o/r under /repos (looked for o+r)"
    assert not row.works and not row.build_ok
    assert row.why_not == (row.failure,)
    detected = failed_row("o/r", SHA, "x", DETECTED)
    assert detected.sources == DETECTED.sources


def test_a_row_survives_its_json() -> None:
    row = _row(
        {**_passing(3), "tests/test_cfg.py": Outcome.ERROR},
        failures={"tests/test_cfg.py": MISSING_YAML},
    )
    again = Row.model_validate({**row.model_dump(mode="json"), "fingerprint": "f", "unit_s": 1})
    assert again == row


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (MISSING_YAML, "yaml"),
        ("ImportError: cannot import name 'Thing' from 'pkg.mod' (/x.py)", "pkg.mod"),
        ("ImportError: libfoo.so.1: cannot open shared object file", ""),
        ("E   SyntaxError: invalid syntax", None),
        ("fixture 'tmp_path' not found", None),
    ],
)
def test_missing_module(text: str, expected: str | None) -> None:
    assert missing_module(text) == expected


def test_an_import_failure_naming_no_module_names_its_test_module() -> None:
    outcomes = {**_passing(3), "tests/test_ext.py": Outcome.ERROR}
    failures = {"tests/test_ext.py": "ImportError: libfoo.so.1: cannot open shared object file"}
    assert _row(outcomes, failures=failures).missing_modules == ("tests/test_ext.py",)


def test_judge_gives_every_reason() -> None:
    works, why = judge(True, 10, 5, ("yaml", ""), "pytest wrote no report")
    assert not works
    assert why == (
        "the run did not finish: pytest wrote no report",
        "a module does not collect: missing yaml",
        "5 of 10 tests failed or errored (> 2%)",
    )


def test_a_row_with_errored_tests_is_no_unit_that_failed() -> None:
    # The benchmark's executor reads a result's "error" as a unit that did not finish.
    row = _row({"t.py::a": Outcome.ERROR, "t.py::b": Outcome.PASSED})
    assert row.errored == 1
    assert "error" not in row.model_dump()
