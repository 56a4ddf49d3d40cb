"""The no-LLM drafter on a real git repository: drafts that compile, apply and fail on R."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from reprobot.generation.drafter.draft import DrafterOutput, draft_from_issue
from reprobot.generation.drafts import Draft, Verdict
from reprobot.generation.issue.report import IssueReport, parse_issue
from reprobot.generation.pool.failure_match import issue_reason, judge_run
from reprobot.validation.results.junit import parse_junit
from reprobot.validation.results.testrun import TestRun
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo

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

CODE_ISSUE = (
    "parse_number rejects negative numbers",
    """\
### Describe the bug

Negative numbers are not parsed:

```python
print(parse_number("-3"))
```

```
Traceback (most recent call last):
  File "/home/me/repro.py", line 3, in <module>
    print(parse_number("-3"))
  File "/home/me/.venv/lib/python3.12/site-packages/calc/core.py", line 9, in parse_number
    raise ValueError(f"not a number: {text!r}")
ValueError: not a number: '-3'
```

calc 0.1, Python 3.12
""",
)
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
STATED_ISSUE = (
    "mean of two numbers",
    "I expected `mean([1, 2])` to return `1.5`, like `statistics.mean` does.\n",
)
CLI_ISSUE = (
    "calc mean: negative values rejected",
    """\
With this `data.py`:

```python
VALUES = ["4", "-2"]
```

the command fails:

```console
$ calc mean data.py
data.py: not a number: '-2'
```
""",
)
CODE_EXPECTED_ISSUE = (
    "mean of two numbers is truncated",
    """\
```python
from calc import mean
values = [1, 2]
print(mean(values))
```

Ideally, this would yield `1.5`, since the mean of 1 and 2 is not an integer.
""",
)
PROSE_ISSUE = (
    "Docs: mention the calc command",
    "The README does not say how to run calc from the shell. Please document it.\n",
)


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("drafter") / "calc",
        {
            "pyproject.toml": PYPROJECT,
            "src/calc/__init__.py": INIT,
            "src/calc/core.py": CORE,
            "src/calc/cli.py": CLI,
            "tests/test_calc.py": TEST_CALC,
            "docs/conf.py": "project = 'calc'\n",
        },
    )


@pytest.fixture(scope="module")
def snapshot(repo: Path) -> RepoSnapshot:
    return RepoSnapshot.from_git(repo, "HEAD", "acme/calc")


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


def test_code_and_traceback_give_an_issue_code_draft(repo: Path, snapshot: RepoSnapshot) -> None:
    out = draft(CODE_ISSUE, snapshot)
    assert [d.method for d in out.drafts] == ["issue-code"]
    (d,) = out.drafts
    assert d.test_files == ("tests/test_parse_number_rejects_negative_numbers.py",)
    text = module_of(d)
    compile(text, d.test_files[0], "exec")
    # The snippet never imported parse_number: the package's export is found.
    assert text == (
        "# Reproduces the reported issue: parse_number rejects negative numbers\n"
        "\n"
        "from calc import parse_number\n"
        "\n"
        "\n"
        "def test_parse_number_rejects_negative_numbers():\n"
        '    print(parse_number("-3"))\n'
    )
    assert out.skipped == ()
    assert_applies(repo, d)


def test_a_session_with_a_wrong_value(repo: Path, snapshot: RepoSnapshot) -> None:
    out = draft(SESSION_ISSUE, snapshot)
    drafts = by_method(out)
    assert list(drafts) == ["issue-session-value", "issue-session-expected"]
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-session-value"])
    assert "from calc import mean\n" in value
    assert "    result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in value
    expected = module_of(drafts["issue-session-expected"])
    # A float is compared numerically, with pytest's tolerance, and the module imports pytest.
    assert "    assert result == pytest.approx(1.5), " in expected
    assert expected.index("import pytest\n") < expected.index("def test_")
    # Two modules of one issue never share a path.
    assert [d.test_files for d in out.drafts] == [
        ("tests/test_mean_truncates.py",),
        ("tests/test_mean_truncates_2.py",),
    ]
    for d in out.drafts:
        compile(module_of(d), d.test_files[0], "exec")
        assert_applies(repo, d)


def test_a_title_calling_the_result_wrong_makes_the_last_shown_value_the_wrong_one(
    snapshot: RepoSnapshot,
) -> None:
    session = "```pycon\n>>> from calc import mean\n>>> mean([2, 2])\n2\n>>> mean([1, 2])\n1\n```\n"
    out = draft(("Wrong result of mean", session), snapshot)
    (d,) = out.drafts
    assert d.method == "issue-session-value"
    assert out.wrong_values == ("1",)
    text = module_of(d)
    assert "result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in text
    # A title about a wrong error message says nothing of the values shown.
    assert draft(("Wrong error message from mean", session), snapshot).drafts == ()


@pytest.mark.parametrize(
    "title",
    [
        "mean does not compute the average correctly for pairs",
        "mean() no longer seems to work correctly",
        "inaccurate mean of pairs",
        "mean isn't right for two numbers",
        "Bad mean of pairs",
        "pairs break mean",
    ],
)
def test_of_several_sessions_under_a_title_calling_a_result_wrong_the_last_shows_it(
    title: str, snapshot: RepoSnapshot
) -> None:
    body = (
        "```python\nfrom calc import mean\npair = [1, 2]\n```\n\n"
        "As expected:\n\n```\n>>> mean([2, 4])\n3\n```\n\n"
        "But:\n\n```\n>>> mean(pair)\n1\n```\n\nSurely a bug?\n"
    )
    out = draft((title, body), snapshot)
    drafts = by_method(out)
    # Only the last session's value is called wrong, with the code it needs before it.
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-session-value"])
    assert "    pair = [1, 2]\n    mean([2, 4])\n    result = mean(pair)\n" in value
    assert "    assert '1' not in (str(result), repr(result))" in value
    assert "'3' not in" not in "".join(module_of(d) for d in out.drafts)


def test_a_session_the_words_next_to_it_call_right_shows_no_wrong_value(
    snapshot: RepoSnapshot,
) -> None:
    body = (
        "I noticed this among others:\n\n```\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```"
        "\n\nThe string form is not fooled:\n\n```\n>>> from calc import mean\n"
        ">>> str(mean([1, 2]))\n'1.5'\n```\n"
    )
    out = draft(("inaccurate mean of pairs", body), snapshot)
    # The first session is the wrong one; the sentence ending in a colon introduces the second.
    assert out.wrong_values == ("1",)
    assert {d.method for d in out.drafts} == {"issue-session-value"}


def test_a_session_under_an_expected_results_heading_states_the_expected_value(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    body = (
        "#### Steps/Code to Reproduce\n\n```python\n>>> from calc import mean\n"
        ">>> mean([1, 2])\n```\n\n#### Expected Results\n\n```python\n>>> from calc import mean\n"
        ">>> mean([1, 2])\n1.5\n```\n\n#### Actual Results\n\n```python\n"
        ">>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
    )
    out = draft(("mean of two numbers does not show the correct value", body), snapshot)
    drafts = by_method(out)
    assert out.wrong_values == ("1",)
    expected = module_of(drafts["issue-session-expected"])
    assert "    result = mean([1, 2])\n    assert result == pytest.approx(1.5), " in expected
    value = module_of(drafts["issue-session-value"])
    assert "assert '1' not in (str(result), repr(result))" in value
    assert "'1.5' not in" not in "".join(module_of(d) for d in out.drafts)
    for d in out.drafts:
        assert_applies(repo, d)


def test_a_session_pasted_twice_is_one_session_under_a_wrong_title(snapshot: RepoSnapshot) -> None:
    session = "```\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n"
    out = draft(("Wrong result of mean", session + "\nAgain:\n\n" + session), snapshot)
    assert {d.method for d in out.drafts} == {"issue-session-value"}
    assert out.wrong_values == ("1",)


def test_code_whose_comments_show_the_printed_values_is_read_as_a_session(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    body = (
        "This one is right:\n\n```python\nfrom calc import mean\nmean([2, 4])\n# 3\n```\n\n"
        "This one is not:\n\n```python\nmean([1, 2])  # 1\n```\n\nExpected `1.5`, got `1`.\n"
    )
    out = draft(("Wrong mean of two numbers", body), snapshot)
    drafts = by_method(out)
    assert {"issue-code", "issue-session-value", "issue-session-expected"} <= set(drafts)
    assert out.wrong_values == ("1",)
    value = module_of(drafts["issue-session-value"])
    # The setup is every statement before the one shown wrong, both blocks included.
    assert "    mean([2, 4])\n    result = mean([1, 2])\n" in value
    assert "    assert '1' not in (str(result), repr(result))" in value
    expected = module_of(drafts["issue-session-expected"])
    assert "    result = mean([1, 2])\n    assert result == pytest.approx(1.5), " in expected
    for d in out.drafts:
        compile(module_of(d), d.test_files[0], "exec")
        assert_applies(repo, d)


def test_a_comment_below_the_output_that_calls_it_wrong_marks_it(snapshot: RepoSnapshot) -> None:
    body = (
        "```python\nfrom calc import mean\nprint(mean([1, 2]))\n# Out: 1\n"
        "# This is not correct\nprint(mean([2, 4]))\n# Out: 3\n# This is correct\n```\n"
    )
    out = draft(("mean() and two numbers", body), snapshot)
    text = module_of(by_method(out)["issue-session-value"])
    # The marked line is the one asserted on, and a printed value is about what is printed.
    assert "    result = mean([1, 2])\n    assert '1' not in (str(result), repr(result))" in text
    assert "mean([2, 4])" not in text
    # Comments that read as words show no output: only the code itself is drafted.
    prose = "```python\nfrom calc import mean\nmean([1, 2])  # works\nmean([])  # TODO\n```\n"
    assert [d.method for d in draft(("Wrong mean", prose), snapshot).drafts] == ["issue-code"]


def test_a_stated_expected_return(repo: Path, snapshot: RepoSnapshot) -> None:
    out = draft(STATED_ISSUE, snapshot)
    (d,) = out.drafts
    assert d.method == "issue-expected-return"
    assert "`mean([1, 2])` must give `1.5`" in d.note
    text = module_of(d)
    compile(text, d.test_files[0], "exec")
    assert "from calc import mean\n" in text
    assert "    result = mean([1, 2])\n    assert result == pytest.approx(1.5), " in text
    assert d.test_files[0].startswith("tests/")
    assert_applies(repo, d)


def test_a_bare_name_as_the_expected_value_counts_only_when_the_project_exports_it(
    snapshot: RepoSnapshot,
) -> None:
    # "mean" is a value the calc package exports; "positive" is a word of the reporter's.
    named = draft(("mean([1, 2]) is 1, it should be mean", ""), snapshot)
    assert [d.method for d in named.drafts] == ["issue-expected-return", "issue-stated-value"]
    worded = draft(("mean([1, 2]) is 1, it should be positive", ""), snapshot)
    assert [d.method for d in worded.drafts] == ["issue-stated-value"]


def test_an_expected_value_given_as_a_sentence_is_no_value_to_compare(
    snapshot: RepoSnapshot,
) -> None:
    session = "```python\n>>> from calc import mean\n>>> mean([1, 2])\n1\n```\n\n"
    worded = draft(("mean of two numbers", session + "Expected: the average of both\n"), snapshot)
    assert "issue-session-expected" not in [d.method for d in worded.drafts]
    valued = draft(("mean of two numbers", session + "Expected: `1.5`\n"), snapshot)
    assert "issue-session-expected" in [d.method for d in valued.drafts]


def test_a_command_line_reproduction(repo: Path, snapshot: RepoSnapshot) -> None:
    out = draft(CLI_ISSUE, snapshot)
    d = by_method(out)["issue-cli"]
    text = module_of(d)
    compile(text, d.test_files[0], "exec")
    assert "import subprocess\n" in text
    assert "def test_calc_mean_negative_values_rejected(tmp_path):\n" in text
    assert "(tmp_path / 'data.py').write_text('VALUES = [\"4\", \"-2\"]\\n')" in text
    assert "from calc.cli import main as main" in text
    assert "data.py: not a number: '-2'" in out.wrong_values
    assert_applies(repo, d)


def test_an_issue_without_code_gives_no_draft(snapshot: RepoSnapshot) -> None:
    out = draft(PROSE_ISSUE, snapshot)
    assert out.drafts == ()
    assert out.skipped == (
        ("issue", "the issue shows no code, session or command to reproduce it with"),
    )


def test_unresolved_names_are_reported(snapshot: RepoSnapshot) -> None:
    body = "```python\nresult = median_low([1, 2])\nprint(result)\n```\n"
    out = draft(("median_low is missing", body), snapshot)
    (d,) = out.drafts
    assert d.method == "issue-code"
    assert out.skipped == (("issue-code", "names the issue's code uses are not found: median_low"),)


# A statement that prints more than one value: what it wrote is the value shown.
PRINTED_ISSUE = (
    "Bad mean printed for pairs",
    "```pycon\n>>> from calc import mean\n>>> print('mean:', mean([1, 2]))\nmean: 1\n```\n",
)


def test_a_printing_statement_shows_what_it_wrote(snapshot: RepoSnapshot) -> None:
    out = draft(PRINTED_ISSUE, snapshot)
    (d,) = out.drafts
    assert d.method == "issue-session-value"
    assert out.wrong_values == ("mean: 1",)
    text = module_of(d)
    assert "import contextlib as _contextlib\nimport io as _io\n" in text
    assert (
        "    with _contextlib.redirect_stdout(_io.StringIO()) as _output:\n"
        "        print('mean:', mean([1, 2]))\n"
        "    result = _output.getvalue().strip()\n"
    ) in text


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


def test_a_session_from_an_earlier_release_shows_the_raise_that_should_happen(
    snapshot: RepoSnapshot,
) -> None:
    out = draft(EARLIER_ISSUE, snapshot)
    (d,) = out.drafts
    assert d.method == "issue-session-raised-before"
    assert '    with pytest.raises(ValueError):\n        parse_number("007")\n' in module_of(d)
    # Types "that were used to fit it" speak of no earlier release: the raise is the bug.
    other = EARLIER_ISSUE[1].replace(
        "In version 0.1 leading zeros were refused", "Types used to fit"
    )
    assert [d.method for d in draft((EARLIER_ISSUE[0], other), snapshot).drafts] == [
        "issue-session-raises"
    ]


def test_drafting_is_deterministic(snapshot: RepoSnapshot) -> None:
    for pair in (CODE_ISSUE, SESSION_ISSUE, STATED_ISSUE, CLI_ISSUE, PROSE_ISSUE):
        assert draft(pair, snapshot) == draft(pair, snapshot)


def test_drafts_fail_on_r_for_the_issues_reason(
    repo: Path, snapshot: RepoSnapshot, tmp_path: Path
) -> None:
    """Every draft applied to a clone of R and run by pytest: each reproduces its issue."""
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(repo), str(work))
    wanted = {
        CODE_ISSUE: ("issue-code",),
        SESSION_ISSUE: ("issue-session-value", "issue-session-expected"),
        STATED_ISSUE: ("issue-expected-return",),
        # No session, no traceback: the code block's last expression and the value stated after.
        CODE_EXPECTED_ISSUE: ("issue-code-expected",),
        # The issue's data.py alone, run as a test, shows nothing: only the command does.
        CLI_ISSUE: ("issue-cli",),
        PRINTED_ISSUE: ("issue-session-value",),
        EARLIER_ISSUE: ("issue-session-raised-before",),
    }
    drafted: list[tuple[IssueReport, DrafterOutput, Draft]] = []
    for pair, methods in wanted.items():
        out = draft(pair, snapshot)
        for method in methods:
            d = by_method(out)[method]
            drafted.append((issue(pair), out, d))
            subprocess.run(
                ["git", "-C", str(work), "apply", "-"], input=d.patch.diff, text=True, check=True
            )
    junit = tmp_path / "junit.xml"
    # Plugins of this environment are not the project's: leaving them out halves the start-up.
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--tb=short"),
            *("-o", "junit_family=xunit1", f"--junitxml={junit}", "tests"),
        ],
        cwd=work,
        env=env,
        capture_output=True,
        check=False,
        timeout=120,
    )
    files = git(work, "ls-files", "--others", "--cached").split("\n")
    outcomes, failures = parse_junit(junit.read_bytes(), files)
    assert outcomes["tests/test_calc.py::test_mean_of_integers"] == "passed"
    for report, out, d in drafted:
        test_run = TestRun(outcomes=outcomes, failures=failures)
        judgement = judge_run(test_run, d.test_files, issue_reason(report, out.wrong_values))
        assert judgement.verdict is Verdict.REPRODUCES, (d.method, judgement)


RAISES_LIKE_ISSUE = (
    "parse_number accepts blanks",
    """\
```python
>>> parse_number("")
Traceback (most recent call last):
...
ValueError: empty input
>>> parse_number("   ")  <--- this is not handled correctly
0
```
""",
)


def test_a_sibling_that_raises_sets_what_the_pointed_statement_must_do(
    repo: Path, snapshot: RepoSnapshot
) -> None:
    out = draft(RAISES_LIKE_ISSUE, snapshot)
    drafts = by_method(out)
    assert "issue-session-raises-like" in drafts
    d = drafts["issue-session-raises-like"]
    assert '`parse_number("   ")` must raise `ValueError`' in d.note
    text = module_of(d)
    compile(text, d.test_files[0], "exec")
    assert text.index("import pytest\n") < text.index("def test_")
    assert "from calc import parse_number\n" in text
    # The statement that raised is the comparison, not the setup.
    assert '    with pytest.raises(ValueError):\n        parse_number("   ")\n' in text
    assert 'parse_number("")' not in text
    assert_applies(repo, d)


def test_a_code_block_and_a_value_stated_after_it_give_an_expected_draft(
    snapshot: RepoSnapshot,
) -> None:
    out = draft(CODE_EXPECTED_ISSUE, snapshot)
    text = module_of(by_method(out)["issue-code-expected"])
    assert "values = [1, 2]\n    result = mean(values)\n" in text
    assert "assert result == pytest.approx(1.5)" in text
    # "Would be nice" is no value; "`2` or `3`" offers two outcomes, neither expected.
    for words in ("It would be nice if this worked.", "It should be `2` or `3`."):
        vague = (CODE_EXPECTED_ISSUE[0], CODE_EXPECTED_ISSUE[1].split("Ideally")[0] + words)
        assert "issue-code-expected" not in by_method(draft(vague, snapshot))


def test_a_value_stated_after_a_code_block_is_about_that_block_only(
    snapshot: RepoSnapshot,
) -> None:
    later = "\n\nAs a corollary:\n\n```python\nfrom calc import mean\nprint(mean([1, 2, 4]))\n```\n"
    two_blocks = (CODE_EXPECTED_ISSUE[0], CODE_EXPECTED_ISSUE[1] + later)
    drafts = [d for d in draft(two_blocks, snapshot).drafts if d.method == "issue-code-expected"]
    # `1.5` was said of `mean([1, 2])`: never asserted of the later block's `mean([1, 2, 4])`.
    assert drafts == []
    # Stated after the later block, it is about that one.
    after = (CODE_EXPECTED_ISSUE[0], later + "\n" + CODE_EXPECTED_ISSUE[1])
    (one,) = [d for d in draft(after, snapshot).drafts if d.method == "issue-code-expected"]
    assert "assert result == pytest.approx(1.5)" in module_of(one)
    assert "values = [1, 2]\n    result = mean(values)\n" in module_of(one)
