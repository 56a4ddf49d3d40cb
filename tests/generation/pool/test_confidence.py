"""What backs a reproduction, scored: the table of its parts, and the same score read back from
stored candidates."""

from __future__ import annotations

import pytest

from reprobot.generation.pool.confidence import MAX_SCORE, of_records, score
from reprobot.generation.pool.failure_match import (
    ASSERTION_ABOUT_WORDS,
    ASSERTION_REPORTS,
    ISSUES_EXCEPTION,
    ISSUES_WRONG_VALUE,
    NOT_THE_EXPECTED_VALUE,
)


@pytest.mark.parametrize(
    ("reason", "kind", "others", "expected"),
    [
        # The issue's own failure, a checked result, a second reading: all that can back it.
        (f"{ISSUES_EXCEPTION} ValueError", "expected", ["issue-code"], MAX_SCORE),
        (f"{ISSUES_EXCEPTION} ValueError", "crash", [], 4),
        (ISSUES_WRONG_VALUE, "expected", [], 4),
        ("fails with KeyError, as another traceback of the issue shows", "crash", [], 4),
        (f"{ASSERTION_REPORTS} NotImplementedError", "expected", ["issue-wrong-value"], 4),
        (NOT_THE_EXPECTED_VALUE, "expected", [], 3),
        # Only that a wrong value is gone: a fix giving another wrong value passes it too.
        (ISSUES_WRONG_VALUE, "weak", [], 3),
        # Words of the issue in a failing assertion, nothing else.
        (ASSERTION_ABOUT_WORDS, "weak", [], 1),
        (ASSERTION_ABOUT_WORDS, None, [], 1),
        # Not a reason a reproduction has.
        ("fails with TypeError, but the issue shows ValueError", "crash", [], 0),
    ],
)
def test_the_score_adds_what_backs_the_test(
    reason: str, kind: str | None, others: list[str], expected: int
) -> None:
    confidence = score(reason, kind, "issue-expected", ["issue-expected", *others])
    assert confidence.score == expected
    assert confidence.backing
    # Whatever is missing is something a maintainer is told to check.
    assert bool(confidence.to_check) or confidence.score == MAX_SCORE


def test_a_method_agrees_with_itself_only_once() -> None:
    reason = f"{ISSUES_EXCEPTION} ValueError"
    alone = score(reason, "crash", "issue-code", ["issue-code", "issue-code"])
    assert alone.score == 4
    assert "no other reading reproduced it" in alone.to_check[-1]


def test_a_stored_reproduction_reads_back_to_the_same_score() -> None:
    patch = "diff --git a/tests/test_x.py b/tests/test_x.py\n"
    chosen: dict[str, object] = {
        "method": "issue-code",
        "outcome": "reproduces",
        "reason": f"{ISSUES_EXCEPTION} ValueError",
        "oracle": {"kind": "crash", "checks": "...", "assertion": ""},
        "test_patch": patch,
    }
    weaker = {**chosen, "test_patch": "other", "reason": ASSERTION_ABOUT_WORDS, "method": "x"}
    unrelated = {**chosen, "outcome": "unrelated", "method": "issue-session-raises"}
    stored = of_records("issue-code", patch, [weaker, chosen, unrelated])
    # The chosen candidate is the one holding the chosen patch; "x" reproduced too.
    assert stored.score == 5
    assert of_records(None, "", [chosen]).score == 0
    assert of_records("issue-code", "patch", []).score == 0
