"""The project's linter read from its settings, and run on a drafted test with them (flake8 and
Ruff from Reprobot's environment, on real git repositories in tmp_path)."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.generation.repo.linter import (
    LINT_PASSES,
    NO_LINTER_SETTINGS,
    Linter,
    LintError,
    lint,
    lint_summary,
    project_linter,
)
from reprobot.validation import RepoSnapshot
from tests.support.repos import make_repo

LONG = (
    "def test_x():\n    assert 'a fairly long string literal' == 'a fairly long string literal'\n"
)


def snapshot(tmp_path: Path, files: dict[str, str]) -> RepoSnapshot:
    repo = make_repo(tmp_path / "repo", {"pkg/__init__.py": "", **files})
    return RepoSnapshot.from_git(repo, "HEAD")


def test_flake8_settings_are_read_where_flake8_reads_them(tmp_path: Path) -> None:
    setup_cfg = (
        "[metadata]\nname = pkg\n\n[flake8]\nmax-line-length = 60\n"
        "extend-ignore =\n    E203  # black's slices\n    W503\n"
    )
    linter = project_linter(snapshot(tmp_path, {"setup.cfg": setup_cfg}))
    assert linter is not None
    assert (linter.tool, linter.source, linter.line_length) == ("flake8", "setup.cfg", 60)
    # flake8 today rejects a comment after the codes, which flake8 before 6 let stand.
    assert "#" not in linter.settings
    (finding,) = lint(linter, "tests/test_x.py", LONG)
    assert (finding.line, finding.code) == (2, "E501")
    assert lint(linter, "tests/test_x.py", "def test_x():\n    assert 1\n") == ()


def test_ruff_settings_are_read_from_pyproject(tmp_path: Path) -> None:
    pyproject = (
        '[project]\nname = "pkg"\n\n[tool.ruff]\nline-length = 70\n\n'
        '[tool.ruff.lint]\nselect = ["E", "F"]\n'
    )
    linter = project_linter(snapshot(tmp_path, {"pyproject.toml": pyproject}))
    assert linter is not None and (linter.tool, linter.line_length) == ("ruff", 70)
    codes = [f.code for f in lint(linter, "tests/test_x.py", "import os\n" + LONG)]
    assert codes == ["F401", "E501"]


def test_a_tree_without_linter_settings_has_no_linter(tmp_path: Path) -> None:
    assert project_linter(snapshot(tmp_path, {"setup.cfg": "[metadata]\nname = pkg\n"})) is None


def test_settings_that_write_or_read_files_are_never_passed_on(tmp_path: Path) -> None:
    written = tmp_path / "written.txt"
    setup_cfg = f"[flake8]\nmax-line-length = 60\noutput-file = {written}\ntee = true\n"
    linter = project_linter(snapshot(tmp_path, {"setup.cfg": setup_cfg}))
    assert linter is not None and "output-file" not in linter.settings
    assert [f.code for f in lint(linter, "tests/test_x.py", LONG)] == ["E501"]
    assert not written.exists()
    pyproject = (
        f'[tool.ruff]\ncache-dir = "{tmp_path / "cache"}"\nextend = "/etc/passwd"\n'
        "line-length = 70\n"
    )
    ruff = project_linter(snapshot(tmp_path / "b", {"pyproject.toml": pyproject}))
    assert ruff is not None and "cache-dir" not in ruff.settings and "extend" not in ruff.settings
    lint(ruff, "tests/test_x.py", LONG)
    assert not (tmp_path / "cache").exists()


def test_a_path_outside_the_tree_or_settings_the_tool_rejects_are_errors() -> None:
    linter = Linter("flake8", "setup.cfg", "[flake8]\nmax-line-length = 79\n")
    with pytest.raises(LintError, match="not a path of the tree"):
        lint(linter, "../escape.py", "x = 1\n")
    broken = Linter("ruff", "ruff.toml", 'line-length = "long"\n')
    with pytest.raises(LintError, match="ruff could not check"):
        lint(broken, "tests/test_x.py", "x = 1\n")


def test_a_test_patch_is_summed_up_in_one_line(tmp_path: Path) -> None:
    clean = (
        "diff --git a/tests/test_x.py b/tests/test_x.py\nnew file mode 100644\n"
        "--- /dev/null\n+++ b/tests/test_x.py\n@@ -0,0 +1,2 @@\n+def test_x():\n+    assert 1\n"
    )
    long = clean.replace("+    assert 1\n", "+    assert '" + "z" * 70 + "'\n")
    base = snapshot(tmp_path, {"setup.cfg": "[flake8]\nmax-line-length = 60\n"})
    assert lint_summary(base, clean) == LINT_PASSES
    assert lint_summary(base, long).startswith("1 finding(s): tests/test_x.py line 2: E501 ")
    assert lint_summary(snapshot(tmp_path / "b", {}), clean) == NO_LINTER_SETTINGS
    assert lint_summary(base, "not a diff").startswith("not checked: ")
