"""Versions from git for trees streamed without git data."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.validation.env.detect.metadata import ProjectMeta
from reprobot.validation.env.detect.scm_version import (
    git_version,
    version_from_description,
    version_tool,
)
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, git, make_repo

SHA = "0123456789abcdef0123456789abcdef01234567"


@pytest.mark.parametrize(
    ("described", "version"),
    [
        ("v1.2.3-0-g0123456", "1.2.3"),
        ("1.2.3-4-g0123456", "1.2.3.post4+g0123456"),
        ("release-2.0rc1-2-g0123456", "2.0rc1.post2+g0123456"),
        ("1.0.post1-3-g0123456", "1.0.post1+g0123456"),
        ("nightly-5-g0123456", "0.0.0+g0123456"),
        (None, "0.0.0+g0123456"),
    ],
)
def test_version_from_description(described: str | None, version: str) -> None:
    assert version_from_description(described, SHA) == version


@pytest.mark.parametrize(
    ("files", "tool"),
    [
        (
            {"pyproject.toml": '[build-system]\nrequires = ["setuptools", "setuptools_scm>=8"]\n'},
            "setuptools-scm",
        ),
        ({"pyproject.toml": "[tool.setuptools_scm]\n"}, "setuptools-scm"),
        ({"pyproject.toml": '[tool.hatch.version]\nsource = "vcs"\n'}, "hatch-vcs"),
        ({"pyproject.toml": '[tool.pdm.version]\nsource = "scm"\n'}, "pdm-backend (scm)"),
        ({"pyproject.toml": '[build-system]\nrequires = ["flit_scm"]\n'}, "flit-scm"),
        ({"setup.py": "setup(use_scm_version=True)"}, "setuptools-scm"),
        ({"setup.cfg": "[versioneer]\nVCS = git\n"}, "versioneer"),
        ({"setup.cfg": "[pbr]\nskip_authors = 1\n"}, "pbr"),
        ({"pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'}, None),
    ],
)
def test_version_tool(files: dict[str, str], tool: str | None) -> None:
    meta = ProjectMeta.read(files.get)
    assert version_tool(meta, files.get) == tool


def test_git_version_of_a_tagged_repository(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"pyproject.toml": "[tool.setuptools_scm]\n"})
    git(repo, "tag", "v0.4.0")
    sha = commit_files(repo, {"a.py": ""}, "later")
    found = git_version(RepoSnapshot.from_git(repo, "HEAD"))
    assert found is not None
    assert found.version == f"0.4.0.post1+g{sha[:7]}"
    assert found.environment()["SETUPTOOLS_SCM_PRETEND_VERSION"] == found.version
    assert found.label().startswith("setuptools-scm: 0.4.0.post1")


def test_no_version_for_a_static_one(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "r", {"pyproject.toml": '[project]\nname = "x"\nversion = "1"\n'})
    assert git_version(RepoSnapshot.from_git(repo, "HEAD")) is None
