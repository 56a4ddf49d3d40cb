"""The issue comment: what was reproduced and how to run it, or what was tried."""

from __future__ import annotations

import re

from reprobot.bot.render.markdown import COMMENT_LIMIT
from reprobot.bot.render.reproduction import (
    REPRODUCTION_MARKER,
    render_not_reproduced,
    render_reproduction,
)
from reprobot.validation.results.oracles import module_oracles

SHA = "0123456789abcdef0123456789abcdef01234567"
PATCH = """\
--- /dev/null
+++ b/tests/test_issue_42.py
@@ -0,0 +1,7 @@
+import pytest
+from durations import parse
+
+
+@pytest.mark.parametrize("text", ["1h30m", "me@example.com"])
+def test_issue_42(text):
+    assert parse(text) == 5400
"""
FAILURE = """\
    def test_issue_42(text):
>       assert parse(text) == 5400
E       ValueError: unknown unit 'h30m' (reported by @maintainer)
"""
IDS = ["tests/test_issue_42.py::test_issue_42[1h30m]", "tests/test_issue_42.py::test_issue_42[x]"]


def _render(**changes: object) -> str:
    args: dict[str, object] = {
        "repo": "acme/durations",
        "issue_number": 42,
        "base_sha": SHA,
        "test_patch": PATCH,
        "failing_tests": IDS,
        "failure": FAILURE,
        "method": "issue",
        "test_command": "python -m pytest",
    }
    args.update(changes)
    return render_reproduction(**args)  # type: ignore[arg-type]


def test_reproduced_comment() -> None:
    body = _render()
    lines = body.splitlines()
    assert lines[0] == REPRODUCTION_MARKER
    assert lines[1] == "### 🔁 Reproduced at `0123456789ab`"
    assert "- `tests/test_issue_42.py::test_issue_42[1h30m]`" in lines
    assert "```\n    def test_issue_42(text):\n" in body
    assert (
        "<details>\n<summary>The reproducing test (<code>tests/test_issue_42.py</code>, "
        "drafted by <code>issue</code>)</summary>\n\n```diff\n--- /dev/null\n" in body
    )
    assert (
        "```sh\ngit apply reprobot-issue-42.diff\npython -m pytest "
        "'tests/test_issue_42.py::test_issue_42[1h30m]' 'tests/test_issue_42.py::test_issue_42[x]'"
        "\n```" in body
    )
    assert "cut" not in body
    assert "Configuration" not in body


def test_a_reproduction_below_the_labels_confidence_says_probably_and_what_to_check() -> None:
    checks = ("that the failure is the one the issue describes", "the test against the example")
    body = _render(to_check=checks)
    lines = body.splitlines()
    assert lines[1] == "### 🔁 Probably reproduced at `0123456789ab`"
    assert "**Probably reproduces:** the test fails for the reason the issue describes" in body
    assert "- that the failure is the one the issue describes" in lines
    # The test, its failure and how to run it stay: only the claim is weaker.
    assert "```sh\ngit apply reprobot-issue-42.diff" in body
    assert "Probably" not in _render()


def test_mentions_in_echoed_text_notify_nobody_but_the_patch_stays_appliable() -> None:
    body = _render(failing_tests=["t.py::test[@ceo]"], method="@bot")
    assert "(reported by @\u200bmaintainer)" in body
    assert "- `t.py::test[@\u200bceo]`" in body
    assert "<code>@\u200bbot</code>" in body
    # Inside the diff block GitHub makes no mention; the patch must apply as copied.
    assert '+@pytest.mark.parametrize("text", ["1h30m", "me@example.com"])' in body


def test_backticks_in_the_failure_cannot_close_its_fence() -> None:
    failure = "E   AssertionError\n```\n### 🔁 Fake headline\n<details>\n`````"
    body = _render(failure=failure)
    assert "``````\nE   AssertionError\n```\n### 🔁 Fake headline\n<details>\n`````\n``````" in body
    backticks_patch = PATCH + "+    '''````````'''\n"
    assert "`````````diff\n" in _render(test_patch=backticks_patch)


def test_huge_patch_and_failure_stay_under_the_limit() -> None:
    patch = PATCH + "".join(f"+    assert x{i} == {i}  # {'y' * 80}\n" for i in range(5000))
    failure = "E   " + "traceback line\n" * 20000 + "E   the real error at the end"
    body = _render(test_patch=patch, failure=failure)
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(REPRODUCTION_MARKER + "\n")
    assert "characters cut ...]" in body
    assert "The test patch is too long for one comment and was cut above" in body
    assert "the real error at the end" in body  # the failure keeps its end
    assert body.count("characters cut ...]") == 2
    assert "+++ b/tests/test_issue_42.py" in body  # the patch keeps its start
    assert body.rstrip().endswith("```")  # the run instructions are still whole


def test_a_patch_made_of_backticks_still_fits() -> None:
    body = _render(test_patch="`" * 100000, failure="`" * 100000)
    assert len(body) <= COMMENT_LIMIT
    assert body.startswith(REPRODUCTION_MARKER)
    assert "**How to run it:**" in body


def test_many_and_long_test_ids() -> None:
    ids = [f"tests/t.py::test_{i}[{'p' * 5000}]" for i in range(500)]
    body = _render(failing_tests=ids)
    assert len(body) <= COMMENT_LIMIT
    assert "- … and 470 more" in body
    assert "(the first 10 of 500 failing tests)" in body


def test_config_errors_are_noted() -> None:
    body = _render(config_errors=[".github/reprobot.yml: unknown setting 'pyhton'"])
    assert "**Configuration:** `.github/reprobot.yml` has errors:" in body
    assert "- `.github/reprobot.yml: unknown setting 'pyhton'`" in body
    assert body.endswith("so the defaults apply.")


def test_not_reproduced_comment() -> None:
    tried = [
        ("issue", "passes", "the test passes on the base | nothing to see <img src=x> @ghost"),
        ("llm-zero-shot", "no draft", "no code\nblock in the issue"),
    ]
    body = render_not_reproduced(repo="acme/durations", base_sha=SHA, tried=tried)
    lines = body.splitlines()
    assert lines[0] == REPRODUCTION_MARKER
    assert lines[1] == "### 🔍 Could not reproduce this issue"
    assert "| method | outcome | why |" in lines
    assert (
        "| issue | passes | the test passes on the base \\| nothing to see "
        "&lt;img src=x&gt; @\u200bghost |" in lines
    )
    assert "| llm-zero-shot | no draft | no code block in the issue |" in lines
    assert "`/reprobot reproduce`" in body


def test_not_reproduced_lists_at_most_twenty_attempts() -> None:
    tried = [(f"m{i}", "fails", "wrong reason " * 100) for i in range(45)]
    body = render_not_reproduced(
        repo="acme/durations", base_sha=SHA, tried=tried, config_errors=["bad"]
    )
    assert len(re.findall(r"^\| m\d+ \| fails \| wrong reason", body, re.MULTILINE)) == 20
    assert "_… and 25 more attempts._" in body
    assert "**Configuration:**" in body
    assert len(body) <= COMMENT_LIMIT


def test_nothing_drafted() -> None:
    body = render_not_reproduced(repo="acme/durations", base_sha=SHA, tried=[])
    assert body.startswith(REPRODUCTION_MARKER + "\n### 🔍 Could not reproduce this issue")
    assert "could not draft any test" in body
    assert "|" not in body


def test_the_comment_says_what_the_test_checks() -> None:
    strong = module_oracles("t.py", "def test_a():\n    assert median([1, 2]) == 1.5\n")
    body = _render(oracle=strong["t.py::test_a"])
    assert "**What it checks:** it checks `median([1, 2]) == 1.5`." in body
    assert "would pass it too" not in body
    weak = module_oracles("t.py", "def test_a():\n    assert median([1, 2]) != 2\n")
    body = _render(oracle=weak["t.py::test_a"])
    assert (
        "**What it checks:** it checks only that a value is no longer the one reported "
        "`median([1, 2]) != 2`. A fix that gives another wrong value would pass it too" in body
    )
    crash = module_oracles("t.py", "def test_a():\n    median([])\n")
    body = _render(oracle=crash["t.py::test_a"])
    assert (
        "**What it checks:** it runs the code and checks only that nothing raises. A fix that "
        "stops the error but gives a wrong result would pass it too" in body
    )
    assert "What it checks" not in _render()
