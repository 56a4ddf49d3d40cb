"""A candidate's runs in ``bench pod``, in the real sandbox: the side holding the candidate runs
as ``verify`` runs a change, its build code never run."""

from __future__ import annotations

import difflib
from collections.abc import Callable
from pathlib import Path

import docker

from reprobot.bench.data.instances import Instance
from reprobot.bench.envs.environments import Prepared
from reprobot.bench.pod.judge import CandidateFix, TestPlan, evaluate_candidate, reference
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.pair import Side, run_side
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import TINY_PYPROJECT

VERSION_TEST = """\
diff --git a/tests/test_version.py b/tests/test_version.py
new file mode 100644
--- /dev/null
+++ b/tests/test_version.py
@@ -0,0 +1,5 @@
+from importlib.metadata import version
+
+
+def test_version():
+    assert version("tiny") == "2.0"
"""

# The "fix" is a version bump that only a new install makes true: its build code would have to
# run for the test to pass.
BUMP = "".join(
    difflib.unified_diff(
        TINY_PYPROJECT.splitlines(keepends=True),
        TINY_PYPROJECT.replace('version = "1.0"', 'version = "2.0"').splitlines(keepends=True),
        "a/pyproject.toml",
        "b/pyproject.toml",
    )
).replace("--- a/", "diff --git a/pyproject.toml b/pyproject.toml\n--- a/", 1)


def test_a_candidate_is_never_installed_and_what_it_changes_is_named_for_review(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
    tmp_path: Path,
) -> None:
    base = tiny_snapshot({"pyproject.toml": TINY_PYPROJECT})
    prepared = Prepared(base, tiny_env)
    plan = TestPlan(Patch(VERSION_TEST, name="tests.diff"), ("tests/test_version.py",))
    instance = Instance(
        instance_id="test__tiny-1",
        repo="test/tiny",
        base_commit=base.sha,
        environment_setup_commit=base.sha,
        version="1.0",
        patch=BUMP,
        test_patch=VERSION_TEST,
        fail_to_pass=(),
        pass_to_pass=(),
    )
    limits = RunLimits()
    reference_result = reference(docker_client, instance, plan, prepared, limits, tmp_path)
    assert reference_result.before == {"tests/test_version.py::test_version": "failed"}
    candidate = CandidateFix("test__tiny-1", "bump", "m", BUMP, resolved=False, index=0)
    result = evaluate_candidate(
        docker_client, candidate, plan, prepared, limits, tmp_path, reference_result
    )
    # Its build code does not run, so the image's install stands and the bump is not seen.
    assert result.candidate_applied and result.tests_applied
    assert result.after == {"tests/test_version.py::test_version": "failed"}
    # The same side run as trusted is installed again, and the bump is seen.
    fix = Patch(BUMP, name="candidate.diff")
    trusted = run_side(docker_client, tiny_env, Side(base, [fix, plan.tests]), plan.selection)
    assert trusted.outcomes == {"tests/test_version.py::test_version": Outcome.PASSED}
