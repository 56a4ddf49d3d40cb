"""Every kind of item pytest collects comes back under its own id: doctests of text files
(``--doctest-glob``) and of modules (``--doctest-modules``), and a plugin's items of files that
are not Python. A real pytest run with Reprobot's plugin gives the collected ids and the JUnit
report, as in the sandbox; the report read with those ids names exactly the collected tests."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import Any

import pytest

from reprobot.validation.results.junit import collected_addresses, junit_address, parse_junit
from reprobot.validation.results.sandbox_result import collected_only
from reprobot.validation.results.testrun import Outcome
from tests.support.scripts import SCRIPTS

# A plugin, configured by the project, collecting the cases of ``*.cases`` files: a group per
# "[name]" line (names with dots), a case per "name: expression" line (names with spaces and
# dots), as the pytest documentation's YAML example does.
CASES_PLUGIN = """\
import pytest


def pytest_collect_file(parent, file_path):
    if file_path.suffix == ".cases":
        return CasesFile.from_parent(parent, path=file_path)


class CasesFile(pytest.File):
    def collect(self):
        group = None
        for line in self.path.read_text().splitlines():
            if line.startswith("["):
                group = Group.from_parent(self, name=line.strip("[]"))
                yield group
            elif line and group is None:
                name, _, expression = line.partition(": ")
                yield Case.from_parent(self, name=name, expression=expression)


class Group(pytest.Collector):
    def collect(self):
        lines = self.parent.path.read_text().splitlines()
        start = lines.index("[" + self.name + "]") + 1
        for line in lines[start:]:
            if line.startswith("["):
                break
            if line:
                name, _, expression = line.partition(": ")
                yield Case.from_parent(self, name=name, expression=expression)


class Case(pytest.Item):
    def __init__(self, *, expression, **kwargs):
        super().__init__(**kwargs)
        self.expression = expression

    def runtest(self):
        assert eval(self.expression), self.expression

    def reportinfo(self):
        return self.path, 0, "case: " + self.name
"""

SAMPLE_FILES = {
    "pytest.ini": (
        "[pytest]\naddopts = --doctest-glob=*.rst --doctest-glob=*.md --doctest-modules\n"
        "testpaths = docs pkg tests README.md\n"
    ),
    "conftest.py": CASES_PLUGIN,
    "README.md": "# sample\n\n    >>> 2 * 3\n    6\n",
    "docs/usage.rst": "Usage\n=====\n\n>>> 1 + 1\n2\n",
    "docs/broken.md": "A doctest whose example is wrong:\n\n>>> 1 + 1\n3\n",
    # A folder whose name holds a dot: JUnit's dotted class name cannot be split back into it.
    "docs/v1.2/notes.rst": ">>> 'a.b'.split('.')\n['a', 'b']\n",
    "pkg/__init__.py": "",
    "pkg/mod.py": (
        'def double(x):\n    """\n    >>> double(2)\n    4\n    """\n    return 2 * x\n\n\n'
        'class Box:\n    def size(self):\n        """\n        >>> Box().size()\n        0\n'
        '        """\n        return 1\n'
    ),
    "tests/__init__.py": "",
    "tests/test_plain.py": "def test_ok():\n    pass\n\n\ndef test_bad():\n    assert 0\n",
    "tests/data/arith.cases": (
        "one plus one: 1 + 1 == 2\nhalf is 0.5: 1 / 2 == 0.5\n[v2.0 rules]\nwrong: 1 == 2\n"
    ),
}

EXPECTED = {
    "README.md::README.md": Outcome.PASSED,
    "docs/usage.rst::usage.rst": Outcome.PASSED,
    "docs/broken.md::broken.md": Outcome.FAILED,
    "docs/v1.2/notes.rst::notes.rst": Outcome.PASSED,
    "pkg/mod.py::pkg.mod.double": Outcome.PASSED,
    "pkg/mod.py::pkg.mod.Box.size": Outcome.FAILED,
    "tests/test_plain.py::test_ok": Outcome.PASSED,
    "tests/test_plain.py::test_bad": Outcome.FAILED,
    "tests/data/arith.cases::one plus one": Outcome.PASSED,
    "tests/data/arith.cases::half is 0.5": Outcome.PASSED,
    "tests/data/arith.cases::v2.0 rules::wrong": Outcome.FAILED,
}


def _report(records: bytes) -> dict[str, Any]:
    """The collected ids and the JUnit text the plugin sent, one JSON record a line."""
    report: dict[str, Any] = {}
    for line in records.decode("utf-8").splitlines():
        report.update(json.loads(line))
    return report


@pytest.fixture(scope="module")
def sample_report(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    """pytest run on the sample project as the sandbox's runner runs it: Reprobot's plugin on a
    descriptor of its own, JUnit family xunit1."""
    project = tmp_path_factory.mktemp("items")
    for rel, text in SAMPLE_FILES.items():
        target = project / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text)
    theirs, ours = os.pipe()[::-1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(SCRIPTS), REPROBOT_REPORT_FD=str(theirs))
    argv = [sys.executable, "-m", "pytest", "-p", "reprobot_report", "-p", "no:cacheprovider"]
    argv += [f"--junitxml={project / 'junit.xml'}", "-o", "junit_family=xunit1", "-q"]
    proc = subprocess.run(
        argv,
        cwd=project,
        env=env,
        pass_fds=(theirs,),
        capture_output=True,
        timeout=120,
        check=False,
    )
    os.close(theirs)
    with os.fdopen(ours, "rb") as channel:
        report = _report(channel.read())
    assert report.get("junit"), proc.stdout.decode()[-3000:]
    return report


def test_the_plugin_collects_every_kind_of_item(sample_report: dict[str, Any]) -> None:
    assert sorted(sample_report["collected"]) == sorted(EXPECTED)


def test_every_item_comes_back_under_its_collected_id(sample_report: dict[str, Any]) -> None:
    collected = sample_report["collected"]
    outcomes, details = parse_junit(sample_report["junit"].encode(), SAMPLE_FILES, collected)
    assert outcomes == EXPECTED
    assert collected_only(outcomes, collected) == (EXPECTED, [])
    assert "Expected:\n    3\nGot:\n    2" in details["docs/broken.md::broken.md"]


def test_without_file_attributes_the_collected_ids_still_name_every_item(
    sample_report: dict[str, Any],
) -> None:
    # pytest before 5.1 wrote no file attribute; the collected ids alone name the items.
    junit = re.sub(r' file="[^"]*"', "", sample_report["junit"])
    outcomes, _ = parse_junit(junit.encode(), SAMPLE_FILES, sample_report["collected"])
    assert outcomes == EXPECTED


def test_without_the_collected_ids_the_file_attribute_names_text_files(
    sample_report: dict[str, Any],
) -> None:
    outcomes, _ = parse_junit(sample_report["junit"].encode(), SAMPLE_FILES)
    # A dotted group name is the one thing the file attribute cannot tell apart.
    assert {k: v for k, v in outcomes.items() if "rules" not in k} == {
        k: v for k, v in EXPECTED.items() if "rules" not in k
    }


@pytest.mark.parametrize(
    ("test_id", "address"),
    [
        ("tests/test_a.py::test_f", ("tests.test_a", "test_f")),
        ("tests/test_a.py::K::test_m[a.b/c::d]", ("tests.test_a.K", "test_m[a.b/c::d]")),
        ("docs/usage.rst::usage.rst", ("docs.usage.rst", "usage.rst")),
        ("pkg/mod.py::pkg.mod.f", ("pkg.mod", "pkg.mod.f")),
        ("a/b.cases::v2.0 rules::wrong", ("a.b.cases.v2.0 rules", "wrong")),
        # The unittest reporter's id of a test outside the tree: already dotted.
        ("module.K::test_m", ("module.K", "test_m")),
    ],
)
def test_junit_address_is_pytests_own(test_id: str, address: tuple[str, str]) -> None:
    assert junit_address(test_id) == address


def test_an_address_two_collected_ids_share_names_neither() -> None:
    # "a/b.py::c" and "a.b.py::c" are written alike; neither may take the other's outcome.
    found = collected_addresses(["a/b.py::c", "a.b.py::c", "a/b.py::d"])
    assert found == {("a.b", "d"): "a/b.py::d"}


def test_a_forged_case_maps_to_no_collected_id(sample_report: dict[str, Any]) -> None:
    forged = sample_report["junit"].replace('name="usage.rst"', 'name="invented.rst"', 1)
    collected = sample_report["collected"]
    outcomes, _ = parse_junit(forged.encode(), SAMPLE_FILES, collected)
    counted, stray = collected_only(outcomes, collected)
    assert stray == ["docs/usage.rst::invented.rst"]
    assert "docs/usage.rst::usage.rst" not in counted
