"""Test commands: which runner family the host accepts, and how Reprobot's unittest reporter
reads one (its target, the folder its labels are rooted at, labels from selected ids)."""

from __future__ import annotations

import pytest

from reprobot.bench.data.test_ids import map_test_ids
from reprobot.bench.envs.spec_table import pytest_test_command
from reprobot.validation.env.test_commands import runner_family, runner_of
from tests.support.scripts import load_script

reporter = load_script("reprobot_unittest")


@pytest.mark.parametrize(
    ("command", "family"),
    [
        ("pytest -rA", "pytest"),
        ("python -m pytest tests", "pytest"),
        ("PYTHONWARNINGS=ignore python3 -W ignore -m pytest", "pytest"),
        ("python -m unittest discover -v", "unittest"),
        ("python manage.py test -v 2", "unittest"),
        ("python -m django test --settings=t.settings", "unittest"),
        ("django-admin test", "unittest"),
        ("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1", "unittest"),
        ("python tests/runtests.py", "unittest"),
        ("tox -epy39 -v --", None),
        ("bin/test -C --verbose", None),
        ("python manage.py runserver", None),
        ("nox -s tests", None),
        ("", None),
        ("pytest 'unbalanced", None),
    ],
)
def test_runner_family(command: str, family: str | None) -> None:
    assert runner_family(command) == family


@pytest.mark.parametrize(
    ("command", "runner"),
    [
        ("python -m pytest tests", "pytest"),
        ("python -m unittest discover -v", "unittest"),
        ("python manage.py test -v 2", "django"),
        ("python -m django test --settings=t.settings", "django"),
        ("django-admin test", "django"),
        ("./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1", "django"),
        ("tox -epy39 -v --", None),
    ],
)
def test_which_runner_a_command_starts(command: str, runner: str | None) -> None:
    # Django's runners are of the unittest family; what a drafted test subclasses differs.
    assert runner_of(command) == runner


def test_the_bench_keeps_django_runners_and_replaces_others() -> None:
    runtests = "./tests/runtests.py --verbosity 2 --settings=test_sqlite --parallel 1"
    assert pytest_test_command(runtests) == runtests
    assert pytest_test_command("tox -epy39 -v --").startswith("pytest")


@pytest.mark.parametrize(
    ("words", "kind", "target", "args", "top"),
    [
        (
            ["python", "-m", "unittest", "discover", "-v"],
            "unittest",
            "unittest",
            ["discover", "-v"],
            ".",
        ),
        (
            ["python3", "-W", "ignore", "-m", "django", "test", "-v", "2"],
            "django",
            "django",
            ["test", "-v", "2"],
            ".",
        ),
        (["django-admin", "test"], "django", "django", ["test"], "."),
        (["python", "manage.py", "test"], "manage", "manage.py", ["test"], "."),
        (
            ["python", "src/site/manage.py", "test"],
            "manage",
            "src/site/manage.py",
            ["test"],
            "src/site",
        ),
        (
            ["./tests/runtests.py", "--parallel", "1"],
            "runtests",
            "tests/runtests.py",
            ["--parallel", "1"],
            "tests",
        ),
    ],
)
def test_the_reporter_reads_the_command(
    words: list[str], kind: str, target: str, args: list[str], top: str
) -> None:
    assert reporter.parse_command(words) == {
        "kind": kind,
        "target": target,
        "args": args,
        "top": top,
    }


def test_the_reporter_refuses_other_commands() -> None:
    with pytest.raises(ValueError, match="not a unittest-family"):
        reporter.parse_command(["tox", "-e", "py39"])


@pytest.mark.parametrize(
    ("test_id", "top", "label"),
    [
        ("tests/test_calc.py::CalcTest::test_add", ".", "tests.test_calc.CalcTest.test_add"),
        ("tests/test_calc.py", ".", "tests.test_calc"),
        (
            "tests/admin_views/tests.py::AdminViewTests::test_x",
            "tests",
            "admin_views.tests.AdminViewTests.test_x",
        ),
        ("tests/admin_views/__init__.py", "tests", "admin_views"),
        ("pkg/tests.py::Outer::Inner::test_y", ".", "pkg.tests.Outer.Inner.test_y"),
    ],
)
def test_selected_ids_become_dotted_labels(test_id: str, top: str, label: str) -> None:
    assert reporter.label_of(test_id, top) == label


def test_labels_replace_discovery_but_keep_options() -> None:
    command = reporter.parse_command(["python", "-m", "unittest", "-b", "discover", "-s", "tests"])
    assert reporter.with_labels(command, ["tests.test_a"]) == ["-b", "tests.test_a"]
    assert reporter.with_labels(command, []) == ["-b", "discover", "-s", "tests"]
    django = reporter.parse_command(["./tests/runtests.py", "--parallel", "1"])
    assert reporter.with_labels(django, ["basic.tests"]) == ["--parallel", "1", "basic.tests"]


def test_unittest_descriptions_map_to_node_ids() -> None:
    files = ["tests/admin_views/tests.py", "tests/admin_views/__init__.py", "tests/runtests.py"]
    mapping = map_test_ids(
        [
            "test_x (admin_views.tests.AdminViewTests)",
            "test_y (admin_views.tests.AdminViewTests.test_y)\nIts docstring.",
            "test_z (missing.tests.Class)",
        ],
        {},
        files,
    )
    assert mapping.node_ids == {
        "test_x (admin_views.tests.AdminViewTests)": (
            "tests/admin_views/tests.py::AdminViewTests::test_x",
        ),
        "test_y (admin_views.tests.AdminViewTests.test_y)\nIts docstring.": (
            "tests/admin_views/tests.py::AdminViewTests::test_y",
        ),
    }
    assert set(mapping.unmappable) == {"test_z (missing.tests.Class)"}
