"""parse_coverage_json on a JSON report written by a real coverage.py run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprobot.validation.results.coverage_report import parse_coverage_json
from reprobot.validation.results.testrun import FileCoverage

# Line numbers matter: the expectations below are counted by hand from these texts.
MODULE = """\
def used(x):
    if x > 0:
        return "pos"
    return "neg"


def unused():
    return 1


def excluded():  # pragma: no cover
    return 2
"""
# Statements of MODULE: 1 (def used), 2, 3, 4, 7 (def unused), 8. Lines 11-12 are excluded;
# used(1) runs 2 and 3 but not 4; unused() never runs.
MODULE_STATEMENTS = frozenset({1, 2, 3, 4, 7, 8})
MODULE_EXECUTED = frozenset({1, 2, 3, 7})

SCRIPT = """\
import sys

from pkg.mod import used

if len(sys.argv) > 5:
    print("many")
print(used(1))
"""
# Statements: 1, 3, 5, 6, 7; line 6 does not run.
SCRIPT_STATEMENTS = frozenset({1, 3, 5, 6, 7})
SCRIPT_EXECUTED = frozenset({1, 3, 5, 7})


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("covproj") / "proj"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "__init__.py").write_text("")
    (root / "pkg" / "mod.py").write_text(MODULE)
    (root / "main.py").write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    subprocess.run(
        [sys.executable, "-m", "coverage", "run", "--data-file=.coverage", "main.py"],
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return root


def _json_report(project: Path, cwd: Path) -> bytes:
    out = cwd / "coverage.json"
    env = {k: v for k, v in os.environ.items() if not k.startswith("COVERAGE_")}
    subprocess.run(
        [
            sys.executable,
            "-m",
            "coverage",
            "json",
            f"--data-file={project / '.coverage'}",
            "-o",
            str(out),
        ],
        cwd=cwd,
        env=env,
        check=True,
        capture_output=True,
        timeout=120,
    )
    return out.read_bytes()


@pytest.fixture(scope="module")
def absolute_report(project: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    # Run from an unrelated folder: coverage.py then writes absolute paths.
    return _json_report(project, tmp_path_factory.mktemp("elsewhere"))


@pytest.fixture(scope="module")
def relative_report(project: Path, tmp_path_factory: pytest.TempPathFactory) -> bytes:
    # Run from the project, as the sandbox does: coverage.py writes paths relative to it.
    return _json_report(project, project)


def test_real_report_has_absolute_paths_when_run_elsewhere(
    absolute_report: bytes, project: Path
) -> None:
    files = json.loads(absolute_report)["files"]
    assert str(project / "pkg" / "mod.py") in files


def test_absolute_paths_are_made_relative(absolute_report: bytes, project: Path) -> None:
    result = parse_coverage_json(absolute_report, str(project))
    assert set(result) == {"main.py", "pkg/__init__.py", "pkg/mod.py"}


def test_root_with_trailing_slash(absolute_report: bytes, project: Path) -> None:
    result = parse_coverage_json(absolute_report, str(project) + "/")
    assert set(result) == {"main.py", "pkg/__init__.py", "pkg/mod.py"}


def test_statements_and_executed_lines(absolute_report: bytes, project: Path) -> None:
    result = parse_coverage_json(absolute_report, str(project))
    assert result["pkg/mod.py"] == FileCoverage(
        statements=MODULE_STATEMENTS, executed=MODULE_EXECUTED
    )
    assert result["main.py"] == FileCoverage(statements=SCRIPT_STATEMENTS, executed=SCRIPT_EXECUTED)
    # An empty module has no statements at all.
    assert result["pkg/__init__.py"] == FileCoverage(statements=frozenset(), executed=frozenset())


def test_excluded_lines_are_not_statements(absolute_report: bytes, project: Path) -> None:
    mod = parse_coverage_json(absolute_report, str(project))["pkg/mod.py"]
    assert not {11, 12} & mod.statements


def test_relative_report_is_left_as_is(relative_report: bytes, project: Path) -> None:
    assert "pkg/mod.py" in json.loads(relative_report)["files"]
    result = parse_coverage_json(relative_report, str(project))
    assert set(result) == {"main.py", "pkg/__init__.py", "pkg/mod.py"}
    assert result["pkg/mod.py"].executed == MODULE_EXECUTED


def test_paths_outside_root_are_kept_whole(absolute_report: bytes, project: Path) -> None:
    result = parse_coverage_json(absolute_report, str(project / "pkg"))
    assert set(result) == {str(project / "main.py"), "__init__.py", "mod.py"}


def test_a_root_that_is_only_a_name_prefix_does_not_cut() -> None:
    report = {
        "files": {
            "/work/repository/a.py": {"executed_lines": [1], "missing_lines": []},
            "/work/repo/b.py": {"executed_lines": [2], "missing_lines": [3]},
        }
    }
    result = parse_coverage_json(json.dumps(report).encode(), "/work/repo")
    assert result == {
        "/work/repository/a.py": FileCoverage(frozenset({1}), frozenset({1})),
        "b.py": FileCoverage(frozenset({2, 3}), frozenset({2})),
    }


def test_report_without_files() -> None:
    assert parse_coverage_json(b'{"meta": {"version": "7.4"}}', "/work/repo") == {}
