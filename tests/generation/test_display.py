"""A block's last expression is shown as the issue showed it: an object that fails only when it is
drawn (a plot built lazily) is reproduced, run by pytest on a real repository, through the
display methods the issue's traceback names and no others."""

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

    def _repr_html_(self):
        # A failure of its own, which the issue never met: a test calling it would fail after
        # any fix of the issue.
        raise NotImplementedError("no HTML rendering yet")
'''
# As IPython shows a value that fails while it is drawn: the display method is in the frames.
NOTEBOOK_TRACEBACK = (
    "```\nTraceback (most recent call last):\n"
    '  File "<stdin>", line 2, in <module>\n'
    '  File "/usr/lib/python3/dist-packages/IPython/core/formatters.py", line 344, in __call__\n'
    "    return method()\n"
    '  File "/work/chart/src/chart/__init__.py", line 9, in _repr_png_\n'
    '    raise ValueError("cannot draw missing data")\n'
    "ValueError: cannot draw missing data\n```\n"
)
ISSUE = (
    "Chart fails on missing data",
    "```python\nfrom chart import Chart\nChart([1, None, 3])\n```\n\n" + NOTEBOOK_TRACEBACK,
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
    # Drawn as the traceback shows, and only so: never through a method the issue did not call.
    assert "('_repr_png_',)" in diff and "_repr_html_" not in diff
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


def test_a_value_whose_traceback_names_no_display_method_is_only_shown_by_its_repr(
    tmp_path: Path,
) -> None:
    # The traceback ends in the reporter's own line: nothing says the value was drawn.
    plain = ISSUE[1].replace(
        NOTEBOOK_TRACEBACK,
        (
            '```\nTraceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
            "ValueError: cannot draw missing data\n```\n"
        ),
    )
    _, diff, _ = draft_text(tmp_path, plain)
    assert "+    _shown = Chart([1, None, 3])\n" in diff and "+    repr(_shown)\n" in diff
    assert "_method" not in diff and "_repr_" not in diff
