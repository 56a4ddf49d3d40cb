"""The tests that ran after a fix are the tests that were drafted: a fix that reaches them (by
editing their file, by adding a module they import in place of the project's, by deleting the
existing tests it breaks) is never verified, and a fix given as a patch is judged as the same
change at a pull request's head is."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import docker
import pytest

from reprobot.bot.render.verdict import render_verdict
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import Verdict, verify
from tests.support.example_patches import FIX, NEW_TEST, example_diff
from tests.support.repos import git

MULTI = "tests/test_multi.py::test_multi_unit"


IMPORTS = "from durations import format_duration, parse_duration\n"

# The drafted test, added to an existing test module.
DRAFTED_IN_TEST_PARSE = example_diff(
    "tests/test_parse.py",
    lambda old: old + '\n\ndef test_multi_unit():\n    assert parse_duration("1h30m") == 5400\n',
)

# A "fix" that leaves the bug and replaces, in the test module, the function the test calls.
REPLACES_THE_HELPER = example_diff(
    "tests/test_parse.py",
    lambda old: old.replace(
        IMPORTS,
        IMPORTS + "\n_real = parse_duration\n\n\ndef parse_duration(text):\n"
        '    return 5400 if text == "1h30m" else _real(text)\n',
    ),
)

# A "fix" that adds a module named like the package next to the tests (pytest puts the tests'
# folder first on the path).
SHADOWS_THE_PACKAGE = """\
--- /dev/null
+++ b/tests/durations.py
@@ -0,0 +1,2 @@
+def parse_duration(text):
+    return 5400
"""

# The real fix, plus the deletion of an existing test of the module it changes.
DELETES_A_GUARD_TEST = FIX + example_diff(
    "tests/test_parse.py",
    lambda old: old.replace(
        '\n\ndef test_format():\n    assert format_duration(5400) == "1h30m"\n'
        '    assert format_duration(0) == "0s"\n',
        "\n",
    ),
)


def _verify(
    env: EnvImage, repo: Path, client: docker.DockerClient, tests: str, fix: str
) -> Verdict:
    base = RepoSnapshot.from_git(repo, "HEAD")
    return verify(client, env, base, Patch(tests, "tests.diff"), fix=Patch(fix, "fix.diff"))


def test_the_same_fix_as_a_patch_and_at_a_head_gets_the_same_verdict(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    example_repo: Path,
    tmp_path: Path,
) -> None:
    repo = tmp_path / "durations"
    shutil.copytree(example_repo, repo)
    for fix in (FIX, SHADOWS_THE_PACKAGE):
        subprocess.run(["git", "apply"], cwd=repo, input=fix.encode(), check=True)
        git(repo, "add", "-A")
        git(repo, "commit", "-q", "-m", "the change")
        base = RepoSnapshot.from_git(repo, "HEAD~1")
        head = RepoSnapshot.from_git(repo, "HEAD")
        tests = Patch(NEW_TEST, "tests.diff")
        as_patch = verify(docker_client, example_env, base, tests, fix=Patch(fix, "fix.diff"))
        at_head = verify(docker_client, example_env, base, tests, head=head)
        assert as_patch.status == at_head.status
        assert as_patch.to_json()["transitions"] == at_head.to_json()["transitions"]
        assert as_patch.review == at_head.review
        assert as_patch.guard_modules == at_head.guard_modules
        assert as_patch.change_coverage.ratio == at_head.change_coverage.ratio


# The real fix, plus a line that switches off coverage.py's tracer when the module loads: the
# change coverage it reports is what that process chose to report.
TRACER_OFF = FIX + example_diff(
    "src/durations/__init__.py", lambda old: "import sys\n\nsys.settrace(None)\n" + old
)

# The real fix, plus code that goes looking for the report's channel.
REACHES_THE_REPORT = FIX + example_diff(
    "src/durations/__init__.py",
    lambda old: "import os\n\n_CHANNEL = os.environ.get('REPROBOT_REPORT_FD')\n" + old,
)


def test_a_fix_that_switches_off_the_tracer_is_named_beside_its_coverage(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    verdict = _verify(example_env, example_repo, docker_client, NEW_TEST, TRACER_OFF)
    assert verdict.transitions[MULTI].kind == "F->P"
    assert verdict.tracing == ("src/durations/__init__.py line 3 (sys.settrace)",)
    text = render_verdict(verdict)
    assert "as measured inside the test process" in text
    assert "can switch off the tracer that measures it (`src/durations/__init__.py line 3" in text
    assert "_What this result rests on:_" in text


# The real fix, plus an edit of the context the drafted test's hunk rests on: the tests then
# apply over the fix only with fuzzy context.
MOVES_THE_CONTEXT = FIX + example_diff(
    "tests/test_parse.py",
    lambda old: old.replace(
        '    assert format_duration(0) == "0s"\n', '    assert format_duration(0) == "0s"  # zero\n'
    ),
)


IN_TEST_PARSE = "tests/test_parse.py::test_multi_unit"


@pytest.mark.parametrize(
    ("tests", "fix", "test_id", "why"),
    [
        # The replaced helper does make the drafted test pass; the verdict does not believe it.
        (
            DRAFTED_IN_TEST_PARSE,
            REPLACES_THE_HELPER,
            IN_TEST_PARSE,
            "it also edits tests/test_parse.py, which holds the reproducing tests",
        ),
        (
            NEW_TEST,
            SHADOWS_THE_PACKAGE,
            MULTI,
            "it adds tests/durations.py, which the reproducing tests would import in place of "
            "the project's own module",
        ),
        (NEW_TEST, DELETES_A_GUARD_TEST, MULTI, "(e.g. tests/test_parse.py::test_format)"),
        (
            NEW_TEST,
            REACHES_THE_REPORT,
            MULTI,
            "it adds code that reaches into the machinery reporting the tests' outcomes: "
            "src/durations/__init__.py line 3 (REPROBOT_REPORT_FD)",
        ),
        (
            DRAFTED_IN_TEST_PARSE,
            MOVES_THE_CONTEXT,
            IN_TEST_PARSE,
            "the reproducing tests applied over it only with fuzzy context (patch --fuzz=5)",
        ),
    ],
    ids=[
        "edits-the-tests-file",
        "shadows-the-package",
        "deletes-a-guard-test",
        "reaches-the-report",
        "fuzzy-context",
    ],
)
def test_a_fix_that_reaches_the_drafted_tests_needs_review(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    example_repo: Path,
    tests: str,
    fix: str,
    test_id: str,
    why: str,
) -> None:
    verdict = _verify(example_env, example_repo, docker_client, tests, fix)
    assert verdict.transitions[test_id].kind == "F->P"
    assert verdict.status == "needs_review" and not verdict.success
    assert any(why in reason for reason in verdict.review), verdict.review
