"""Fixes of one module of a small project made by a test, and the end-to-end check the
expected-value phrasings share: the issue is reproduced in the real sandbox with an
expected-value oracle, a right fix is verified and a wrong one is not."""

from __future__ import annotations

import difflib
from pathlib import Path

import docker

from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.oracles import OracleKind
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify


def line_edit(module: str, path: str, old: str, new: str) -> Patch:
    """A patch of ``path`` (whose text is ``module``) replacing the line ``old`` by ``new``."""
    changed = module.replace(old, new.rstrip("\n") + "\n")
    assert changed != module, f"{old!r} is not a line of {path}"
    lines = difflib.unified_diff(
        module.splitlines(keepends=True),
        changed.splitlines(keepends=True),
        f"a/{path}",
        f"b/{path}",
    )
    return Patch("".join(lines), name="fix.diff")


def assert_expected_oracle_verifies_only_the_right_fix(
    text: str,
    repo: Path,
    name: str,
    env: EnvImage,
    settings: Settings,
    client: docker.DockerClient,
    right: Patch,
    wrong: Patch,
) -> None:
    """The issue ``text`` reproduced on ``repo`` with an expected-value oracle; ``right``
    verified, ``wrong`` (another value) not."""
    base = RepoSnapshot.from_git(repo, "HEAD", name)
    result = reproduce(read_issue(text), base, env, settings, client=client)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.oracle.kind is OracleKind.EXPECTED, result.test_patch
    tests = Patch(result.test_patch, name="tests.diff")
    assert verify(client, env, base, tests, fix=right).status == "verified"
    assert verify(client, env, base, tests, fix=wrong).status == "not_verified"
