"""A small calculator project with two deliberate bugs, made into a real git repository for
the drafter's tests, and the helpers those tests read drafts with."""

from __future__ import annotations

import subprocess
from pathlib import Path

from reprobot.generation.drafter.draft import DrafterOutput, draft_from_issue
from reprobot.generation.drafts import Draft
from reprobot.generation.issue.report import IssueReport, parse_issue
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo

PYPROJECT = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "calc"
version = "0.1"

[project.scripts]
calc = "calc.cli:main"
"""
INIT = '''\
"""A tiny calculator."""

from calc.core import mean, parse_number

__all__ = ["mean", "parse_number"]
'''
# Two deliberate bugs: floor division in mean, and negative numbers rejected.
CORE = '''\
def mean(values):
    """The arithmetic mean of ``values``."""
    return sum(values) // len(values)


def parse_number(text):
    """``text`` as an int."""
    if not text.isdigit():
        raise ValueError(f"not a number: {text!r}")
    return int(text)
'''
CLI = """\
import runpy
import sys

from calc.core import mean, parse_number


def main(argv=None):
    args = sys.argv[1:] if argv is None else argv
    path = args[-1]
    numbers = []
    for text in runpy.run_path(path)["VALUES"]:
        try:
            numbers.append(parse_number(text))
        except ValueError as exc:
            print(f"{path}: {exc}")
            return 1
    print(f"{path}: mean {mean(numbers)}")
    return 0
"""
TEST_CALC = """\
from calc import mean


def test_mean_of_integers():
    assert mean([2, 4]) == 3
"""
SESSION_ISSUE = (
    "mean() truncates",
    """\
```pycon
>>> from calc import mean
>>> mean([1, 2])  # <-- wrong
1
```

Expected: `1.5`
""",
)

# A statement that prints more than one value: what it wrote is the value shown.
PRINTED_ISSUE = (
    "Bad mean printed for pairs",
    "```pycon\n>>> from calc import mean\n>>> print('mean:', mean([1, 2]))\nmean: 1\n```\n",
)
# The session shows an earlier release, where raising was right; R no longer raises.
EARLIER_ISSUE = (
    "parse_number accepts leading zeros since 0.2",
    """\
In version 0.1 leading zeros were refused:

```pycon
>>> from calc import parse_number
>>> parse_number("007")
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
ValueError: not a number: '007'
```

This changed in 0.2, where it returns 7.
""",
)


def calc_repo(path: Path) -> Path:
    """The calculator project as a git repository at ``path``."""
    return make_repo(
        path,
        {
            "pyproject.toml": PYPROJECT,
            "src/calc/__init__.py": INIT,
            "src/calc/core.py": CORE,
            "src/calc/cli.py": CLI,
            "tests/test_calc.py": TEST_CALC,
            "docs/conf.py": "project = 'calc'\n",
        },
    )


def issue(pair: tuple[str, str]) -> IssueReport:
    return parse_issue(*pair)


def draft(pair: tuple[str, str], snapshot: RepoSnapshot) -> DrafterOutput:
    return draft_from_issue(issue(pair), snapshot)


def module_of(d: Draft) -> str:
    """The text of the single new file a draft adds."""
    lines = d.patch.diff.split("\n")
    start = next(k for k, line in enumerate(lines) if line.startswith("@@")) + 1
    return "".join(line[1:] + "\n" for line in lines[start:] if line.startswith("+"))


def assert_applies(repo: Path, d: Draft) -> None:
    proc = subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"],
        input=d.patch.diff,
        capture_output=True,
        text=True,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr


def by_method(out: DrafterOutput) -> dict[str, Draft]:
    return {d.method: d for d in out.drafts}
