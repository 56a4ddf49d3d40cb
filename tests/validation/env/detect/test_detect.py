"""choose_python, and detect_environment on real git repositories."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.validation.env.detect import Detection, detect_environment
from reprobot.validation.env.detect.python_choice import choose_python, listed_in_classifiers
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo


def _classifiers(*versions: str) -> list[str]:
    return [f"Programming Language :: Python :: {v}" for v in versions]


# --- choose_python --------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("requires", "classifiers", "expected"),
    [
        # Classifiers: the newest one we support.
        ("", _classifiers("3.8", "3.9", "3.10", "3.11", "3.12"), "3.11"),
        ("", _classifiers("3.9", "3.13"), "3.13"),
        ("", _classifiers("3.9"), "3.9"),
        # Only versions we lack: the newest supported one not newer than the newest listed.
        ("", _classifiers("3.10", "3.12"), "3.11"),
        # Equally near 3.9 and 3.11: the newer, as it parses the syntax 3.10 added.
        ("", _classifiers("3.10"), "3.11"),
        ("", _classifiers("3.14"), "3.13"),
        # Older than anything we have: the oldest we have.
        ("", _classifiers("3.6", "3.7"), "3.9"),
        # Generic classifiers say nothing about the minor version.
        (
            "",
            ["Programming Language :: Python :: 3", "Programming Language :: Python :: 3 :: Only"],
            "3.11",
        ),
        ("", ["  Programming Language :: Python :: 3.9  "], "3.9"),
        # Classifiers come before requires-python.
        (">=3.8,<3.12", _classifiers("3.9"), "3.9"),
        # requires-python upper bounds.
        (">=3.8,<3.12", [], "3.11"),
        (">=3.8, < 3.11", [], "3.9"),
        ("<3.10", [], "3.9"),
        (">=3.7,<3.14", [], "3.11"),
        # Nothing said at all: the default.
        ("", [], "3.11"),
        # A bound below everything we have: the default.
        ("<3.8", [], "3.11"),
    ],
)
def test_choose_python(requires: str, classifiers: list[str], expected: str) -> None:
    assert choose_python(listed_in_classifiers(classifiers), requires) == expected


@pytest.mark.parametrize(("requires", "expected"), [(">=3.12", "3.13"), ("~=3.12", "3.13")])
def test_choose_python_respects_a_lower_bound(requires: str, expected: str) -> None:
    # 3.11 is not admitted by these projects; 3.13 is the only supported version that is.
    assert choose_python((), requires) == expected


@pytest.mark.parametrize(
    ("listed", "requires", "chosen"),
    [
        ({"3.8", "3.9", "3.10"}, "", "3.9"),
        ({"3.9", "3.10", "3.11", "3.12", "3.13"}, "", "3.11"),
        ({"3.10", "3.12"}, "", "3.11"),
        ({"3.7"}, "", "3.9"),
        ({"3.12"}, "", "3.13"),
        ({"3.14"}, "", "3.13"),
        # A CI matrix that lists 3.10 of a project that requires it: 3.9 is out.
        ({"3.10"}, ">=3.10", "3.11"),
    ],
)
def test_choose_python_from_a_ci_matrix(listed: set[str], requires: str, chosen: str) -> None:
    assert choose_python(listed, requires) == chosen


# --- detect_environment ------------------------------------------------------------------------


def _detect(tmp_path: Path, files: dict[str, str]) -> EnvSpec:
    repo = make_repo(tmp_path / "repo", files)
    return detect_environment(RepoSnapshot.from_git(repo, "HEAD", "o/r")).spec


PYPROJECT_TEST_EXTRA = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"

[project]
name = "demo"
version = "1.0"
requires-python = ">=3.8"
classifiers = [
    "Programming Language :: Python :: 3.9",
    "Programming Language :: Python :: 3.10",
]

[project.optional-dependencies]
docs = ["sphinx"]
test = ["pytest", "hypothesis"]
"""


def test_pyproject_with_test_extra(tmp_path: Path) -> None:
    spec = _detect(tmp_path, {"pyproject.toml": PYPROJECT_TEST_EXTRA, "demo/__init__.py": ""})
    assert spec == EnvSpec(python="3.9", install="python -m pip install -e '.[test]'")


def test_pyproject_extra_preference(tmp_path: Path) -> None:
    text = (
        '[project]\nname = "d"\nversion = "1"\nrequires-python = ">=3.9,<3.12"\n'
        "[project.optional-dependencies]\n"
        'dev = ["black"]\ntesting = ["pytest"]\ntests = ["pytest"]\n'
    )
    spec = _detect(tmp_path, {"pyproject.toml": text})
    assert spec.install == "python -m pip install -e '.[tests]'"
    assert spec.python == "3.11"


def test_pyproject_with_only_dev_extra(tmp_path: Path) -> None:
    text = '[project]\nname = "d"\nversion = "1"\n'
    text += '[project.optional-dependencies]\ndev = ["pytest"]\n'
    spec = _detect(tmp_path, {"pyproject.toml": text})
    assert spec.install == "python -m pip install -e '.[dev]'"


def test_pyproject_without_project_table(tmp_path: Path) -> None:
    text = '[tool.poetry]\nname = "d"\nversion = "1"\n'
    text += '[tool.poetry.dependencies]\npython = "^3.9"\n'
    spec = _detect(tmp_path, {"pyproject.toml": text})
    assert spec == EnvSpec(python="3.11", install="python -m pip install -e .")


def test_broken_pyproject_falls_back_to_setup_cfg(tmp_path: Path) -> None:
    cfg = "[options]\npython_requires = >=3.7, <3.10\n[options.extras_require]\ntest = pytest\n"
    spec = _detect(tmp_path, {"pyproject.toml": "[project\nname = ", "setup.cfg": cfg})
    assert spec == EnvSpec(python="3.9", install="python -m pip install -e '.[test]'")


SETUP_CFG = """\
[metadata]
name = demo
classifiers =
    Development Status :: 4 - Beta
    Programming Language :: Python :: 3.9
    Programming Language :: Python :: 3.11
    Programming Language :: Python :: 3.12

[options]
packages = find:
python_requires = >=3.9

[options.extras_require]
docs = sphinx
Testing =
    pytest
    pytest-cov
"""


def test_setup_cfg_extras_require_and_classifiers(tmp_path: Path) -> None:
    setup_py = "from setuptools import setup\nsetup()\n"
    spec = _detect(tmp_path, {"setup.cfg": SETUP_CFG, "setup.py": setup_py})
    assert spec == EnvSpec(python="3.11", install="python -m pip install -e '.[testing]'")


def test_setup_cfg_python_requires_when_no_classifiers(tmp_path: Path) -> None:
    cfg = "[metadata]\nname = demo\n[options]\npython_requires = >=3.6,<3.10\n"
    spec = _detect(tmp_path, {"setup.cfg": cfg})
    assert spec == EnvSpec(python="3.9", install="python -m pip install -e .")


def test_unparsable_setup_cfg_is_ignored(tmp_path: Path) -> None:
    cfg = "[metadata]\nname = a\n[metadata]\nname = b\n"
    spec = _detect(tmp_path, {"setup.cfg": cfg})
    assert spec == EnvSpec(python="3.11", install="python -m pip install -e .")


SETUP_PY = """\
from setuptools import setup

setup(
    name="demo",
    python_requires=">=3.8",
    extras_require={
        "docs": ["sphinx"],
        'tests': ["pytest", "mock"],
    },
)
"""


def test_setup_py_extras(tmp_path: Path) -> None:
    spec = _detect(tmp_path, {"setup.py": SETUP_PY})
    assert spec == EnvSpec(python="3.11", install="python -m pip install -e '.[tests]'")


def test_setup_py_without_test_extras(tmp_path: Path) -> None:
    text = 'from setuptools import setup\nsetup(name="demo", extras_require={"docs": ["sphinx"]})\n'
    spec = _detect(tmp_path, {"setup.py": text})
    assert spec.install == "python -m pip install -e ."


@pytest.mark.parametrize(
    ("present", "chosen"),
    [
        (["requirements.txt"], "requirements.txt"),
        (["requirements.txt", "requirements-dev.txt"], "requirements-dev.txt"),
        (
            ["requirements.txt", "dev-requirements.txt", "test-requirements.txt"],
            "test-requirements.txt",
        ),
        (["requirements-test.txt", "requirements-tests.txt"], "requirements-test.txt"),
        (
            ["requirements/dev.txt", "requirements/test.txt", "requirements-test.txt"],
            "requirements/test.txt",
        ),
        (["requirements/tests.txt", "requirements/test.txt"], "requirements/tests.txt"),
    ],
)
def test_requirements_files(tmp_path: Path, present: list[str], chosen: str) -> None:
    files = {name: "pytest\n" for name in present}
    files["setup.py"] = SETUP_PY
    spec = _detect(tmp_path, files)
    assert spec.requirements == (chosen,)
    assert spec.install == "python -m pip install -e '.[tests]'"


def test_requirements_without_installable_project(tmp_path: Path) -> None:
    spec = _detect(tmp_path, {"requirements.txt": "requests\n", "app.py": "print(1)\n"})
    assert spec == EnvSpec(python="3.11", requirements=("requirements.txt",), install="true")


def test_no_manifest_at_all(tmp_path: Path) -> None:
    spec = _detect(tmp_path, {"app.py": "print(1)\n", "tests/test_app.py": "def test(): pass\n"})
    assert spec == EnvSpec(python="3.11", requirements=(), install="true")


def test_nested_manifests_do_not_count(tmp_path: Path) -> None:
    spec = _detect(
        tmp_path,
        {
            "sub/pyproject.toml": PYPROJECT_TEST_EXTRA,
            "docs/requirements.txt": "sphinx\n",
            "app.py": "",
        },
    )
    assert spec == EnvSpec(python="3.11", requirements=(), install="true")


def test_detection_reads_the_snapshot_commit_not_the_work_tree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {"pyproject.toml": PYPROJECT_TEST_EXTRA})
    (repo / "pyproject.toml").write_text('[project]\nname = "x"\nversion = "1"\n')
    (repo / "requirements.txt").write_text("uncommitted\n")
    spec = detect_environment(RepoSnapshot.from_git(repo, "HEAD")).spec
    assert spec == EnvSpec(python="3.9", install="python -m pip install -e '.[test]'")


# --- the order of trust: settings file, CI workflow, packaging metadata ----------------------

GROUPS_PYPROJECT = """\
[build-system]
requires = ["hatchling", "hatch-vcs"]
build-backend = "hatchling.build"

[project]
name = "grouped"
dynamic = ["version"]
requires-python = ">=3.10"

[project.optional-dependencies]
speedups = ["ujson"]

[dependency-groups]
tests = ["pytest>=8", "hypothesis", {include-group = "typing"}]
typing = ["typing-extensions"]

[tool.hatch.version]
source = "vcs"

[tool.pytest.ini_options]
addopts = "-ra"
"""

CI = """\
on: [push]
jobs:
  lint:
    runs-on: ubuntu-latest
    steps:
      - run: pip install ruff && ruff check .
  test:
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.12", "3.13"]
    steps:
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
      - run: python -m pip install -e .[speedups] --group tests
      - run: python -m pytest -q --strict-markers
"""


def _detection(tmp_path: Path, files: dict[str, str]) -> Detection:
    repo = make_repo(tmp_path / "repo", files)
    return detect_environment(RepoSnapshot.from_git(repo, "HEAD", "o/r"))


def test_dependency_groups_are_installed_and_the_version_comes_from_git(tmp_path: Path) -> None:
    found = _detection(tmp_path, {"pyproject.toml": GROUPS_PYPROJECT})
    assert found.spec.python == "3.11"  # requires-python >=3.10 admits it
    assert found.spec.install == "python -m pip install -e ."
    assert found.spec.test_requirements == ("pytest>=8", "hypothesis", "typing-extensions")
    assert found.sources["test_requirements"] == "pyproject.toml [dependency-groups] tests"
    assert found.sources["version"].startswith("hatch-vcs: 0.0.0+g")
    assert found.sources["python"] == "requires-python >=3.10"


def test_the_ci_test_job_decides_over_the_metadata(tmp_path: Path) -> None:
    found = _detection(
        tmp_path, {"pyproject.toml": GROUPS_PYPROJECT, ".github/workflows/ci.yml": CI}
    )
    assert found.spec.python == "3.13"
    assert found.spec.install == "python -m pip install -e '.[speedups]'"
    assert found.spec.test_requirements == ("pytest>=8", "hypothesis", "typing-extensions")
    assert found.spec.test_cmd == "python -m pytest -q --strict-markers"
    job = ".github/workflows/ci.yml: job test"
    assert found.sources["python"].startswith(f"{job} (Python 3.12, 3.13)")
    assert found.sources["test_command"] == job
    assert found.sources["install"].startswith(job)


def test_the_settings_file_decides_over_everything(tmp_path: Path) -> None:
    settings = (
        "python: '3.11'\n"
        "setup_steps:\n  - pip install -r ci/reqs.txt\n  - pip install -e .\n"
        "test_command: pytest -p no:randomly\n"
        "system_packages: [libxml2-dev]\n"
    )
    files = {
        "pyproject.toml": GROUPS_PYPROJECT,
        ".github/workflows/ci.yml": CI,
        ".github/reprobot.yml": settings,
    }
    found = _detection(tmp_path, files)
    assert found.spec.python == "3.11"
    assert found.spec.pre_install == ("pip install -r ci/reqs.txt",)
    assert found.spec.install == "pip install -e ."
    assert found.spec.test_requirements == ()
    assert found.spec.test_cmd == "pytest -p no:randomly"
    assert found.spec.system_packages == ("libxml2-dev",)
    assert found.sources["install"] == ".github/reprobot.yml setup_steps"


def test_tox_deps_when_nothing_else_names_the_test_requirements(tmp_path: Path) -> None:
    tox = "[testenv]\ndeps =\n    pytest\n    freezegun\ncommands = pytest {posargs}\n"
    found = _detection(tmp_path, {"setup.py": SETUP_PY, "tox.ini": tox})
    assert found.spec.install == "python -m pip install -e '.[tests]'"
    assert found.spec.test_requirements == ("pytest", "freezegun")
    assert found.spec.test_cmd == "pytest"


def test_a_rust_extension_needs_cargo(tmp_path: Path) -> None:
    pyproject = '[build-system]\nrequires = ["maturin>=1"]\nbuild-backend = "maturin"\n'
    found = _detection(tmp_path, {"pyproject.toml": pyproject, "Cargo.toml": "[package]\n"})
    assert found.spec.system_packages == ("cargo",)
