"""A pair of sandbox runs, before and after a fix, on a real Docker engine: run side by side or
one after the other, the two sides come out the same, and a verdict is the same either way;
both sides run under one hash seed, time zone and locale."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.pair import Side, run_pair
from reprobot.validation.sandbox.determinism import HASH_SEED, SECOND_HASH_SEED
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import FIX, NEW_TEST

pytestmark = pytest.mark.docker

TEST_ID = "tests/test_multi.py::test_multi_unit"


@pytest.mark.parametrize("at_once", [True, False], ids=["side-by-side", "one-after-other"])
def test_each_side_runs_its_own_patches(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path, at_once: bool
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    tests, fix = Patch(NEW_TEST, "tests.diff"), Patch(FIX, "fix.diff")
    pair = run_pair(
        docker_client,
        example_env,
        Side(base, [tests]),
        Side(base, [fix, tests]),
        [TEST_ID],
        coverage=True,
        coverage_files=fix.python_paths,
        at_once=at_once,
    )
    assert pair.before.outcomes == {TEST_ID: Outcome.FAILED}
    assert pair.after.outcomes == {TEST_ID: Outcome.PASSED}
    assert [p.name for p in pair.after.patches] == ["fix.diff", "tests.diff"]
    assert [p.name for p in pair.before.patches] == ["tests.diff"]
    before_cov, after_cov = pair.coverage
    assert before_cov is not None and after_cov is not None
    # Line 14 is the loop the fix adds: it ran after the fix, and before it the line was another.
    assert 14 in after_cov["src/durations/parse.py"].executed


def test_a_verdict_is_the_same_whether_its_pairs_run_at_once_or_not(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    tests, fix = Patch(NEW_TEST, "tests.diff"), Patch(FIX, "fix.diff")
    verdicts = [
        verify(docker_client, example_env, base, tests, fix=fix, at_once=at_once)
        for at_once in (True, False)
    ]
    together, apart = verdicts
    assert together.status == apart.status == "verified"
    assert together.transitions == apart.transitions
    assert together.guard_modules == apart.guard_modules == ("tests/test_parse.py",)
    assert together.change_coverage == apart.change_coverage


# A test whose outcome the hash seed decides, and one that reads what else the run pins.
DRAWN = """\
diff --git a/tests/test_drawn.py b/tests/test_drawn.py
new file mode 100644
--- /dev/null
+++ b/tests/test_drawn.py
@@ -0,0 +1,10 @@
+import os
+
+
+def test_order_of_a_set():
+    assert list({"days", "hours", "minutes", "seconds", "weeks"})[0] == "seconds"
+
+
+def test_pinned():
+    assert (os.environ["TZ"], os.environ["LC_ALL"]) == ("UTC", "C.UTF-8")
+    assert os.environ["PYTHONHASHSEED"] in ("0", "1")
"""
ORDER = "tests/test_drawn.py::test_order_of_a_set"
PINNED = "tests/test_drawn.py::test_pinned"


def test_both_sides_draw_the_same_hash_seed_and_the_seed_is_the_callers(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    # Under seed 0 the set's first element is "seconds"; under seed 1 it is not. A pair never
    # lets a side pass by its own draw: both sides run under the seed the caller names.
    base = RepoSnapshot.from_git(example_repo, "HEAD")
    tests = Patch(DRAWN, "tests.diff")
    for seed, expected in ((HASH_SEED, Outcome.PASSED), (SECOND_HASH_SEED, Outcome.FAILED)):
        pair = run_pair(
            docker_client,
            example_env,
            Side(base, [tests]),
            Side(base, [tests]),
            [ORDER, PINNED],
            hash_seed=seed,
        )
        for run in (pair.before, pair.after):
            assert run.outcomes == {ORDER: expected, PINNED: Outcome.PASSED}, run.error
