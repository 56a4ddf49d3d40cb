"""Runners beyond pytest, against a real Docker engine: a unittest-only project, a Django
project's ``manage.py test``, and a Django-style project with its own ``tests/runtests.py``.
Each reports per-test outcomes in pytest's id shape, import errors as outcomes, a selection of
ids, and coverage."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.django_projects import (
    FRAMEWORK_SPEC,
    MANAGE,
    SETTINGS,
    django_pyproject,
    framework_repo,
)
from tests.support.repos import make_repo, pyproject

pytestmark = pytest.mark.docker

CALC = "def add(a, b):\n    return a + b\n\n\ndef div(a, b):\n    return a / b\n"
CALC_TESTS = """\
import unittest

import calc


class CalcTest(unittest.TestCase):
    def test_add(self):
        self.assertEqual(calc.add(1, 2), 3)

    def test_add_wrong(self):
        self.assertEqual(calc.add(1, 2), 4)

    def test_div_by_zero(self):
        calc.div(1, 0)

    @unittest.skip("not today")
    def test_skipped(self):
        pass

    @unittest.expectedFailure
    def test_known_bug(self):
        self.assertEqual(calc.add(0.1, 0.2), 0.3)

    def test_sub(self):
        for a in (1, 2):
            with self.subTest(a=a):
                self.assertEqual(calc.add(a, 0), 1)

    class Nested(unittest.TestCase):
        pass


class BrokenFixture(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        raise RuntimeError("no database")

    def test_never_runs(self):
        pass
"""


@pytest.fixture(scope="module")
def calc(
    docker_client: docker.DockerClient, tmp_path_factory: pytest.TempPathFactory, settings: Settings
) -> tuple[RepoSnapshot, EnvImage]:
    repo = make_repo(
        tmp_path_factory.mktemp("calc") / "calc",
        {
            "pyproject.toml": pyproject("calc"),
            "calc/__init__.py": CALC,
            "tests/__init__.py": "",
            "tests/test_calc.py": CALC_TESTS,
            "tests/test_broken.py": "import not_a_module\n",
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/calc")
    spec = EnvSpec(python="3.11", test_cmd="python -m unittest discover -v")
    return snapshot, ensure_environment(docker_client, spec, snapshot, settings)


def test_a_unittest_project_reports_every_outcome(
    docker_client: docker.DockerClient, calc: tuple[RepoSnapshot, EnvImage]
) -> None:
    snapshot, env = calc
    run = run_tests(docker_client, env, snapshot)
    assert run.error is None, run.log_excerpt[-2000:]
    case = "tests/test_calc.py::CalcTest::"
    assert run.outcomes == {
        f"{case}test_add": Outcome.PASSED,
        f"{case}test_add_wrong": Outcome.FAILED,
        f"{case}test_div_by_zero": Outcome.ERROR,
        f"{case}test_skipped": Outcome.SKIPPED,
        # An expected failure is one, as pytest's xfail is: never a pass.
        f"{case}test_known_bug": Outcome.XFAILED,
        # One failing subtest fails its test.
        f"{case}test_sub": Outcome.FAILED,
        # A class fixture that fails errors every test of its class.
        "tests/test_calc.py::BrokenFixture::test_never_runs": Outcome.ERROR,
        # A module that does not import is an outcome of its file, as in pytest.
        "tests/test_broken.py": Outcome.ERROR,
    }
    assert "ZeroDivisionError" in run.failures[f"{case}test_div_by_zero"]
    assert (
        "4 != 3" in run.failures[f"{case}test_add_wrong"]
        or "3 != 4" in run.failures[f"{case}test_add_wrong"]
    )
    assert "not_a_module" in run.failures["tests/test_broken.py"]


def test_a_unittest_selection_runs_only_those_tests_with_coverage(
    docker_client: docker.DockerClient, calc: tuple[RepoSnapshot, EnvImage]
) -> None:
    snapshot, env = calc
    selected = ["tests/test_calc.py::CalcTest::test_add", "tests/test_broken.py"]
    run = run_tests(docker_client, env, snapshot, selection=selected, coverage=True, contexts=True)
    assert run.error is None, run.log_excerpt[-2000:]
    assert run.outcomes == {
        "tests/test_calc.py::CalcTest::test_add": Outcome.PASSED,
        "tests/test_broken.py": Outcome.ERROR,
    }
    assert run.coverage is not None
    lines = run.coverage["calc/__init__.py"]
    assert 2 in lines.executed  # add's body ran
    assert 6 not in lines.executed  # div's did not


POLLS = """\
def was_published_recently(age_days):
    return age_days < 1
"""
POLLS_TESTS = """\
from django.contrib.auth.models import User
from django.test import SimpleTestCase, TestCase

from polls import was_published_recently


class RecentTests(SimpleTestCase):
    def test_today(self):
        self.assertTrue(was_published_recently(0))

    def test_future_is_not_recent(self):
        self.assertFalse(was_published_recently(-3))


class UserTests(TestCase):
    def test_database(self):
        User.objects.create(username="a")
        self.assertEqual(User.objects.count(), 1)
"""


def test_a_django_project_runs_through_manage_py(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "mysite",
        {
            "pyproject.toml": django_pyproject("mysite", '"mysite", "polls"'),
            "manage.py": MANAGE,
            "mysite/__init__.py": "",
            "mysite/settings.py": SETTINGS,
            "polls/__init__.py": POLLS,
            "polls/tests.py": POLLS_TESTS,
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/mysite")
    spec = EnvSpec(python="3.11", test_cmd="python manage.py test -v 2")
    env = ensure_environment(docker_client, spec, snapshot, settings)
    run = run_tests(docker_client, env, snapshot, coverage=True)
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {
        "polls/tests.py::RecentTests::test_today": Outcome.PASSED,
        "polls/tests.py::RecentTests::test_future_is_not_recent": Outcome.FAILED,
        "polls/tests.py::UserTests::test_database": Outcome.PASSED,
    }
    assert run.coverage is not None and 2 in run.coverage["polls/__init__.py"].executed
    one = run_tests(
        docker_client, env, snapshot, selection=["polls/tests.py::UserTests::test_database"]
    )
    assert one.outcomes == {"polls/tests.py::UserTests::test_database": Outcome.PASSED}


BASIC_TESTS = """\
from django.test import SimpleTestCase

from framework.text import slugify


class SlugTests(SimpleTestCase):
    def test_spaces(self):
        self.assertEqual(slugify("A b"), "a-b")

    def test_strips(self):
        self.assertEqual(slugify(" a "), "a")
"""


def test_a_django_style_project_runs_through_its_own_runtests(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    snapshot = framework_repo(tmp_path / "framework", BASIC_TESTS)
    env = ensure_environment(docker_client, FRAMEWORK_SPEC, snapshot, settings)
    # The ids Django's runner uses in SWE-bench (``test_x (basic.tests.SlugTests)``) map onto
    # these files; the selection becomes Django's dotted labels, relative to tests/.
    run = run_tests(
        docker_client, env, snapshot, selection=["tests/basic/tests.py::SlugTests::test_strips"]
    )
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {"tests/basic/tests.py::SlugTests::test_strips": Outcome.FAILED}
    whole = run_tests(docker_client, env, snapshot)
    assert whole.outcomes == {
        "tests/basic/tests.py::SlugTests::test_spaces": Outcome.PASSED,
        "tests/basic/tests.py::SlugTests::test_strips": Outcome.FAILED,
    }


def test_a_command_no_runner_reports_on_is_an_error(
    docker_client: docker.DockerClient, calc: tuple[RepoSnapshot, EnvImage], settings: Settings
) -> None:
    snapshot, _ = calc
    spec = EnvSpec(python="3.11", test_cmd="python -m unittest discover -v")
    env = ensure_environment(docker_client, spec, snapshot, settings)
    odd = EnvImage(
        tag=env.tag,
        spec=spec.model_copy(update={"test_cmd": "tox -e py311"}),
        manifests=env.manifests,
        editable=env.editable,
        source_sha=env.source_sha,
    )
    run = run_tests(docker_client, odd, snapshot)
    assert run.error is not None
    assert run.outcomes == {}
    assert "not a unittest-family test command" in run.log_excerpt
