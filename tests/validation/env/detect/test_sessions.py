"""tox environments, nox sessions and Makefile targets read without running them."""

from __future__ import annotations

from reprobot.validation.env.detect.commands import Project, metadata_session
from reprobot.validation.env.detect.metadata import ProjectMeta, Reader
from reprobot.validation.env.detect.plan import InstallPlan
from reprobot.validation.env.detect.sessions import (
    dependency_lines,
    make_rule,
    nox_session,
    tox_session,
)

META = ProjectMeta.read(
    lambda path: (
        '[project]\nname = "demo"\nversion = "1"\n[dependency-groups]\ntest = ["pytest"]\n'
        if path == "pyproject.toml"
        else None
    )
)


def _reader(files: dict[str, str]) -> Reader:
    return files.get


TOX = """\
[tox]
envlist = py{39,311}-{lin,mac}, lint

[testenv]
deps =
    -r{toxinidir}/requirements-test.txt
    -c constraints.txt
    mock>=4
    py39: importlib-metadata
    !lin: pywin32-ctypes
extras = testing
dependency_groups = test
commands = pytest {posargs:tests}

[testenv:lint]
deps = ruff
commands = ruff check .
"""


def test_tox_base_environment() -> None:
    session = tox_session(_reader({"tox.ini": TOX}), META, None)
    assert session is not None
    assert session.plan == InstallPlan(
        extras=("testing",),
        requirement_files=("requirements-test.txt",),
        # Factor-conditional lines count only for an environment they select; "!lin" holds for
        # the base environment, which has no "lin" factor.
        packages=("mock>=4", "pywin32-ctypes", "pytest"),
    )
    assert session.commands == ("pytest",)


def test_tox_named_environment_inherits_the_base() -> None:
    session = tox_session(_reader({"tox.ini": TOX}), META, "py39-lin")
    assert session is not None
    assert "importlib-metadata" in session.plan.packages
    assert "pywin32-ctypes" not in session.plan.packages
    lint = tox_session(_reader({"tox.ini": TOX}), META, "lint")
    # As in tox, what the environment does not set it takes from [testenv].
    assert lint is not None and lint.plan.packages == ("ruff", "pytest")
    assert lint.plan.extras == ("testing",)
    assert lint.commands == ("ruff check .",)


def test_tox_toml() -> None:
    text = (
        "[env_run_base]\n"
        'deps = ["pytest>=7", "-r requirements.txt"]\n'
        'extras = ["test"]\n'
        'commands = [["pytest", "-q", "{posargs}"]]\n'
    )
    session = tox_session(_reader({"tox.toml": text}), META, None)
    assert session is not None
    assert session.plan == InstallPlan(("test",), ("requirements.txt",), ("pytest>=7",))
    assert session.commands == ("pytest -q",)


NOXFILE = """\
import nox

PYPROJECT = nox.project.load_toml("pyproject.toml")

@nox.session(python=["3.11"])
def lint(session):
    session.install("ruff")
    session.run("ruff", "check")

@nox.session(name="tests")
def run_tests(session):
    session.install(*nox.project.dependency_groups(PYPROJECT, "test"))
    session.install("-e", ".[speedups]", "trustme")
    session.install(some_variable)
    session.run("pytest", "-ra", *session.posargs)
"""


def test_nox_sessions_read_literal_installs_and_runs() -> None:
    session = nox_session(_reader({"noxfile.py": NOXFILE}), META, None)
    assert session is not None and session.name == "tests"
    assert session.plan == InstallPlan(("speedups",), (), ("pytest", "trustme"))
    assert session.commands == ("pytest -ra",)
    lint = nox_session(_reader({"noxfile.py": NOXFILE}), META, "lint")
    assert lint is not None and lint.plan.packages == ("ruff",)


def test_a_noxfile_that_does_not_parse_has_no_session() -> None:
    assert nox_session(_reader({"noxfile.py": "def (:"}), META, None) is None


def test_dependency_lines_skip_what_only_tox_could_expand() -> None:
    plan = dependency_lines(["{env:EXTRA_DEPS}", ".[a, b]", "-e .", "attrs  # pinned"], META, "x")
    assert plan == InstallPlan(extras=("a", "b"), packages=("attrs",))


def test_make_rule() -> None:
    text = (
        "VAR := 1\ntest: data build  # the data first\n\t@pip install -e .[test]\n\t-pytest \\\n"
        "\t\t-q\n\ndata:\n\tpython scripts/fetch.py\n"
    )
    assert make_rule(text, "test") == (["data", "build"], ["pip install -e .[test]", "pytest -q"])
    assert make_rule(text, "missing") == ([], [])


def test_the_base_sessions_name_the_runner() -> None:
    tox = (
        "[tox]\nenvlist = py39\n\n[testenv]\ndeps = -rreq.txt\n"
        "commands =\n    flake8 src\n    python -m unittest discover -v {posargs}\n"
    )
    nox = (
        "import nox\n\n@nox.session\ndef tests(session):\n"
        '    session.install(".")\n    session.run("python", "-m", "unittest", "-v")\n'
    )
    for files, command in (
        ({"tox.ini": tox}, "python -m unittest discover -v"),
        ({"noxfile.py": nox}, "python -m unittest -v"),
    ):
        project = Project(ProjectMeta.read(files.get), set(files), files.get)
        assert metadata_session(project).test_command == command
