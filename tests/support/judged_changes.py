"""A change to a clone of the example project, judged by ``verify`` as a pull request's head
(``--head``) or as a patch (``--fix``): the two ways a change reaches a verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import Verdict, verify
from tests.support.example_patches import NEW_TEST
from tests.support.repos import git

MODES = ["head", "fix"]


def clone_of(repo: Path, dest: Path) -> Path:
    subprocess.run(["git", "clone", "-q", str(repo), str(dest)], check=True)
    return dest


def commit_all(repo: Path, message: str = "a change") -> RepoSnapshot:
    """Commit everything in the work tree; the new commit's snapshot."""
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", message)
    return RepoSnapshot.from_git(repo, "HEAD")


def judge(
    client: docker.DockerClient,
    env: EnvImage,
    base: RepoSnapshot,
    head: RepoSnapshot,
    mode: str,
    tests: Patch | None = None,
) -> Verdict:
    """``verify`` of the change from ``base`` to ``head`` with the example's drafted test (or
    ``tests``), as a head or as the patch git writes for it."""
    drafted = tests or Patch(NEW_TEST)
    if mode == "head":
        return verify(client, env, base, drafted, head=head)
    assert base.path is not None
    # git's own bytes: a binary patch ends in a blank line that stripping would drop.
    diff = subprocess.run(
        ["git", "-C", str(base.path), "diff", "--binary", base.sha, head.sha],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return verify(client, env, base, drafted, fix=Patch(diff))
