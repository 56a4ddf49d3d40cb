"""What drafters produce and what running a draft tells them.

A ``Draft`` is an unvalidated test patch. Drafters (the no-LLM drafter and the LLM methods)
only produce drafts; ``candidates`` runs them on R and decides which reproduce the issue.
``RunDraft`` is how a drafter that wants execution feedback (the LLM agent) runs one: it is
passed in, so drafters never touch Docker themselves.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from reprobot.validation import Patch


class DraftOutcome(StrEnum):
    """What a draft's run on R says about it."""

    REPRODUCES = "reproduces"  # fails, and for the reason
    PASSES = "passes"  # every new test passes on R: it does not show the bug
    BROKEN = "broken"  # fails because of itself: syntax, its own imports or names, fixtures
    UNRELATED = "unrelated"  # fails, but not in the way the issue describes
    NOT_APPLIED = "not-applied"  # the patch does not apply to R
    ERROR = "error"  # the sandbox could not run it (limits hit, install failed)


@dataclass(frozen=True)
class Draft:
    """A test patch as a drafter wrote it, before it ran."""

    method: str
    patch: Patch
    note: str = ""
    # The path its one new test module takes when it runs alone: drafts validated together need
    # distinct module names ("test_x_2.py"), the one chosen does not.
    alone_path: str = ""

    @property
    def test_files(self) -> tuple[str, ...]:
        return self.patch.files


@dataclass(frozen=True)
class Feedback:
    """The run of one draft on R, in words a drafter (or a model) can act on."""

    outcome: DraftOutcome
    summary: str
    failing_tests: tuple[str, ...] = ()


RunDraft = Callable[[Draft], Feedback]
