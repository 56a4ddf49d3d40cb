"""What comes back from a sandbox is read defensively: every malformed, oversized, missing or
inconsistent part is an error of the run with its cause, never an exception of the host."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator
from typing import Any

import pytest

from reprobot.validation.results.coverage_report import CoverageDataError, parse_coverage_json
from reprobot.validation.results.junit import JUnitError, node_id, parse_junit
from reprobot.validation.results.sandbox_result import (
    announced_sandbox,
    read_result,
    uncollected,
)
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import exit_disagrees, to_testrun
from reprobot.validation.sandbox.container import ContainerResult

TEST = "tests/test_a.py::test_a"
FILES = ["tests/test_a.py", "pkg/__init__.py"]
JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest">'
    '<testcase classname="tests.test_a" name="test_a" file="tests/test_a.py">'
    '<failure message="boom">trace</failure></testcase></testsuite></testsuites>'
)


def status(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "runner": 2,
        "sandbox": "0123456789ab",
        "ran": True,
        "patches": [],
        "patches_applied": True,
        "install": {"ok": True, "mode": "image"},
        "pytest_exit": 1,
        "collected": [TEST],
        "oom_kills": 0,
    }
    base.update(changes)
    return base


def archive(files: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for name, data in files.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def came_back(
    files: dict[str, bytes] | None = None, stderr: bytes = b"", **container: Any
) -> ContainerResult:
    fields: dict[str, Any] = {"exit_code": 0, "duration_s": 1.0}
    fields.update(container)
    stdout = archive(files) if files is not None else b""
    return ContainerResult(stdout=stdout, stderr=stderr, **fields)


def run_of(result: ContainerResult) -> Any:
    return to_testrun(result, read_result(result.stdout), FILES, [TEST])


def test_a_good_result_gives_the_outcomes_and_names_its_sandbox() -> None:
    files = {"status.json": json.dumps(status()).encode(), "junit.xml": JUNIT.encode()}
    run = run_of(came_back(files))
    assert run.error is None
    assert run.outcomes == {TEST: Outcome.FAILED}
    assert run.failures[TEST] == "boom\ntrace"
    assert run.sandbox_id == "0123456789ab"


@pytest.mark.parametrize(
    ("files", "problem"),
    [
        ({"status.json": b"[]"}, "the result's status is not an object"),
        ({"status.json": b"{not json"}, "the result's status is not JSON"),
        ({"status.json": json.dumps(status(ran="yes")).encode()}, "has the wrong shape (ran:"),
        ({"status.json": json.dumps(status(patches=[{}])).encode()}, "has the wrong shape"),
        ({"status.json": json.dumps(status(runner=1)).encode()}, "comes from runner 1"),
        ({"junit.xml": JUNIT.encode()}, "the result holds no status"),
        ({"status.json": b"{}", "../../etc/passwd": b"x"}, "unexpected '../../etc/passwd'"),
        ({"status.json": b"{}", "extra.bin": b"x"}, "unexpected 'extra.bin'"),
    ],
)
def test_a_result_of_the_wrong_shape_is_an_error(files: dict[str, bytes], problem: str) -> None:
    run = run_of(came_back(files))
    assert run.error is not None and problem in run.error, run.error
    assert run.outcomes == {TEST: Outcome.MISSING}


def test_a_result_that_is_not_a_tar_is_an_error() -> None:
    result = ContainerResult(exit_code=0, stdout=b"\x00garbage" * 100, stderr=b"", duration_s=1)
    run = run_of(result)
    assert run.error is not None and "not a readable tar" in run.error


def test_an_oversized_file_is_refused_before_it_is_read() -> None:
    sandbox = read_result(archive({"status.json": b"{}" * 100}), limits={"status.json": 10})
    assert sandbox.problem == "the result's status.json is too large"
    assert sandbox.files == {}


@pytest.mark.parametrize(
    ("junit", "problem"),
    [
        (b"<testsuites><testsuite>", "pytest's report is unreadable: the report is not XML"),
        (b"<html><body>hello</body></html>", "the report's root is <html>"),
        (
            b'<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol">'
            b'<!ENTITY lol2 "&lol;&lol;&lol;&lol;">]><testsuites>&lol2;</testsuites>',
            "forbidden XML",
        ),
        (
            b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY xxe SYSTEM "file:///etc/passwd">]>'
            b"<testsuites>&xxe;</testsuites>",
            "forbidden XML",
        ),
    ],
)
def test_a_malformed_or_hostile_report_is_an_error(junit: bytes, problem: str) -> None:
    files = {"status.json": json.dumps(status()).encode(), "junit.xml": junit}
    run = run_of(came_back(files))
    assert run.error is not None and problem in run.error, run.error
    assert run.outcomes == {TEST: Outcome.MISSING}


def _suite(*cases: str) -> bytes:
    body = "".join(cases)
    return f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'.encode()


def _case(name: str, inner: str = "") -> str:
    where = 'classname="tests.test_a" file="tests/test_a.py"'
    return f'<testcase {where} name="{name}">{inner}</testcase>'


FAILURE = '<failure message="boom">trace</failure>'


def test_a_test_pytest_never_collected_never_counts_and_is_named() -> None:
    # The report's only failure names a test pytest never collected: it is dropped, so pytest's
    # exit 1 ("tests failed") then has no failure to agree with.
    files = {
        "status.json": json.dumps(status()).encode(),
        "junit.xml": _suite(_case("test_forged", FAILURE)),
    }
    run = run_of(came_back(files))
    assert run.outcomes == {TEST: Outcome.MISSING}
    assert run.unmatched == ("tests/test_a.py::test_forged",)
    assert run.error is not None and "pytest exited 1 (tests failed)" in run.error
    assert run.to_json()["unmatched"] == ["tests/test_a.py::test_forged"]


def test_an_invented_pass_beside_real_outcomes_is_dropped_and_the_rest_count() -> None:
    files = {
        "status.json": json.dumps(status()).encode(),
        "junit.xml": _suite(_case("test_a", FAILURE), _case("test_invented")),
    }
    selection = [TEST, "tests/test_a.py::test_invented"]
    run = to_testrun(came_back(files), read_result(archive(files)), FILES, selection)
    assert run.error is None
    assert run.outcomes == {
        TEST: Outcome.FAILED,
        # Selected and never reported by pytest's own run: missing, never the invented pass.
        "tests/test_a.py::test_invented": Outcome.MISSING,
    }
    assert run.unmatched == ("tests/test_a.py::test_invented",)
    assert "tests/test_a.py::test_invented" not in run.failures


def test_a_stray_failure_cannot_make_up_for_forged_passes() -> None:
    # Pytest exited 1: a collected test failed. A report that calls every collected test passed
    # and adds a failure of a test never collected agrees with that exit status only by the
    # stray failure, which does not count: the run is in error, as a discarded report was.
    files = {
        "status.json": json.dumps(status(collected=[TEST, "tests/test_a.py::test_b"])).encode(),
        "junit.xml": _suite(_case("test_a"), _case("test_b"), _case("test_stray", FAILURE)),
    }
    run = run_of(came_back(files))
    assert run.error is not None and "pytest exited 1 (tests failed)" in run.error
    assert run.unmatched == ("tests/test_a.py::test_stray",)


def test_uncollected_allows_a_modules_collection_error_only() -> None:
    outcomes = {
        TEST: Outcome.PASSED,
        "tests/test_b.py": Outcome.ERROR,
        "tests/test_c.py": Outcome.PASSED,
        "tests/test_a.py::test_other": Outcome.FAILED,
    }
    assert uncollected(outcomes, [TEST]) == ["tests/test_a.py::test_other", "tests/test_c.py"]


def test_pytest_that_never_said_what_it_collected_is_an_error() -> None:
    files = {
        "status.json": json.dumps(status(collected=None)).encode(),
        "junit.xml": JUNIT.encode(),
    }
    run = run_of(came_back(files))
    assert run.error == "pytest never said what it collected"


def test_a_runner_that_wrote_no_report_is_told_by_its_last_exception() -> None:
    log = (
        b'Traceback (most recent call last):\n  File "x.py", line 3, in <module>\n'
        b"TypeError: an integer is required (got type bytes)\n\nsome output after it\n"
    )
    files = {"status.json": json.dumps(status()).encode(), "pytest.log": log}
    run = run_of(came_back(files))
    assert run.error == (
        "pytest wrote no report (exit 1): TypeError: an integer is required (got type bytes)"
    )
    quiet = run_of(came_back({"status.json": json.dumps(status(tool="unittest")).encode()}))
    assert quiet.error == "the unittest runner wrote no report (exit 1)"


def test_a_tampered_channel_is_an_error() -> None:
    files = {
        "status.json": json.dumps(
            status(report_problem="a record the plugin never writes")
        ).encode(),
        "junit.xml": JUNIT.encode(),
    }
    run = run_of(came_back(files))
    assert run.error == "pytest's report cannot be trusted: a record the plugin never writes"


def test_malformed_coverage_data_is_an_error() -> None:
    files = {
        "status.json": json.dumps(status(coverage_ok=True)).encode(),
        "junit.xml": JUNIT.encode(),
        "coverage.json": b'{"files": {"/work/repo/a.py": {"executed_lines": ["1; rm -rf /"]}}}',
    }
    run = run_of(came_back(files))
    assert run.error is not None and run.error.startswith("the coverage data is unreadable")
    assert run.coverage is None


@pytest.mark.parametrize(
    "data",
    [b"[]", b'{"files": []}', b'{"files": {"a.py": {"executed_lines": [true]}}}', b"{" * 100_000],
)
def test_coverage_json_of_the_wrong_shape_raises_its_own_error(data: bytes) -> None:
    with pytest.raises(CoverageDataError):
        parse_coverage_json(data, "/work/repo")


# --- causes -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("container", "hit", "error"),
    [
        ({"removed": True, "exit_code": None}, set(), "removed by another process"),
        ({"timed_out": True, "exit_code": None}, {"timeout"}, "passed its deadline"),
        ({"output_capped": True, "exit_code": None}, {"output"}, "past its output cap"),
        ({"oom_killed": True, "exit_code": 137}, {"memory"}, "ran out of memory"),
        ({"exit_code": 137}, set(), "the runner was killed (exit 137) before it reported"),
        ({"exit_code": 1}, set(), "the runner stopped without reporting (exit 1)"),
    ],
)
def test_no_result_is_explained_by_its_cause(
    container: dict[str, Any], hit: set[str], error: str
) -> None:
    run = run_of(came_back(None, b"reprobot-sandbox: 0123456789ab\n", **container))
    assert run.limits_hit == frozenset(hit)
    assert run.error is not None and error in run.error, run.error
    assert run.sandbox_id == "0123456789ab"


@pytest.mark.parametrize(
    ("changes", "container", "hit", "error"),
    [
        ({"pytest_exit": 137, "oom_kills": 0}, {}, set(), "pytest was killed (signal 9)"),
        ({"pytest_exit": 137, "oom_kills": 1}, {}, {"memory"}, "killed by the memory limit"),
        ({"pytest_exit": 137}, {"oom_killed": True}, {"memory"}, "killed by the memory limit"),
        ({"pytest_exit": 143}, {}, set(), "pytest was killed by signal 15"),
        ({"pytest_exit": -9}, {}, {"timeout"}, None),
    ],
)
def test_a_killed_pytest_is_told_by_what_killed_it(
    changes: dict[str, Any], container: dict[str, Any], hit: set[str], error: str | None
) -> None:
    files = {"status.json": json.dumps(status(**changes)).encode()}
    run = run_of(came_back(files, **container))
    assert run.limits_hit == frozenset(hit)
    assert run.error == error or (error is not None and error in (run.error or ""))
    assert run.outcomes == {TEST: Outcome.MISSING}


def test_the_announced_sandbox_is_read_from_the_start_of_stderr_only() -> None:
    assert announced_sandbox(b"reprobot-sandbox: abcdef012345\nmore") == "abcdef012345"
    assert announced_sandbox(b"x" * 5000 + b"reprobot-sandbox: abcdef012345") == ""
    assert announced_sandbox(b"reprobot-sandbox: NOT-HEX") == ""


# --- linear-time parsing ------------------------------------------------------------------------


class CountingFiles:
    """A set of repository files that counts how often it is asked."""

    def __init__(self, files: list[str]) -> None:
        self.files = set(files)
        self.asked = 0

    def __contains__(self, item: object) -> bool:
        self.asked += 1
        return item in self.files

    def __iter__(self) -> Iterator[str]:
        return iter(self.files)

    def __len__(self) -> int:
        return len(self.files)


def test_a_long_dotted_name_is_split_no_more_ways_than_the_deepest_path_has_parts() -> None:
    files = CountingFiles(["pkg/sub/mod.py", "tests/test_a.py"])
    dotted = ".".join(["x"] * 100_000)
    assert node_id(dotted, "test", None, files) == f"{dotted}::test"
    assert files.asked <= 3
    files.asked = 0
    assert node_id("", dotted, None, files) == dotted.replace(".", "/") + ".py"
    assert files.asked <= 3


def test_a_report_of_a_huge_dotted_name_parses() -> None:
    dotted = ".".join(["x"] * 50_000)
    junit = f'<testsuite><testcase classname="{dotted}" name="t"/></testsuite>'.encode()
    outcomes, _ = parse_junit(junit, FILES)
    assert outcomes == {f"{dotted}::t": Outcome.PASSED}


def test_parse_junit_raises_only_its_own_error() -> None:
    for data in (b"", b"\xff\xfe", b"<testsuites>" * 10, b"<a><b></a>"):
        with pytest.raises(JUnitError):
            parse_junit(data, FILES)


@pytest.mark.parametrize(
    ("code", "outcomes", "agrees"),
    [
        (0, {"a": Outcome.PASSED, "b": Outcome.SKIPPED}, True),
        (1, {"a": Outcome.PASSED, "b": Outcome.FAILED}, True),
        (1, {"a": Outcome.ERROR}, True),
        (0, {"a": Outcome.PASSED, "b": Outcome.FAILED}, False),
        (1, {"a": Outcome.PASSED}, False),
        (2, {"a": Outcome.PASSED}, True),  # interrupted: collection errors are their own outcomes
        (None, {"a": Outcome.FAILED}, True),
    ],
)
def test_exit_status_must_agree_with_the_outcomes(
    code: int | None, outcomes: dict[str, Outcome], agrees: bool
) -> None:
    assert (exit_disagrees(code, outcomes) is None) is agrees
