"""The moment an environment resolves at: the commit's day, bounded below by the first wheels
for the sandbox's Python; and the commit time read from a real repository."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

from reprobot.validation.env.env_image import later_moment
from reprobot.validation.env.resolution_date import FIRST_WHEELS, resolution_moment
from reprobot.validation.errors import ImageBuildError
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, make_repo


def test_a_commit_resolves_as_of_the_day_after_it() -> None:
    commit = datetime(2023, 3, 1, 12, 0, tzinfo=UTC)
    as_of = resolution_moment(commit, "3.11")
    assert as_of.moment == commit + timedelta(days=1)
    assert as_of.commit == commit
    assert as_of.why == "the commit's date"
    assert as_of.label() == "2023-03-02T12:00:00Z"


def test_an_older_commit_than_the_pythons_first_wheels_resolves_at_them() -> None:
    commit = datetime(2017, 5, 4, tzinfo=UTC)
    as_of = resolution_moment(commit, "3.9")
    assert as_of.moment == FIRST_WHEELS["3.9"]
    assert "first wheels for Python 3.9" in as_of.why
    # Every sandbox Python has its bound, each after the one before.
    assert list(FIRST_WHEELS) == ["3.9", "3.11", "3.13"]
    assert sorted(FIRST_WHEELS.values()) == list(FIRST_WHEELS.values())


def test_no_bound_without_a_date_or_when_turned_off() -> None:
    assert resolution_moment(None, "3.11").moment is None
    assert resolution_moment(None, "3.11").why == "the commit's date is unknown"
    off = resolution_moment(datetime(2023, 3, 1, tzinfo=UTC), "3.11", enabled=False)
    assert off.moment is None
    assert off.label() == ""


def test_a_snapshot_knows_when_its_commit_was_made(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"a.txt": "a\n"})
    sha = commit_files(repo, {"a.txt": "b\n"}, "later", date="2023-03-01T12:00:00+02:00")
    snapshot = RepoSnapshot.from_git(repo, sha)
    assert snapshot.commit_time() == datetime(2023, 3, 1, 10, 0, tzinfo=UTC)


def test_a_failed_build_that_took_later_releases_is_tried_as_of_the_newest() -> None:
    as_of = resolution_moment(datetime(2019, 5, 1, tzinfo=UTC), "3.9")
    failure = ImageBuildError("building x failed", released_later="2023-08-14T10:00:00Z")
    again = later_moment(as_of, failure)
    assert again is not None
    assert again.moment == datetime(2023, 8, 14, 10, 0, tzinfo=UTC)
    assert again.commit == as_of.commit
    assert again.why.startswith("the newest release the build took although it came out later")
    assert "as of 2021-01-01T00:00:00Z" in again.why
    # Nothing pinned later, an earlier pin, or an unbounded build: the failure stands.
    assert later_moment(as_of, ImageBuildError("x")) is None
    assert later_moment(as_of, ImageBuildError("x", released_later="2020-01-01T00:00:00Z")) is None
    assert later_moment(as_of, ImageBuildError("x", released_later="garbage")) is None
    unbounded = resolution_moment(None, "3.9")
    assert later_moment(unbounded, failure) is None
