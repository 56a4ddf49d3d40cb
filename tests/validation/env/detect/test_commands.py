"""Install and test command lines read into install plans and usable test commands."""

from __future__ import annotations

import pytest

from reprobot.validation.env.detect.commands import Project, read_line, split_line
from reprobot.validation.env.detect.metadata import ProjectMeta
from reprobot.validation.env.detect.plan import InstallPlan

PYPROJECT = """\
[project]
name = "demo"
version = "1"
[project.optional-dependencies]
test = ["pytest"]
speedups = ["ujson"]
[dependency-groups]
dev = ["pytest", "ruff"]
test = ["pytest", "trio"]
[tool.hatch.envs.hatch-test]
dependencies = ["pytest", "anyio"]
[tool.hatch.envs.default.scripts]
cov = "pytest --cov"
"""


def _project(files: dict[str, str] | None = None) -> Project:
    tree = {"pyproject.toml": PYPROJECT, **(files or {})}
    return Project(ProjectMeta.read(tree.get), set(tree), tree.get)


@pytest.mark.parametrize(
    ("line", "plan"),
    [
        ("pip install -e .[test]", InstallPlan(extras=("test",))),
        ("python -m pip install -U pip setuptools wheel", InstallPlan()),
        (
            "pip install -r requirements/ci.txt hypothesis",
            InstallPlan((), ("requirements/ci.txt",), ("hypothesis",)),
        ),
        ("uv pip install --system '.[test,speedups]'", InstallPlan(extras=("test", "speedups"))),
        ("pip install --group test", InstallPlan(packages=("pytest", "trio"))),
        ("pip install demo[speedups] tox", InstallPlan(extras=("speedups",))),
        ("uv sync", InstallPlan(packages=("pytest", "ruff"))),
        (
            "uv sync --no-dev --extra speedups --group test",
            InstallPlan(extras=("speedups",), packages=("pytest", "trio")),
        ),
        ("uv sync --all-extras --no-default-groups", InstallPlan(extras=("speedups", "test"))),
        (
            "if [ -f r.txt ]; then pip install -r r.txt; fi",
            InstallPlan(requirement_files=("r.txt",)),
        ),
        ("echo hello", InstallPlan()),
    ],
)
def test_install_lines(line: str, plan: InstallPlan) -> None:
    reading = read_line(line, _project(), "ci")
    assert reading.plan == plan
    assert not reading.runs_tests


@pytest.mark.parametrize(
    ("line", "command"),
    [
        ("pytest -q", "pytest -q"),
        ("uv run --group test pytest -ra", "pytest -ra"),
        ("hatch test", "pytest"),
        ("hatch run cov", "pytest"),  # the project's coverage gives way to the sandbox's
        ("python -m unittest discover", "python -m unittest discover"),
        ("pytest tests/unit", None),  # a path would change what the sandbox selects
        ("FOO=1 pytest", "pytest"),
    ],
)
def test_test_lines(line: str, command: str | None) -> None:
    reading = read_line(line, _project(), "ci")
    assert reading.runs_tests
    assert reading.test_command == command


def test_uv_run_syncs_before_it_runs() -> None:
    reading = read_line("uv run --group test pytest", _project(), "ci")
    assert reading.plan.packages == ("pytest", "ruff", "trio")


def test_hatch_test_installs_its_environment() -> None:
    assert read_line("hatch test -py 3.11", _project(), "ci").plan.packages == ("pytest", "anyio")


def test_make_target_is_followed() -> None:
    makefile = "test:\n\tpip install -e '.[test]'\n\tpytest -ra\n"
    reading = read_line("make test", _project({"Makefile": makefile}), "ci")
    assert reading.plan.extras == ("test",)
    assert (reading.runs_tests, reading.test_command) == (True, "pytest -ra")


def test_tox_env_is_followed() -> None:
    tox = "[testenv]\ndeps = pytest-asyncio\ncommands = pytest -q {posargs}\n"
    reading = read_line("tox -e py311", _project({"tox.ini": tox}), "ci")
    assert reading.plan.packages == ("pytest-asyncio",)
    assert reading.test_command == "pytest -q"


def test_poetry_install_takes_the_groups_poetry_takes() -> None:
    pyproject = (
        '[tool.poetry]\nname = "demo"\n'
        '[tool.poetry.group.test.dependencies]\npytest = "*"\n'
        "[tool.poetry.group.docs]\noptional = true\n"
        '[tool.poetry.group.docs.dependencies]\nsphinx = "*"\n'
    )
    project = _project({"pyproject.toml": pyproject})
    assert read_line("poetry install", project, "ci").plan.packages == ("pytest",)
    with_docs = read_line("poetry install --with docs --without test", project, "ci")
    assert with_docs.plan.packages == ("sphinx",)


def test_split_line_drops_assignments_and_shell_keywords() -> None:
    assert split_line("A=1 B=2 pytest -q && then echo x; ( make") == [
        ["pytest", "-q"],
        ["echo", "x"],
        ["make"],
    ]


def test_the_project_s_own_scripts_before_the_tests_prepare_for_them() -> None:
    makefile = (
        "test: import-data\n\tpython -m pytest $(FLAGS)\n\n"
        "import-data:\n\tpython scripts/download_data.py --all\n"
    )
    tox = "[testenv]\nextras = dev\ncommands = make clean test\n"
    files = {"Makefile": makefile, "tox.ini": tox, "scripts/download_data.py": ""}
    reading = read_line("tox -e py311", _project(files), "ci")
    assert reading.runs_tests
    assert reading.prepare == ("python scripts/download_data.py --all",)
    assert reading.plan.extras == ("dev",)


@pytest.mark.parametrize(
    ("line", "prepare"),
    [
        ("python scripts/gen.py && pytest", ("python scripts/gen.py",)),
        ("python setup.py build_ext --inplace && pytest", ("python setup.py build_ext --inplace",)),
        ("python setup.py develop && pytest", ()),
        ("python not_in_tree.py && pytest", ()),
        ("pytest && python scripts/gen.py", ()),  # after the tests: prepares nothing for them
    ],
)
def test_which_lines_prepare(line: str, prepare: tuple[str, ...]) -> None:
    files = {"scripts/gen.py": "", "setup.py": ""}
    assert read_line(line, _project(files), "ci").prepare == prepare


def test_a_make_target_that_neither_installs_nor_tests_prepares() -> None:
    makefile = (
        "cython:\n\tcython pkg/_speed.pyx\n\ntest: cython\n\tpip install -e .\n\tpytest -v test\n"
    )
    project = _project({"Makefile": makefile})
    assert read_line("make cython", project, "ci").prepare == ("make cython",)
    # A prerequisite of the target that runs the tests prepares for them, and runs first.
    reading = read_line("make test", project, "ci")
    assert reading.runs_tests and reading.prepare == ("make cython",)
    loop = read_line("make a", _project({"Makefile": "a: b\n\techo a\nb: a\n\techo b\n"}), "ci")
    assert loop.prepare == ("make b", "make a")


def test_a_test_file_run_as_a_script_is_run_by_unittest_discovery() -> None:
    test_py = "import unittest\n\nclass T(unittest.TestCase):\n    pass\n\nunittest.main()\n"
    project = _project({"tests/test.py": test_py, "tests/smoke.py": "print(1)\n"})
    reading = read_line("python tests/test.py -v", project, "ci")
    assert reading.runs_tests and not reading.prepare
    assert reading.test_command == "python -m unittest discover -s tests -p test.py"
    # A script that is no unittest module is still the test line, with no command to run.
    other = read_line("python tests/smoke.py", project, "ci")
    assert other.runs_tests and other.test_command is None


def test_make_variables_do_not_hide_a_test_target() -> None:
    # As Babel's: the test target's flags are make variables, and it needs its data first.
    makefile = (
        "test: import-cldr\n\tpython ${PYTHON_TEST_FLAGS} -m pytest $(PYTEST_FLAGS)\n\n"
        "import-cldr:\n\tpython scripts/download_import_cldr.py\n\n"
        "clean-cldr:\n\trm -f babel/locale-data/*.dat\n"
    )
    files = {"Makefile": makefile, "scripts/download_import_cldr.py": ""}
    reading = read_line("make clean-cldr test", _project(files), "ci")
    assert reading.runs_tests
    # The flags are unknown here: the command is not taken as it is.
    assert reading.test_command is None
    assert reading.prepare == ("make clean-cldr", "python scripts/download_import_cldr.py")


def test_py_test_options_are_read_as_pytest_s() -> None:
    reading = read_line("py.test --cov=parsel --cov-report=xml -ra", _project(), "ci")
    assert reading.test_command == "py.test -ra"
