"""verify() end to end on a real Docker engine and real git commits."""

from __future__ import annotations

import subprocess
from pathlib import Path

import docker
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import FIX, NEW_TEST
from tests.support.repos import git

pytestmark = pytest.mark.docker
TEST_ID = "tests/test_multi.py::test_multi_unit"


def test_fix_as_patch_is_verified(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    verdict = verify(docker_client, example_env, base, Patch(NEW_TEST, "test.diff"), fix=Patch(FIX))
    assert verdict.status == "verified"
    assert verdict.to_json()["transitions"] == {TEST_ID: "F->P"}
    cc = verdict.change_coverage
    # 4 removed statements (old lines 13-16) and 10 added statement lines; the tests miss the
    # removed "unknown unit" raise and the two new error raises.
    assert (cc.covered, cc.executable) == (11, 14)
    assert cc.files[0].uncovered == ["-15", "+20", "+22"]


def test_head_commit_that_breaks_a_test_is_not_verified(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path, tmp_path: Path
) -> None:
    work = tmp_path / "clone"
    subprocess.run(["git", "clone", "-q", str(example_repo), str(work)], check=True)
    base_sha = git(work, "rev-parse", "HEAD")
    parse = work / "src/durations/parse.py"
    # A "fix" that makes the new test pass by special-casing it, and breaks plain numbers.
    text = parse.read_text().replace(
        "    if text.isdigit():\n        return int(text)\n",
        "    if text == '1h30m':\n        return 5400\n",
    )
    parse.write_text(text)
    git(work, "commit", "-qam", "special case")
    base = RepoSnapshot.from_git(work, base_sha)
    head = RepoSnapshot.from_git(work, "HEAD")
    tests = Patch(
        NEW_TEST
        + NEW_TEST.replace("test_multi", "test_plain").replace(
            'assert parse_duration("1h30m") == 5400', 'assert parse_duration("42") == 42'
        ),
        "test.diff",
    )
    verdict = verify(docker_client, example_env, base, tests, head=head)
    assert verdict.status == "not_verified"
    kinds = verdict.to_json()["transitions"]
    assert kinds[TEST_ID] == "F->P"
    assert kinds["tests/test_plain.py::test_plain_unit"] == "P->F"
    assert verdict.head_sha == head.sha


def test_test_patch_that_does_not_apply_is_inconclusive(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    broken = Patch(
        NEW_TEST.replace("--- /dev/null", "--- a/tests/test_parse.py")
        .replace("+++ b/tests/test_multi.py", "+++ b/tests/test_parse.py")
        .replace("@@ -0,0 +1,5 @@", "@@ -1,5 +1,5 @@")
    )
    verdict = verify(docker_client, example_env, base, broken, fix=Patch(FIX))
    assert verdict.status == "inconclusive"
    assert not verdict.success
    assert any("does not apply" in r for r in verdict.reasons)
