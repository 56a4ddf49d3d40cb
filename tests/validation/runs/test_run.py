"""run_tests against a real Docker engine: outcomes, patches, coverage, re-install."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.example_patches import FIX, NEW_TEST

pytestmark = pytest.mark.docker


def test_whole_suite_passes(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD")
    run = run_tests(docker_client, example_env, snapshot)
    assert run.error is None
    assert run.patches_applied
    assert len(run.outcomes) == 7
    assert set(run.outcomes.values()) == {Outcome.PASSED}
    assert run.outcomes["tests/test_parse.py::test_single_unit[15m-900]"] is Outcome.PASSED


def test_new_test_fails_before_and_passes_after_fix(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD")
    test_id = "tests/test_multi.py::test_multi_unit"
    before = run_tests(
        docker_client, example_env, snapshot, [Patch(NEW_TEST, "test.diff")], [test_id]
    )
    assert before.outcomes == {test_id: Outcome.FAILED}
    assert "invalid literal for int()" in before.failures[test_id]
    after = run_tests(
        docker_client,
        example_env,
        snapshot,
        [Patch(NEW_TEST, "test.diff"), Patch(FIX, "fix.diff")],
        [test_id],
        coverage=True,
    )
    assert after.outcomes == {test_id: Outcome.PASSED}
    assert after.coverage is not None
    parse = after.coverage["src/durations/parse.py"]
    # The loop the fix adds ran; the "missing unit" branch did not.
    fixed = (example_repo / "src/durations/parse.py").read_text()
    assert "for char in text" not in fixed  # the repository itself stays unpatched
    loop, missing_unit = 14, 22  # "for char in text:" and the "missing unit" raise
    assert loop in parse.statements and loop in parse.executed
    assert missing_unit in parse.statements and missing_unit not in parse.executed
    assert after.patches[1].method == "git apply"


def test_coverage_contexts_name_the_test_function_that_ran_each_line(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD")
    run = run_tests(
        docker_client,
        example_env,
        snapshot,
        [Patch(NEW_TEST, "test.diff")],
        ["tests/test_multi.py", "tests/test_parse.py::test_format"],
        coverage=True,
        contexts=True,
    )
    assert run.coverage is not None
    parse = run.coverage["src/durations/parse.py"]
    unit_line, format_loop = 13, 25  # "unit = text[-1]" and the loop of format_duration
    assert parse.contexts[unit_line] == frozenset({"test_multi.test_multi_unit"})
    assert parse.contexts[format_loop] == frozenset({"test_parse.test_format"})
    # The def lines run at import, outside any test: no context is recorded for them.
    assert 6 in parse.executed and 6 not in parse.contexts
    # Without contexts asked for, none are recorded.
    plain = run_tests(
        docker_client, example_env, snapshot, [], ["tests/test_parse.py"], coverage=True
    )
    assert plain.coverage is not None
    assert plain.coverage["src/durations/parse.py"].contexts == {}
    assert len(plain.coverage) > 1  # the whole tree: the package's other modules too


def test_coverage_narrowed_to_a_fix_files_measures_them_alike_and_no_other(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD")
    tests = [Patch(NEW_TEST, "test.diff")]
    selection = ["tests/test_multi.py", "tests/test_parse.py"]
    whole = run_tests(docker_client, example_env, snapshot, tests, selection, coverage=True)
    fix = Patch(FIX, "fix.diff")
    assert fix.python_paths == ("src/durations/parse.py",)
    narrow = run_tests(
        docker_client,
        example_env,
        snapshot,
        tests,
        selection,
        coverage=True,
        contexts=True,
        coverage_files=fix.python_paths,
    )
    assert whole.coverage is not None and narrow.coverage is not None
    assert set(narrow.coverage) == {"src/durations/parse.py"} < set(whole.coverage)
    measured, reference = (
        narrow.coverage["src/durations/parse.py"],
        whole.coverage["src/durations/parse.py"],
    )
    assert measured.statements == reference.statements
    assert measured.executed == reference.executed
    assert "test_multi.test_multi_unit" in measured.contexts[13]


def test_patch_that_does_not_apply_is_a_result(
    docker_client: docker.DockerClient, example_env: EnvImage, example_repo: Path
) -> None:
    snapshot = RepoSnapshot.from_git(example_repo, "HEAD")
    broken = FIX.replace("-    unit = text[-1]", "-    unit = text[-2]")
    run = run_tests(docker_client, example_env, snapshot, [Patch(broken, "fix.diff")])
    assert not run.patches_applied
    assert run.patches[0].name == "fix.diff" and not run.patches[0].applied
    assert run.outcomes == {}


def test_collection_error_and_outcome_kinds(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    snapshot = tiny_snapshot(
        {
            "tests/test_kinds.py": (
                "import pytest\n\n"
                "def test_ok():\n    assert True\n\n"
                "def test_bad():\n    assert 1 == 2\n\n"
                "@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture')\n\n"
                "def test_err(broken):\n    pass\n\n"
                "@pytest.mark.skip(reason='no')\ndef test_skip():\n    pass\n\n"
                "class TestGroup:\n    @pytest.mark.parametrize('n', [1, 2])\n"
                "    def test_param(self, n):\n        assert n == 1\n\n"
                # A project's own skip exception (sympy's runner reports it as a skip).
                "class Skipped(Exception):\n    pass\n\n"
                "def test_own_skip():\n    raise Skipped('NumPy not installed')\n\n"
                "class SkippedNot(Exception):\n    pass\n\n"
                "def test_other_exception():\n    raise SkippedNot('a failure')\n\n"
                # Expected failures, marked or called, and unexpected passes.
                "@pytest.mark.xfail(reason='known')\ndef test_xfail():\n    assert False\n\n"
                "def test_xfail_called():\n    pytest.xfail('not yet')\n\n"
                "@pytest.mark.xfail(reason='lenient')\ndef test_xpass():\n    pass\n\n"
                "@pytest.mark.xfail(strict=True)\ndef test_xpass_strict():\n    pass\n"
            ),
            "tests/test_broken.py": "import not_a_module_anywhere\n\ndef test_never():\n    pass\n",
        }
    )
    run = run_tests(
        docker_client,
        tiny_env,
        snapshot,
        selection=["tests/test_kinds.py", "tests/test_broken.py::test_never"],
    )
    assert run.outcomes["tests/test_kinds.py::test_ok"] is Outcome.PASSED
    assert run.outcomes["tests/test_kinds.py::test_bad"] is Outcome.FAILED
    assert run.outcomes["tests/test_kinds.py::test_err"] is Outcome.ERROR
    assert run.outcomes["tests/test_kinds.py::test_skip"] is Outcome.SKIPPED
    assert run.outcomes["tests/test_kinds.py::TestGroup::test_param[1]"] is Outcome.PASSED
    assert run.outcomes["tests/test_kinds.py::TestGroup::test_param[2]"] is Outcome.FAILED
    assert run.outcomes["tests/test_kinds.py::test_own_skip"] is Outcome.SKIPPED
    assert run.outcomes["tests/test_kinds.py::test_other_exception"] is Outcome.FAILED
    assert run.outcomes["tests/test_kinds.py::test_xfail"] is Outcome.XFAILED
    assert run.outcomes["tests/test_kinds.py::test_xfail_called"] is Outcome.XFAILED
    assert run.outcomes["tests/test_kinds.py::test_xpass"] is Outcome.XPASSED
    assert run.outcomes["tests/test_kinds.py::test_xpass_strict"] is Outcome.FAILED
    assert run.outcomes["tests/test_broken.py"] is Outcome.ERROR
    assert run.outcomes["tests/test_broken.py::test_never"] is Outcome.ERROR


def test_changed_manifest_reinstalls_offline(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    from tests.support.repos import TINY_PYPROJECT

    snapshot = tiny_snapshot(
        {
            "pyproject.toml": TINY_PYPROJECT.replace('version = "1.0"', 'version = "2.0"'),
            "tests/test_version.py": (
                "from importlib.metadata import version\n\n"
                "def test_version():\n    assert version('tiny') == '2.0'\n"
            ),
        }
    )
    run = run_tests(docker_client, tiny_env, snapshot, selection=["tests/test_version.py"])
    assert run.install_ok
    assert run.outcomes == {"tests/test_version.py::test_version": Outcome.PASSED}
    # The side of a verdict that holds the change never runs its build code: the image's
    # install stands, and the new version is not installed.
    untrusted = run_tests(
        docker_client,
        tiny_env,
        snapshot,
        selection=["tests/test_version.py"],
        trusted_build=False,
    )
    assert untrusted.outcomes == {"tests/test_version.py::test_version": Outcome.FAILED}


# A project whose pytest configuration collects doctests of its text files and modules beside
# its tests: every item is reported under the id pytest collected it by, none is set aside.
DOCTEST_PROJECT = {
    "pytest.ini": (
        "[pytest]\naddopts = --doctest-glob='*.rst' --doctest-glob='*.md' --doctest-modules\n"
        "testpaths = tiny docs tests\n"
    ),
    "tiny/calc.py": (
        'def double(x):\n    """\n    >>> double(21)\n    42\n    """\n    return 2 * x\n'
    ),
    "docs/usage.rst": "Usage\n=====\n\n>>> from tiny import add\n>>> add(1, 2)\n3\n",
    "docs/guide.md": "# Guide\n\nA wrong example:\n\n>>> from tiny import add\n>>> add(2, 2)\n5\n",
    "docs/v1.0/notes.rst": ">>> 'a.b'.split('.')\n['a', 'b']\n",
    "tests/test_add.py": (
        "from tiny import add\n\n\ndef test_add():\n    assert add(1, 1) == 2\n\n\n"
        "def test_wrong():\n    assert add(1, 1) == 3\n"
    ),
}


def test_doctests_of_text_files_and_modules_are_reported_beside_tests(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    run = run_tests(docker_client, tiny_env, tiny_snapshot(DOCTEST_PROJECT))
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.unmatched == ()
    assert run.outcomes == {
        "tiny/calc.py::tiny.calc.double": Outcome.PASSED,
        "docs/usage.rst::usage.rst": Outcome.PASSED,
        "docs/guide.md::guide.md": Outcome.FAILED,
        "docs/v1.0/notes.rst::notes.rst": Outcome.PASSED,
        "tests/test_add.py::test_add": Outcome.PASSED,
        "tests/test_add.py::test_wrong": Outcome.FAILED,
    }
    assert "Expected:\n    5\nGot:\n    4" in run.failures["docs/guide.md::guide.md"]
    # A doctest of a text file is selected by its id, as any test is.
    one = run_tests(
        docker_client, tiny_env, tiny_snapshot(DOCTEST_PROJECT), selection=["docs/guide.md"]
    )
    assert one.outcomes == {"docs/guide.md::guide.md": Outcome.FAILED}


def test_pytests_cache_is_there_for_plugins_and_outside_the_tree(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
) -> None:
    # A plugin keeping its state in pytest's cache (pytest-memray's limits) finds one; a cache
    # the tree holds (its last failures) is not the one pytest reads.
    snapshot = tiny_snapshot(
        {
            ".pytest_cache/v/cache/lastfailed": '{"tests/test_cache.py::test_cache": true}\n',
            "tests/test_cache.py": (
                "import os\n\n\ndef test_cache(request):\n"
                "    request.config.cache.set('reprobot/k', 1)\n"
                "    assert request.config.cache.get('reprobot/k', None) == 1\n"
                "    assert not str(request.config.cache._cachedir).startswith(os.getcwd())\n"
            ),
        }
    )
    run = run_tests(docker_client, tiny_env, snapshot, selection=["tests/test_cache.py"])
    assert run.outcomes == {"tests/test_cache.py::test_cache": Outcome.PASSED}, run.failures
