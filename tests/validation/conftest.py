"""What the tests of verdicts share: a clone of the example project to change and judge."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.judged_changes import clone_of


@pytest.fixture
def clone(example_repo: Path, tmp_path: Path) -> Path:
    """A clone of the example project's repository, for one test's commits."""
    return clone_of(example_repo, tmp_path / "durations")
