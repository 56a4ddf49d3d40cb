"""parse_junit and node_id on JUnit XML from a real pytest run and on older hand-written forms."""

from __future__ import annotations

import os
import subprocess
import sys
import tracemalloc
from pathlib import Path

import pytest

from reprobot.validation.results.junit import JUnitError, node_id, parse_junit
from reprobot.validation.results.testrun import Outcome

# A small test project covering every outcome pytest can report.
SAMPLE_FILES = {
    "pytest.ini": "[pytest]\n",
    "tests/__init__.py": "",
    "tests/sub/__init__.py": "",
    "tests/test_a.py": """\
import pytest


def test_pass():
    assert True


def test_fail():
    assert 1 == 2


@pytest.fixture
def broken():
    raise RuntimeError("fixture boom")


def test_fixture_error(broken):
    pass


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass


@pytest.mark.xfail(reason="known bug")
def test_xfail():
    assert False


@pytest.mark.xfail(strict=True, reason="should fail")
def test_xpass_strict():
    pass


@pytest.mark.xfail(reason="lenient")
def test_xpass_lenient():
    pass


@pytest.mark.parametrize("x", [1, 2, "a.b"])
def test_param(x):
    assert x != 2


class TestOuter:
    def test_m(self):
        pass

    class TestInner:
        def test_deep(self):
            assert 0


@pytest.fixture
def bad_teardown():
    yield
    raise RuntimeError("teardown boom")


def test_fail_then_teardown(bad_teardown):
    assert False


def test_pass_then_teardown(bad_teardown):
    pass
""",
    "tests/sub/test_broken.py": "import nonexistent_module_xyz\n\n\ndef test_never():\n    pass\n",
    "tests/sub/test_ok.py": "def test_ok():\n    pass\n",
    "tests/test_modskip.py": (
        "import pytest\n\npytest.skip('whole module', allow_module_level=True)\n\n\n"
        "def test_x():\n    pass\n"
    ),
    # A folder whose name holds a dot: dotted class names cannot be split back into it.
    "tests/v1.0/test_dotted_ok.py": "def test_fine():\n    pass\n",
    "tests/v1.0/test_dotted_broken.py": "import nonexistent_module_abc\n",
}

EXPECTED = {
    "tests/test_a.py::test_pass": Outcome.PASSED,
    "tests/test_a.py::test_fail": Outcome.FAILED,
    "tests/test_a.py::test_fixture_error": Outcome.ERROR,
    "tests/test_a.py::test_skipped": Outcome.SKIPPED,
    "tests/test_a.py::test_xfail": Outcome.XFAILED,
    "tests/test_a.py::test_xpass_strict": Outcome.FAILED,
    # JUnit shows a lenient xpass as a pass; Reprobot's plugin names it (see test_run_tests).
    "tests/test_a.py::test_xpass_lenient": Outcome.PASSED,
    "tests/test_a.py::test_param[1]": Outcome.PASSED,
    "tests/test_a.py::test_param[2]": Outcome.FAILED,
    "tests/test_a.py::test_param[a.b]": Outcome.PASSED,
    "tests/test_a.py::TestOuter::test_m": Outcome.PASSED,
    "tests/test_a.py::TestOuter::TestInner::test_deep": Outcome.FAILED,
    "tests/test_a.py::test_fail_then_teardown": Outcome.FAILED,
    "tests/test_a.py::test_pass_then_teardown": Outcome.ERROR,
    "tests/sub/test_broken.py": Outcome.ERROR,
    "tests/sub/test_ok.py::test_ok": Outcome.PASSED,
    "tests/test_modskip.py": Outcome.SKIPPED,
}
# Kept apart: the collection error's id is wrong today (see the last test of this module).
DOTTED_FOLDER = {
    "tests/v1.0/test_dotted_ok.py::test_fine": Outcome.PASSED,
    "tests/v1.0/test_dotted_broken.py": Outcome.ERROR,
}


def _pytest_junit(project: Path, *args: str) -> bytes:
    """Run the host's pytest on ``project`` the way the sandbox runner does; return the XML."""
    for rel, text in SAMPLE_FILES.items():
        target = project / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    out = project / "junit.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            f"--junitxml={out}",
            "-o",
            "junit_family=xunit1",
            "-p",
            "no:cacheprovider",
            "--continue-on-collection-errors",
            "-q",
            *args,
        ],
        cwd=project,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    return out.read_bytes()


@pytest.fixture(scope="module")
def real_xml(tmp_path_factory: pytest.TempPathFactory) -> bytes:
    return _pytest_junit(tmp_path_factory.mktemp("junit-sample"), "tests")


REPO_FILES = frozenset(p for p in SAMPLE_FILES if p.endswith(".py"))


# --- real pytest output ---------------------------------------------------------------------


def test_real_xml_is_the_modern_xunit1_form(real_xml: bytes) -> None:
    # What the assertions below rely on: a <testsuites> root and file attributes.
    assert real_xml.lstrip().startswith(b"<?xml")
    assert b"<testsuites" in real_xml
    assert b'file="tests/test_a.py"' in real_xml


def test_real_xml_ids_are_exactly_the_node_ids(real_xml: bytes) -> None:
    outcomes, _ = parse_junit(real_xml, REPO_FILES)
    assert set(EXPECTED) <= set(outcomes)
    assert len(outcomes) == len(EXPECTED) + len(DOTTED_FOLDER)


def test_real_xml_folder_with_a_dot(real_xml: bytes) -> None:
    outcomes, _ = parse_junit(real_xml, REPO_FILES)
    assert {k: v for k, v in outcomes.items() if "v1" in k} == DOTTED_FOLDER


@pytest.mark.parametrize(("test_id", "expected"), sorted(EXPECTED.items()))
def test_real_xml_outcome(real_xml: bytes, test_id: str, expected: Outcome) -> None:
    outcomes, _ = parse_junit(real_xml, REPO_FILES)
    assert outcomes.get(test_id) is expected


def test_real_xml_failure_teardown_pair_is_reported_twice(real_xml: bytes) -> None:
    # The worst-outcome rule matters because pytest writes two testcase elements here.
    assert real_xml.count(b'name="test_fail_then_teardown"') == 2


def test_real_xml_details(real_xml: bytes) -> None:
    _, details = parse_junit(real_xml, REPO_FILES)
    assert details["tests/test_a.py::test_fail"].startswith("assert 1 == 2\n")
    assert "E       assert 1 == 2" in details["tests/test_a.py::test_fail"]
    assert "fixture boom" in details["tests/test_a.py::test_fixture_error"]
    assert details["tests/test_a.py::test_skipped"] == "skipped: not today"
    assert details["tests/test_a.py::test_xfail"] == "xfail: known bug"
    assert "XPASS(strict)" in details["tests/test_a.py::test_xpass_strict"]
    assert "nonexistent_module_xyz" in details["tests/sub/test_broken.py"]
    # The failure of the call is kept, not the teardown error written after it.
    assert "assert False" in details["tests/test_a.py::test_fail_then_teardown"]
    assert "teardown boom" not in details["tests/test_a.py::test_fail_then_teardown"]
    assert "teardown boom" in details["tests/test_a.py::test_pass_then_teardown"]
    # Passing tests carry no detail.
    assert "tests/test_a.py::test_pass" not in details
    assert "tests/test_a.py::test_xpass_lenient" not in details


def test_real_xml_without_repo_files_still_uses_file_attributes(real_xml: bytes) -> None:
    outcomes, _ = parse_junit(real_xml, frozenset())
    assert outcomes["tests/test_a.py::TestOuter::TestInner::test_deep"] is Outcome.FAILED
    assert outcomes["tests/sub/test_ok.py::test_ok"] is Outcome.PASSED
    assert outcomes["tests/sub/test_broken.py"] is Outcome.ERROR


# --- older <testsuite> root (pytest 4.x/5.0) ------------------------------------------------

OLD_WITH_FILE = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuite errors="1" failures="1" hostname="h" name="pytest" skipped="2" tests="6" time="0.1"
 timestamp="2019-06-01T10:00:00.000000">
<testcase classname="tests.test_mod" file="tests/test_mod.py" line="0" name="test_ok" time="0.001">
</testcase>
<testcase classname="tests.test_mod" file="tests/test_mod.py" line="3" name="test_bad" time="0.001">
<failure message="AssertionError: boom">def test_bad():
&gt;       assert 0, "boom"
E       AssertionError: boom</failure></testcase>
<testcase classname="tests.test_mod.TestK" file="tests/test_mod.py" line="7" name="test_k[x-1]">
<skipped message="known" type="pytest.xfail"></skipped></testcase>
<testcase classname="tests.test_mod.TestK" file="tests/test_mod.py" line="9" name="test_s" time="0">
<skipped message="no db" type="pytest.skip">tests/test_mod.py:9: no db</skipped></testcase>
<testcase classname="" file="tests/test_gone.py" name="tests.test_gone" time="0">
<error message="collection failure">ImportError while importing test module</error></testcase>
<testcase classname="tests.test_mod" file="tests/test_mod.py" line="12" name="test_flaky" time="0">
<system-out>some output</system-out></testcase>
</testsuite>
"""

OLD_WITHOUT_FILE = b"""<?xml version="1.0" encoding="utf-8"?>
<testsuite errors="1" failures="1" name="pytest" skipped="2" tests="6" time="0.1">
<testcase classname="tests.test_mod" name="test_ok" time="0.001"/>
<testcase classname="tests.test_mod" name="test_bad" time="0.001">
<failure message="AssertionError: boom">E       AssertionError: boom</failure></testcase>
<testcase classname="tests.test_mod.TestK" name="test_k[x-1]" time="0">
<skipped message="known" type="pytest.xfail"/></testcase>
<testcase classname="tests.test_mod.TestK" name="test_s" time="0">
<skipped message="no db" type="pytest.skip">tests/test_mod.py:9: no db</skipped></testcase>
<testcase classname="" name="tests.test_gone" time="0">
<error message="collection failure">ImportError while importing test module</error></testcase>
<testcase classname="tests.test_mod" name="test_flaky" time="0"/>
</testsuite>
"""

OLD_EXPECTED = {
    "tests/test_mod.py::test_ok": Outcome.PASSED,
    "tests/test_mod.py::test_bad": Outcome.FAILED,
    "tests/test_mod.py::TestK::test_k[x-1]": Outcome.XFAILED,
    "tests/test_mod.py::TestK::test_s": Outcome.SKIPPED,
    "tests/test_gone.py": Outcome.ERROR,
    "tests/test_mod.py::test_flaky": Outcome.PASSED,
}


@pytest.mark.parametrize("data", [OLD_WITH_FILE, OLD_WITHOUT_FILE], ids=["file", "no-file"])
def test_old_testsuite_root(data: bytes) -> None:
    outcomes, details = parse_junit(data, {"tests/test_mod.py", "tests/__init__.py"})
    assert outcomes == OLD_EXPECTED
    assert details["tests/test_mod.py::test_bad"].startswith("AssertionError: boom\n")
    assert details["tests/test_mod.py::TestK::test_s"] == "skipped: no db"
    assert details["tests/test_mod.py::TestK::test_k[x-1]"] == "xfail: known"
    assert details["tests/test_gone.py"].startswith("collection failure\nImportError")


def test_old_form_without_file_and_without_repo_files_keeps_dotted_class() -> None:
    # Nothing tells where the module ends and the classes begin: the id falls back to classname.
    outcomes, _ = parse_junit(OLD_WITHOUT_FILE, frozenset())
    assert outcomes["tests.test_mod::test_ok"] is Outcome.PASSED
    assert outcomes["tests.test_mod.TestK::test_s"] is Outcome.SKIPPED
    assert outcomes["tests/test_gone.py"] is Outcome.ERROR


# --- the worst-outcome rule -----------------------------------------------------------------


def _suite(*cases: str) -> bytes:
    body = "".join(cases)
    return f'<testsuites><testsuite name="pytest">{body}</testsuite></testsuites>'.encode()


def _case(inner: str = "") -> str:
    return f'<testcase classname="t.test_w" name="test_x" file="t/test_w.py">{inner}</testcase>'


PASS = _case()
FAIL = _case('<failure message="call failed">F</failure>')
ERR = _case('<error message="teardown failed">E</error>')
SKIP = _case('<skipped type="pytest.skip" message="skip why">S</skipped>')
XFAIL = _case('<skipped type="pytest.xfail" message="xf"/>')


@pytest.mark.parametrize(
    ("cases", "expected", "detail"),
    [
        ((FAIL, ERR), Outcome.FAILED, "call failed\nF"),
        ((ERR, FAIL), Outcome.FAILED, "call failed\nF"),
        ((PASS, ERR), Outcome.ERROR, "teardown failed\nE"),
        ((ERR, PASS), Outcome.ERROR, "teardown failed\nE"),
        ((SKIP, ERR), Outcome.ERROR, "teardown failed\nE"),
        ((PASS, SKIP), Outcome.SKIPPED, "skipped: skip why"),
        ((SKIP, PASS), Outcome.SKIPPED, "skipped: skip why"),
        ((XFAIL, ERR), Outcome.ERROR, "teardown failed\nE"),
        ((PASS, PASS), Outcome.PASSED, None),
        ((XFAIL,), Outcome.XFAILED, "xfail: xf"),
        ((PASS, XFAIL), Outcome.XFAILED, "xfail: xf"),
    ],
)
def test_worst_outcome_wins(cases: tuple[str, ...], expected: Outcome, detail: str | None) -> None:
    outcomes, details = parse_junit(_suite(*cases), {"t/test_w.py"})
    assert outcomes == {"t/test_w.py::test_x": expected}
    assert details.get("t/test_w.py::test_x") == detail


def test_same_name_in_two_suites_is_one_test() -> None:
    data = (
        '<testsuites><testsuite name="a">'
        + PASS
        + '</testsuite><testsuite name="b">'
        + FAIL
        + "</testsuite></testsuites>"
    ).encode()
    outcomes, _ = parse_junit(data, set())
    assert outcomes == {"t/test_w.py::test_x": Outcome.FAILED}


def test_details_are_capped_keeping_head_and_tail() -> None:
    long = "x" * 10_000 + "\nE   ValueError: the final exception"
    outcomes, details = parse_junit(_suite(_case(f'<failure message="m">{long}</failure>')), set())
    assert outcomes["t/test_w.py::test_x"] is Outcome.FAILED
    detail = details["t/test_w.py::test_x"]
    assert len(detail) == 4000
    # The summary line comes first and the exception that ended the test last: both stay.
    assert detail.startswith("m\nxxx")
    assert detail.endswith("E   ValueError: the final exception")
    assert "\n[...]\n" in detail


def test_empty_report_has_no_outcomes() -> None:
    assert parse_junit(b'<testsuites><testsuite name="pytest"/></testsuites>', set()) == ({}, {})


def test_non_utf8_bytes_do_not_break_parsing() -> None:
    data = (
        b'<testsuites><testsuite name="pytest"><testcase classname="t.test_w" name="test_x"'
        b' file="t/test_w.py"><failure message="m">caf\xff</failure></testcase></testsuite>'
        b"</testsuites>"
    )
    outcomes, details = parse_junit(data, set())
    assert outcomes["t/test_w.py::test_x"] is Outcome.FAILED
    assert details["t/test_w.py::test_x"] == "m\ncaf\ufffd"


# --- node_id directly -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("classname", "name", "file", "repo_files", "expected"),
    [
        ("tests.test_a", "test_f", "tests/test_a.py", (), "tests/test_a.py::test_f"),
        ("tests.test_a.TestC", "test_m", "tests/test_a.py", (), "tests/test_a.py::TestC::test_m"),
        ("t.test_a.A.B", "test_m[1]", "t/test_a.py", (), "t/test_a.py::A::B::test_m[1]"),
        ("test_top", "test_f", "test_top.py", (), "test_top.py::test_f"),
        # file names the defining module (an inherited test): classname decides, via repo files.
        (
            "tests.test_child.TestChild",
            "test_base",
            "tests/base.py",
            ("tests/test_child.py", "tests/base.py"),
            "tests/test_child.py::TestChild::test_base",
        ),
        # Without file: the longest prefix that names a repository file is the module.
        ("p.t.test_x.TestY", "test_z", None, ("p/t/test_x.py",), "p/t/test_x.py::TestY::test_z"),
        ("p.tests", "test_z", None, ("p/tests.py", "p/tests/test_x.py"), "p/tests.py::test_z"),
        ("a.b", "test_z", None, (), "a.b::test_z"),
        # A doctest item: its name is a dotted path of its own.
        ("pkg.mod", "pkg.mod.func", "pkg/mod.py", (), "pkg/mod.py::pkg.mod.func"),
        # Items of files that are not Python: a text file's doctest, a plugin's item.
        ("docs.usage.rst", "usage.rst", "docs/usage.rst", (), "docs/usage.rst::usage.rst"),
        ("d.v1.2.n.md", "n.md", "d/v1.2/n.md", (), "d/v1.2/n.md::n.md"),
        ("t.data.cases.G", "half is 0.5", "t/data.cases", (), "t/data.cases::G::half is 0.5"),
        ("", "docs.broken.rst", "docs/broken.rst", (), "docs/broken.rst"),
        # Collection errors carry no classname.
        ("", "tests.sub.test_broken", "tests/sub/test_broken.py", (), "tests/sub/test_broken.py"),
        ("", "tests.sub.test_broken", None, (), "tests/sub/test_broken.py"),
        ("", "tests.test-dash", None, ("tests/test-dash.py",), "tests/test-dash.py"),
    ],
)
def test_node_id(
    classname: str, name: str, file: str | None, repo_files: tuple[str, ...], expected: str
) -> None:
    assert node_id(classname, name, file, set(repo_files)) == expected


def test_node_id_collection_error_uses_file_attribute() -> None:
    # pytest's file attribute names the module exactly; the dotted name cannot be split back
    # into a folder "v1.0".
    got = node_id("", "tests.v1.0.test_x", "tests/v1.0/test_x.py", set())
    assert got == "tests/v1.0/test_x.py"


def test_a_report_nested_deeper_than_pytests_is_refused_early() -> None:
    # 33 MB of nesting inside one test case: read whole, the host would build millions of
    # elements; read incrementally, it stops at the depth no pytest report reaches.
    deep = b"<testsuite><testcase classname='t' name='a'><failure>"
    deep += b"<x>" * 11_000_000 + b"</failure></testcase></testsuite>"
    tracemalloc.start()
    try:
        with pytest.raises(JUnitError, match="nests elements over 16 deep"):
            parse_junit(deep, [])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 100 * 1024 * 1024


def test_a_case_with_more_elements_than_a_report_holds_is_refused() -> None:
    many = b"<testsuite><testcase classname='t' name='a'>" + b"<x/>" * 5000
    many += b"</testcase></testsuite>"
    with pytest.raises(JUnitError, match="holds over 1000 elements"):
        parse_junit(many, [])


def test_a_suites_other_content_is_not_kept_and_cases_outside_suites_are_not_cases() -> None:
    report = (
        b"<testsuites><testsuite><properties><property name='a' value='b'/></properties>"
        b"<testcase classname='t' name='a'/><system-out>" + b"x" * 1000 + b"</system-out>"
        b"<other><testcase classname='t' name='hidden'/></other></testsuite></testsuites>"
    )
    outcomes, _ = parse_junit(report, [])
    assert outcomes == {"t::a": Outcome.PASSED}
