"""What a page document says of the environment (when its packages really resolved) and of the
drafts a reproduction tried."""

from __future__ import annotations

import pytest

from reprobot.bot.pages.documents import TriedDraft, environment_view, packages_moment
from reprobot.validation import EnvImage
from reprobot.validation.env.envspec import EnvSpec

COMMIT_DAY = "the commit's date"
NEWEST = "the newest releases when the environment was built"


@pytest.mark.parametrize(
    ("as_of", "built_at", "shown", "why"),
    [
        # An old commit: the index as it stood then, long before the build.
        ("2023-08-15T00:00:00Z", "2026-11-27T10:00:00Z", "2023-08-15T00:00:00Z", COMMIT_DAY),
        # A commit of today resolves as of tomorrow: the build ended before that moment came.
        ("2026-11-28T09:00:00Z", "2026-11-27T10:00:00Z", "2026-11-27T10:00:00Z", NEWEST),
        # No bound (turned off, or the commit's date unknown): the newest at the build's end.
        ("", "2026-11-27T10:00:00Z", "2026-11-27T10:00:00Z", NEWEST),
        # An image built before the build's end was recorded keeps what it knew.
        ("2023-08-15T00:00:00Z", "", "2023-08-15T00:00:00Z", COMMIT_DAY),
        ("", "", "", COMMIT_DAY),
    ],
)
def test_packages_resolve_as_of_the_earlier_of_the_bound_and_the_build(
    as_of: str, built_at: str, shown: str, why: str
) -> None:
    assert packages_moment(as_of, COMMIT_DAY, built_at) == (shown, why)


def test_the_environment_view_shows_the_real_moment() -> None:
    env = EnvImage(
        tag="reprobot/env:x",
        spec=EnvSpec(python="3.11"),
        manifests="m",
        editable=True,
        source_sha="a" * 40,
        as_of="2026-11-28T09:00:00Z",
        as_of_why=COMMIT_DAY,
        built_at="2026-11-27T10:00:00Z",
    )
    view = environment_view(env)
    assert (view.as_of, view.as_of_why) == ("2026-11-27T10:00:00Z", NEWEST)
    # What every run pinned, so that a reader can run the tests as they ran.
    assert view.pinned == "PYTHONHASHSEED=0, TZ=UTC, LC_ALL=C.UTF-8"


def test_a_tried_draft_says_outcome_and_pages_stored_under_the_old_key_still_read() -> None:
    new = TriedDraft(method="issue-code", outcome="passes", summary="every test passes on R")
    assert new.model_dump()["outcome"] == "passes" and "verdict" not in new.model_dump()
    stored = {"method": "issue-code", "verdict": "passes", "summary": "every test passes on R"}
    assert TriedDraft.model_validate(stored) == new
