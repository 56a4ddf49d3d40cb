"""Markdown safety and the verdict comment body."""

from __future__ import annotations

import pytest

from reprobot.bot.render.markdown import (
    COMMENT_LIMIT,
    fence,
    inline_code,
    neutralize_mentions,
    table_cell,
    trim,
)
from reprobot.bot.render.verdict import kind_text, render_verdict
from reprobot.validation.results.testrun import FileCoverage, Outcome, TestRun
from reprobot.validation.results.verdict import Transition
from reprobot.validation.source.patch import Patch
from reprobot.validation.verify import grade


def test_fence_cannot_be_closed_by_its_content() -> None:
    text = "before\n```\n# not a heading\n````\nafter"
    block = fence(text)
    assert block.startswith("`````\n") and block.endswith("\n`````")
    assert block.count("`````") == 2


def test_mentions_are_neutralized() -> None:
    assert neutralize_mentions("ping @octocat and @org/team, mail a@b") == (
        "ping @\u200boctocat and @\u200borg/team, mail a@\u200bb"
    )
    assert "@\u200bevil" in fence("@evil")
    assert inline_code("x`y @z") == "``x`y @\u200bz``"


def test_trim_says_what_it_cut() -> None:
    assert trim("abcdef", 10) == "abcdef"
    assert trim("abcdef", 2) == "[... 4 characters cut ...]\nef"
    assert trim("abcdef", 2, keep="head") == "ab\n[... 4 characters cut ...]"


FIX = "--- a/m.py\n+++ b/m.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n"


def test_verified_comment() -> None:
    before = TestRun(
        outcomes={"tests/t.py::test_a": Outcome.FAILED},
        failures={"tests/t.py::test_a": "E  boom @ceo"},
    )
    after = TestRun(outcomes={"tests/t.py::test_a": Outcome.PASSED})
    body = render_verdict(
        grade(before, after, Patch(FIX), {"m.py": b"x = 1\n"}, {"m.py": b"x = 2\n"}, "a" * 40, None)
    )
    assert body.startswith(
        "### ✅ Verified: 1 reproducing test fails before this change and passes with it"
    )
    assert "| fail → pass (reproduced, then fixed) | 1 |" in body
    assert "`tests/t.py::test_a`" in body
    assert "executable changed lines" in body
    assert "@\u200bceo" in body and "@ceo" not in body
    assert "<details>" in body and body.rstrip().endswith("</details>")


def test_not_verified_comment_lists_the_broken_test() -> None:
    before = TestRun(outcomes={"t.py::a": Outcome.FAILED, "t.py::b": Outcome.PASSED})
    after = TestRun(outcomes={"t.py::a": Outcome.PASSED, "t.py::b": Outcome.FAILED})
    body = render_verdict(grade(before, after, Patch(FIX), {}, {}, "b" * 40, "c" * 40))
    assert body.startswith("### ❌ Not verified: 1 test fails with this change")
    assert "**Tests failing with this change:**\n- `t.py::b`" in body
    assert "head `cccccccccccc`" in body


def test_huge_output_stays_under_the_limit() -> None:
    ids = {f"tests/t.py::test_{i}_" + "x" * 200: Outcome.FAILED for i in range(2000)}
    before = TestRun(outcomes=ids, failures={k: "y" * 5000 for k in ids})
    after = TestRun(outcomes=dict.fromkeys(ids, Outcome.PASSED))
    body = render_verdict(grade(before, after, Patch(FIX), {}, {}, "a" * 40, None))
    assert len(body) <= COMMENT_LIMIT
    assert "… and 1970 more" in body


@pytest.mark.parametrize(
    ("kind", "words"),
    [
        ("F->P", "fail → pass (reproduced, then fixed)"),
        ("P->P", "pass → pass"),
        ("P->E", "pass → error (broken by the fix)"),
        ("F->S", "fail → skipped (skipped with the change: not run, so not a pass)"),
        ("S->P", "skipped → pass (skipped before the change)"),
        ("S->S", "skipped → skipped (never run)"),
        ("E->E", "error → error"),
        ("F->XF", "fail → xfail (marked as an expected failure with the change: not a pass)"),
        ("P->XP", "pass → xpass (marked as an expected failure with the change: not a pass)"),
        ("Q->P", "Q->P"),
    ],
)
def test_every_transition_has_words(kind: str, words: str) -> None:
    assert kind_text(kind) == words
    # Every pair of sides a verdict can count is worded.
    sides = {Transition("t", o, o).kind.partition("->")[0] for o in Outcome}
    for before in sides:
        for after in sides:
            assert "->" not in kind_text(f"{before}->{after}")


def test_echoed_text_loses_terminal_control_sequences() -> None:
    red = "AssertionError: \x1b[31massert 1 == 2\x1b[0m\x1b]0;owned\x07"
    assert fence(red) == "```\nAssertionError: assert 1 == 2\n```"
    assert inline_code("tests/test_\x1b[2Ja.py::t") == "`tests/test_a.py::t`"
    assert table_cell("x\x1b[8mhidden\x1b[0m") == "xhidden"


def test_each_reason_a_passing_change_is_not_verified_stands_in_its_headline() -> None:
    # m.py was imported (measured) on both sides, and its changed line 1 never ran.
    measured = {"m.py": FileCoverage(frozenset({1, 3}), frozenset({3}))}
    before = TestRun(outcomes={"t.py::a": Outcome.FAILED}, coverage=measured)
    after = TestRun(outcomes={"t.py::a": Outcome.PASSED}, coverage=measured)
    sources = ({"m.py": b"x = 1\n"}, {"m.py": b"x = 2\n"})
    never_ran = grade(before, after, Patch(FIX), *sources, "a" * 40, None)
    assert render_verdict(never_ran).startswith(
        "### ❌ Not verified: the tests pass without running the change\n"
    )
    review = "it changes 1 file(s) a verified change may not contain: a.pyc (not text)"
    plain = (TestRun(outcomes=before.outcomes), TestRun(outcomes=after.outcomes))
    held = grade(*plain, Patch(FIX), {}, {}, "a" * 40, None, review=[review])
    body = render_verdict(held)
    assert body.startswith(
        "### 🔍 Needs review: the reproducing test passes with this change, but it changes 1 "
        "file(s) a verified change may not contain\n"
    )
    # What a pass rests on is said before the details a long comment loses first.
    assert body.index("_What this result rests on:_") < body.index("<details>")


def test_a_test_failing_for_another_reason_with_the_change_is_named() -> None:
    """A reproducing test whose reported error the change removes, but which then fails with
    another exception (a dependency of the environment, say): the comment names both, so the
    maintainer sees the issue's failure is gone and what is in the way now."""
    reported = (
        "def test_polyfit():\n>       plot._repr_png_()\n"
        "E       numpy.linalg.LinAlgError: SVD did not converge in Linear Least Squares\n\n"
        "seaborn/_stats/regression.py:30: LinAlgError"
    )
    other = (
        "def test_polyfit():\n>       plot._repr_png_()\n"
        "E       pandas._config.config.OptionError: No such keys(s): 'mode.use_inf_as_null'\n\n"
        "pandas/_config/config.py:121: OptionError"
    )
    still = (
        "def test_b():\n>       assert f() == 2\nE       assert 3 == 2\n\nt.py:3: AssertionError"
    )
    before = TestRun(
        outcomes={"t.py::test_polyfit": Outcome.FAILED, "t.py::test_b": Outcome.FAILED},
        failures={"t.py::test_polyfit": reported, "t.py::test_b": still},
    )
    after = TestRun(
        outcomes={"t.py::test_polyfit": Outcome.FAILED, "t.py::test_b": Outcome.FAILED},
        failures={"t.py::test_polyfit": other, "t.py::test_b": still.replace("3 ==", "4 ==")},
    )
    body = render_verdict(grade(before, after, Patch(FIX), {}, {}, "b" * 40, "c" * 40))
    assert body.startswith("### ❌ Not verified")
    assert "**Failing for another reason with this change:**" in body
    assert (
        "- `t.py::test_polyfit`: before, `LinAlgError: SVD did not converge in Linear Least "
        "Squares`; with it, `OptionError: No such keys(s): 'mode.use_inf_as_null'`"
    ) in body
    # A test still failing as it did (another wrong value) is no other reason.
    assert "- `t.py::test_b`: before" not in body
    # Failing the same way throughout: nothing of the kind is said.
    same = render_verdict(grade(before, before, Patch(FIX), {}, {}, "b" * 40, "c" * 40))
    assert "another reason" not in same
