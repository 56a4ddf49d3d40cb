"""How a repository with no configuration runs its tests, and the compilers its build needs."""

from __future__ import annotations

import pytest

from reprobot.validation.env.runner_detect import (
    detect_system_packages,
    detect_test_command,
    usable_command,
)


def detect(files: dict[str, str]) -> str:
    return detect_test_command(set(files), files.get)


@pytest.mark.parametrize(
    "files",
    [
        {"pytest.ini": "[pytest]\n", "manage.py": "import django\n"},
        {"pyproject.toml": "[tool.pytest.ini_options]\naddopts = '-q'\n"},
        {"setup.cfg": "[tool:pytest]\ntestpaths = tests\n"},
        {"tox.ini": "[pytest]\nminversion = 6\n"},
        {"tests/conftest.py": ""},
    ],
)
def test_a_project_that_configures_pytest_runs_pytest(files: dict[str, str]) -> None:
    assert detect(files) == "pytest"


@pytest.mark.parametrize(
    ("command", "found"),
    [
        ("pytest --strict-markers {posargs}", "pytest --strict-markers"),
        ("pytest tests/unit {posargs}", None),  # a path would narrow the selection
        ("{envpython} -m pytest", None),
        ("python -m pytest -ra", "python -m pytest -ra"),
        # The project's coverage, workers and early stop give way to the sandbox's own.
        ("pytest -x --cov=pkg --cov-report xml -n auto -ra", "pytest -ra"),
        ("py.test --cov=pkg -q", "py.test -q"),
        ("make test", None),
    ],
)
def test_commands_a_sandbox_can_run(command: str, found: str | None) -> None:
    assert usable_command(command) == found


def test_a_django_project_runs_through_manage_py() -> None:
    manage = "import os\nfrom django.core.management import execute_from_command_line\n"
    assert detect({"manage.py": manage, "polls/tests.py": ""}) == "python manage.py test -v 2"
    # A manage.py that is not Django's says nothing.
    assert detect({"manage.py": "print('hello')\n"}) == "pytest"


def test_a_framework_with_its_own_runtests_runs_through_it() -> None:
    runtests = "#!/usr/bin/env python\nimport django\nfrom django.test.utils import get_runner\n"
    assert (
        detect({"tests/runtests.py": runtests})
        == "python tests/runtests.py --verbosity 2 --parallel 1"
    )


def test_a_plain_project_runs_pytest() -> None:
    assert detect({"setup.py": "from setuptools import setup\n", "tests/test_a.py": ""}) == "pytest"


@pytest.mark.parametrize(
    ("files", "packages"),
    [
        ({"src/fast.c": "", "setup.py": "ext_modules=[]"}, ()),
        ({"src/fast.pyx": ""}, ()),
        ({"src/core.cpp": ""}, ("g++",)),
        ({"lib/solver.f90": "", "src/wrap.cxx": ""}, ("g++", "gfortran")),
        ({"docs/example.cpp": ""}, ()),
        ({"pyproject.toml": '[build-system]\nbuild-backend = "mesonpy"\n'}, ("g++",)),
        (
            {"pyproject.toml": '[build-system]\nbuild-backend = "scikit_build_core.build"\n'},
            ("g++",),
        ),
    ],
)
def test_compilers_for_extensions(files: dict[str, str], packages: tuple[str, ...]) -> None:
    assert detect_system_packages(set(files), files.get) == packages
