"""A change to a clone of the example project, judged by ``verify`` as a pull request's head
(``--head``) or as a patch (``--fix``): the two ways a change reaches a verdict."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker

from reprobot.validation.concerns import change_concerns
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch, diff_between
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import Verdict, verify
from tests.support.example_patches import FIX, NEW_TEST
from tests.support.repos import git

MODES = ["head", "fix"]
PARSE = "src/durations/parse.py"


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
    return verify(client, env, base, drafted, fix=git_patch(base, head))


def git_patch(base: RepoSnapshot, head: RepoSnapshot) -> Patch:
    """The change from ``base`` to ``head`` as the patch git writes for it."""
    assert base.path is not None
    # git's own bytes: a binary patch ends in a blank line that stripping would drop.
    diff = subprocess.run(
        ["git", "-C", str(base.path), "diff", "--binary", base.sha, head.sha],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    return Patch(diff)


def fixed_source(repo: Path) -> str:
    """The text of the example's ``parse.py`` with its real fix, the work tree left as it was."""
    subprocess.run(["git", "-C", str(repo), "apply", "-"], input=FIX.encode(), check=True)
    text = (repo / PARSE).read_text()
    git(repo, "checkout", "--", PARSE)
    return text


def write_files(repo: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (repo / rel).parent.mkdir(parents=True, exist_ok=True)
        (repo / rel).write_text(text)


def read_before_running(base: RepoSnapshot, head: RepoSnapshot, mode: str) -> list[str]:
    """What ``verify`` reads in the change before any test runs (``change_concerns``), judged
    as ``mode``: the reasons a pass of it would need review, known even when it never passes."""
    if mode == "head":
        return change_concerns(base, diff_between(base, head), head)
    return change_concerns(base, git_patch(base, head))
