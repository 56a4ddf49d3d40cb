"""First contact, against a real Docker engine: repositories of each kind the detection reads,
made by the tests, build and run their own tests with no table and no overrides."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.detect import detect_environment
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.results.testrun import Outcome, TestRun
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo

pytestmark = pytest.mark.docker

# Each test imports ``six``, which only the kind of declaration under test installs (pytest
# itself does not need it).
USES_SIX = """\
import six

from pkg import answer


def test_answer():
    assert six.PY3
    assert answer() == 42
"""
SETUP_PY = "from setuptools import setup\nsetup(name='pkg', version='1.0', packages=['pkg'])\n"
SETUPTOOLS = """\
[build-system]
requires = ["setuptools>=61"]
build-backend = "setuptools.build_meta"
"""
MODULE = "def answer():\n    return 42\n"
PASSED = {"tests/test_pkg.py::test_answer": Outcome.PASSED}


def _build_and_run(
    client: docker.DockerClient, settings: Settings, tmp_path: Path, files: dict[str, str]
) -> tuple[EnvImage, TestRun]:
    tree = {"pkg/__init__.py": MODULE, "tests/test_pkg.py": USES_SIX, **files}
    repo = make_repo(tmp_path / "repo", tree)
    snapshot = RepoSnapshot.from_git(repo, "HEAD", f"first-contact/{uuid.uuid4().hex[:8]}")
    detected = detect_environment(snapshot)
    env = ensure_environment(client, detected.spec, snapshot, settings, sources=detected.sources)
    return env, run_tests(client, env, snapshot)


def test_a_dependency_group(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    pyproject = (
        SETUPTOOLS + '[project]\nname = "pkg"\nversion = "1.0"\n'
        '[dependency-groups]\ntest = [{include-group = "base"}]\nbase = ["six"]\n'
    )
    env, run = _build_and_run(docker_client, settings, tmp_path, {"pyproject.toml": pyproject})
    assert run.outcomes == PASSED, run.log_excerpt
    assert env.sources["test_requirements"] == "pyproject.toml [dependency-groups] test"


def test_a_poetry_group(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    pyproject = (
        '[build-system]\nrequires = ["poetry-core>=1.0"]\n'
        'build-backend = "poetry.core.masonry.api"\n'
        '[tool.poetry]\nname = "pkg"\nversion = "1.0"\ndescription = ""\n'
        'authors = ["t <t@example.invalid>"]\n'
        '[tool.poetry.dependencies]\npython = "^3.9"\n'
        '[tool.poetry.group.dev.dependencies]\nsix = "^1.16"\n'
    )
    env, run = _build_and_run(docker_client, settings, tmp_path, {"pyproject.toml": pyproject})
    assert run.outcomes == PASSED, run.log_excerpt
    assert env.spec.test_requirements == ("six<2.0,>=1.16",)


def test_tox_deps(docker_client: docker.DockerClient, settings: Settings, tmp_path: Path) -> None:
    files = {
        "setup.py": SETUP_PY,
        "tox.ini": "[testenv]\ndeps =\n    pytest\n    six\ncommands = pytest {posargs}\n",
    }
    env, run = _build_and_run(docker_client, settings, tmp_path, files)
    assert run.outcomes == PASSED, run.log_excerpt
    assert env.sources["test_requirements"] == "tox.ini [testenv]"


def test_a_version_from_git(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    # setuptools-scm fails the install outright when it finds neither git data nor a version.
    pyproject = (
        '[build-system]\nrequires = ["setuptools>=64", "setuptools-scm>=8"]\n'
        'build-backend = "setuptools.build_meta"\n'
        '[project]\nname = "pkg"\ndynamic = ["version"]\ndependencies = ["six"]\n'
        "[tool.setuptools_scm]\n"
    )
    version_test = (
        "from importlib.metadata import version\n\n\n"
        "def test_version():\n    assert version('pkg').startswith('2.5.0.post1+g')\n"
    )
    tree = {"pyproject.toml": pyproject, "pkg/__init__.py": MODULE, "tests/test_pkg.py": USES_SIX}
    repo = make_repo(tmp_path / "repo", tree)
    git(repo, "tag", "v2.5.0")
    make_repo(repo, {"tests/test_version.py": version_test})
    snapshot = RepoSnapshot.from_git(repo, "HEAD", f"first-contact/{uuid.uuid4().hex[:8]}")
    detected = detect_environment(snapshot)
    env = ensure_environment(
        docker_client, detected.spec, snapshot, settings, sources=detected.sources
    )
    run = run_tests(docker_client, env, snapshot)
    assert run.outcomes == {**PASSED, "tests/test_version.py::test_version": Outcome.PASSED}, (
        run.log_excerpt
    )
    assert env.version.startswith("setuptools-scm: 2.5.0.post1+g")


def test_a_ci_workflow_names_the_installs_and_the_test_command(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    workflow = (
        "on: [push]\njobs:\n  tests:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: '3.11'\n"
        "      - run: pip install -e . -r ci/test-requirements.txt\n"
        "      - run: python -m pytest -rA --strict-markers\n"
    )
    files = {
        "pyproject.toml": SETUPTOOLS + '[project]\nname = "pkg"\nversion = "1"\n',
        "ci/test-requirements.txt": "six\n",
        ".github/workflows/tests.yml": workflow,
    }
    env, run = _build_and_run(docker_client, settings, tmp_path, files)
    assert run.outcomes == PASSED, run.log_excerpt
    assert env.spec.test_cmd == "python -m pytest -rA --strict-markers"
    assert env.sources["test_command"] == ".github/workflows/tests.yml: job tests"


def test_setup_steps_in_the_settings_file(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    files = {
        "setup.py": SETUP_PY,
        ".github/reprobot.yml": (
            "setup_steps:\n  - python -m pip install six\n  - python -m pip install -e .\n"
        ),
    }
    env, run = _build_and_run(docker_client, settings, tmp_path, files)
    assert run.outcomes == PASSED, run.log_excerpt
    assert env.sources["install"] == ".github/reprobot.yml setup_steps"


def test_files_the_project_s_own_scripts_make_before_its_tests(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    # As Babel's ``make test`` imports its locale data first: the data file is in no commit.
    files = {
        "setup.py": SETUP_PY,
        "tox.ini": "[testenv]\ndeps = six\ncommands = make test\n",
        "Makefile": "test: data\n\tpython -m pytest\n\ndata:\n\tpython scripts/make_data.py\n",
        "scripts/make_data.py": "open('pkg/data.txt', 'w').write('42')\n",
        "tests/test_data.py": (
            "from pathlib import Path\n\nimport pkg\n\n\n"
            "def test_data():\n"
            "    assert (Path(pkg.__file__).parent / 'data.txt').read_text() == '42'\n"
        ),
    }
    env, run = _build_and_run(docker_client, settings, tmp_path, files)
    assert run.outcomes == {**PASSED, "tests/test_data.py::test_data": Outcome.PASSED}, (
        run.log_excerpt
    )
    assert env.spec.prepare == ("python scripts/make_data.py",)


def test_code_the_project_generates_before_it_installs(
    docker_client: docker.DockerClient, settings: Settings, tmp_path: Path
) -> None:
    # As msgpack's CI runs ``make cython`` before ``pip install .``: the build needs the file.
    workflow = (
        "on: [push]\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - run: pip install six pytest\n"
        "      - run: |\n          make generate\n          pip install .\n"
        "      - run: pytest -v\n"
    )
    setup_py = (
        "from pathlib import Path\nfrom setuptools import setup\n\n"
        "if not Path('pkg/_generated.py').exists():\n"
        "    raise SystemExit('pkg/_generated.py is missing: run make generate')\n"
        "setup(name='pkg', version='1.0', packages=['pkg'])\n"
    )
    files = {
        "setup.py": setup_py,
        "Makefile": "generate:\n\tpython scripts/generate.py\n",
        "scripts/generate.py": "open('pkg/_generated.py', 'w').write('VALUE = 42\\n')\n",
        ".github/workflows/test.yml": workflow,
        "tests/test_generated.py": (
            "from pkg._generated import VALUE\n\n\ndef test_value():\n    assert VALUE == 42\n"
        ),
    }
    env, run = _build_and_run(docker_client, settings, tmp_path, files)
    assert run.outcomes == {**PASSED, "tests/test_generated.py::test_value": Outcome.PASSED}, (
        run.log_excerpt
    )
    # The target's own line is a script of the tree: it is what runs.
    assert env.spec.prepare == ("python scripts/generate.py",)
