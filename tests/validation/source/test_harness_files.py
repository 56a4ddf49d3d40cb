"""Which changed files alter how the tests run before any test does."""

from __future__ import annotations

import pytest

from reprobot.validation.source.harness_files import changes_how_tests_run, harness_changes

PYPROJECT = """\
[project]
name = "w"
version = "1.0"

[tool.pytest.ini_options]
addopts = "-q"
"""
SETUP_CFG = """\
[metadata]
name = w

[tool:pytest]
addopts = -q
"""


@pytest.mark.parametrize(
    "path",
    [
        "conftest.py",
        "tests/conftest.py",
        "pytest.ini",
        # pytest 9 reads these too, ahead of the project's own pyproject.toml or setup.cfg.
        ".pytest.ini",
        "pytest.toml",
        "sub/.pytest.toml",
        "src/sitecustomize.py",
        "usercustomize.py",
        "src/w/_w.pth",
    ],
)
def test_files_that_always_run_first(path: str) -> None:
    assert changes_how_tests_run(path, None, "x = 1\n")
    assert changes_how_tests_run(path, "x = 1\n", None)


@pytest.mark.parametrize(
    ("path", "old", "new", "changed"),
    [
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace("1.0", "1.1"), False),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace('"-q"', '"-q -p evil"'), True),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + '\n[project.entry-points.pytest11]\nevil = "w.evil"\n',
            True,
        ),
        ("pyproject.toml", PYPROJECT, "this is [not toml", True),
        ("setup.cfg", SETUP_CFG, SETUP_CFG.replace("name = w", "name = v"), False),
        ("setup.cfg", SETUP_CFG, SETUP_CFG.replace("-q", "-p evil"), True),
        (
            "setup.cfg",
            SETUP_CFG,
            SETUP_CFG + "\n[options.entry_points]\npytest11 = e = w.e\n",
            True,
        ),
        (
            "tox.ini",
            "[tox]\nenvlist = py\n",
            "[tox]\nenvlist = py\n\n[pytest]\naddopts = -x\n",
            True,
        ),
        ("tox.ini", "[tox]\nenvlist = py\n", "[tox]\nenvlist = py311\n", False),
        # A new file that configures nothing of pytest's (a linter's settings) is no file.
        ("setup.cfg", None, "[flake8]\nmax-line-length = 100\n", False),
        ("pyproject.toml", None, "[tool.ruff]\nline-length = 100\n", False),
        ("setup.cfg", None, "[tool:pytest]\naddopts = -p evil\n", True),
        ("setup.py", "setup(name='w')\n", "setup(name='w', version='2')\n", False),
        ("setup.py", "setup()\n", "setup(entry_points={'pytest11': ['e = w.e']})\n", True),
        ("src/w/core.py", "a = 1\n", "a = 2\n", False),
    ],
)
def test_configuration_counts_only_when_its_pytest_part_changes(
    path: str, old: str | None, new: str, changed: bool
) -> None:
    assert changes_how_tests_run(path, old, new) is changed


def test_harness_changes_reads_only_files_that_could_matter() -> None:
    read: list[str] = []

    def old(path: str) -> str | None:
        read.append(path)
        return SETUP_CFG if path == "setup.cfg" else None

    def new(path: str) -> str | None:
        read.append(path)
        return SETUP_CFG.replace("-q", "-p evil") if path == "setup.cfg" else "x\n"

    paths = ["src/w/core.py", "setup.cfg", "tests/conftest.py", "README.md", "tests/conftest.py"]
    assert harness_changes(paths, old, new) == ("setup.cfg", "tests/conftest.py")
    assert set(read) == {"setup.cfg"}
