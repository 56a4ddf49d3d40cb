"""The calculator project both drafter test modules draft against, made once per module."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.generation.drafter.reading import TreeContext
from reprobot.generation.repo.test_layout import TestLayout
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.calc_project import calc_repo


@pytest.fixture(scope="module")
def repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return calc_repo(tmp_path_factory.mktemp("drafter") / "calc")


@pytest.fixture(scope="module")
def snapshot(repo: Path) -> RepoSnapshot:
    return RepoSnapshot.from_git(repo, "HEAD", "acme/calc")


def empty_tree() -> TreeContext:
    """What the drafter reads of a tree that holds nothing."""
    return TreeContext(TestLayout((), (), (), {}), {}, {}, ())
