"""A block's last expression is shown, as a notebook shows it: an object that fails only when it
is drawn (a plot built lazily) is reproduced, run by pytest on a real repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reprobot.generation.drafter.draft import draft_from_issue
from reprobot.generation.issue.report import parse_issue
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo, pyproject

CHART = '''\
class Chart:
    """Built at once, drawn when shown."""

    def __init__(self, values):
        self.values = values

    def _repr_png_(self):
        if any(v is None for v in self.values):
            raise ValueError("cannot draw missing data")
        return b""
'''
ISSUE = (
    "Chart fails on missing data",
    "```python\nfrom chart import Chart\nChart([1, None, 3])\n```\n\n"
    '```\nTraceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
    "ValueError: cannot draw missing data\n```\n",
)


def draft_text(tmp_path: Path, body: str) -> tuple[Path, str, tuple[str, ...]]:
    repo = make_repo(
        tmp_path / "chart",
        {
            "pyproject.toml": pyproject("chart"),
            "src/chart/__init__.py": CHART,
            "tests/test_chart.py": "def test_nothing():\n    pass\n",
        },
    )
    out = draft_from_issue(
        parse_issue(ISSUE[0], body), RepoSnapshot.from_git(repo, "HEAD", "acme/chart")
    )
    (d,) = [d for d in out.drafts if d.method == "issue-code"]
    return repo, d.patch.diff, d.test_files


def test_the_last_expression_is_shown_and_the_failure_of_showing_it_reproduces(
    tmp_path: Path,
) -> None:
    repo, diff, files = draft_text(tmp_path, ISSUE[1])
    assert "+    _shown = Chart([1, None, 3])\n" in diff
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(repo), str(work))
    subprocess.run(["git", "-C", str(work), "apply", "-"], input=diff, text=True, check=True)
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *files],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert "ValueError: cannot draw missing data" in proc.stdout, proc.stdout


def test_a_printed_value_or_a_statement_is_run_as_it_is(tmp_path: Path) -> None:
    printed = ISSUE[1].replace("Chart([1, None, 3])\n```", "print(Chart([1, None, 3]))\n```")
    _, diff, _ = draft_text(tmp_path, printed)
    assert "+    print(Chart([1, None, 3]))\n" in diff and "_shown" not in diff
