"""Python versions, installs and the test command from realistic GitHub Actions workflows."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from reprobot.validation.env.detect.commands import Project
from reprobot.validation.env.detect.metadata import ProjectMeta
from reprobot.validation.env.detect.plan import InstallPlan
from reprobot.validation.env.detect.settings_file import load_yaml
from reprobot.validation.env.detect.workflows import WorkflowHints
from reprobot.validation.env.detect.workflows import workflow_hints as read_hints


def workflow_hints(
    files: Mapping[str, str], tree: Mapping[str, str] | None = None
) -> WorkflowHints:
    """The hints of ``files`` for a project whose other files are ``tree``."""
    tree = dict(tree or {})
    project = Project(ProjectMeta.read(tree.get), set(tree), tree.get)
    return read_hints(files, project)


# Shaped like Flask's tests.yaml: tox runs the tests, the matrix lists versions as strings
# inside ``include`` entries, PyPy among them.
FLASK_LIKE = """\
name: Tests
on:
  push:
    branches: [main, stable]
    paths-ignore: ['docs/**', '*.md', '*.rst']
  pull_request:
    paths-ignore: [ 'docs/**', '*.md', '*.rst' ]
jobs:
  tests:
    name: ${{ matrix.name || matrix.python }}
    runs-on: ${{ matrix.os || 'ubuntu-latest' }}
    strategy:
      fail-fast: false
      matrix:
        include:
          - {python: '3.13'}
          - {python: '3.12'}
          - {name: Windows, python: '3.12', os: windows-latest}
          - {name: Mac, python: '3.12', os: macos-latest}
          - {python: '3.11'}
          - {python: '3.10'}
          - {name: PyPy, python: 'pypy-3.10', tox: pypy310}
          - {name: Minimum Versions, python: '3.13', tox: py-min}
    steps:
      - uses: actions/checkout@11bd71901bbe5b1630ceea73d27597364c9af683 # v4.2.2
      - uses: astral-sh/setup-uv@caf0cab7a618c569241d31dcd442f54681755d39 # v3.2.4
        with:
          enable-cache: true
          prune-cache: false
      - uses: actions/setup-python@0b93645e9fea7318ecaed2b359559ac225c90a2b # v5.3.0
        with:
          python-version: ${{ matrix.python }}
      - run: uv run --locked tox run -e ${{ matrix.tox || format('py{0}', matrix.python) }}
"""

# The classic starter workflow: unquoted versions (YAML floats, 3.10 would read as 3.1) and
# pytest with coverage in a multi-line run block.
MATRIX_WITH_COV = """\
name: Python package
on: [push, pull_request]
jobs:
  build:
    runs-on: ubuntu-latest
    strategy:
      fail-fast: false
      matrix:
        python-version: [3.8, 3.9, 3.10]
    steps:
    - uses: actions/checkout@v4
    - name: Set up Python ${{ matrix.python-version }}
      uses: actions/setup-python@v5
      with:
        python-version: ${{ matrix.python-version }}
    - name: Install dependencies
      run: |
        python -m pip install --upgrade pip
        python -m pip install flake8 pytest pytest-cov
        if [ -f requirements.txt ]; then pip install -r requirements.txt; fi
    - name: Lint with flake8
      run: |
        flake8 . --count --select=E9,F63,F7,F82 --show-source --statistics
    - name: Test with pytest
      run: |
        pytest --cov=mypkg --cov-report=xml tests/
    - uses: codecov/codecov-action@v4
"""

# nox drives the tests; no line invokes pytest.
NOX_BASED = """\
name: CI
on:
  pull_request:
  push:
    branches: [main]
concurrency:
  group: ${{ github.workflow }}-${{ github.ref }}
  cancel-in-progress: true
jobs:
  tests:
    name: nox ${{ matrix.python-version }}
    runs-on: ubuntu-latest
    strategy:
      matrix:
        python-version: ["3.10", "3.12"]
    steps:
      - uses: actions/checkout@v4
      - uses: actions/setup-python@v5
        with:
          python-version: ${{ matrix.python-version }}
          allow-prereleases: true
      - uses: wntrblm/nox@2024.10.09
      - run: nox -s tests-${{ matrix.python-version }} -- --junitxml=results.xml
"""


TOX_INI = """\
[tox]
envlist = py3{10,11,12,13}, py-min
[testenv]
extras = testing
deps =
    -r requirements/tests.txt
    min: werkzeug==3.0.0
commands = pytest -v --tb=short --basetemp={envtmpdir} {posargs}
"""


def test_tox_based_workflow_reads_the_tox_environment() -> None:
    hints = workflow_hints(
        {".github/workflows/tests.yaml": FLASK_LIKE},
        {"tox.ini": TOX_INI, "requirements/tests.txt": "pytest\n"},
    )
    assert hints.pythons == {"3.10", "3.11", "3.12", "3.13"}
    assert hints.runs_tests
    # The matrix's tox environment is an expression: the base environment stands in for it,
    # and its command holds tox's own substitution, which no sandbox can expand.
    assert hints.plan == InstallPlan(
        extras=("testing",), requirement_files=("requirements/tests.txt",)
    )
    assert hints.test_command is None
    assert hints.job == ".github/workflows/tests.yaml: job tests"


def test_matrix_floats_keep_their_written_form_and_pytest_line_is_found() -> None:
    hints = workflow_hints({".github/workflows/python-package.yml": MATRIX_WITH_COV})
    assert hints.pythons == {"3.8", "3.9", "3.10"}
    # A path in the command would narrow what the sandbox selects: options only.
    assert hints.test_command is None
    assert hints.plan.packages == ("flake8", "pytest", "pytest-cov")
    assert hints.plan.requirement_files == ("requirements.txt",)


def test_nox_workflow_reads_the_nox_session() -> None:
    noxfile = (
        "import nox\n\n"
        "@nox.session(python=['3.10', '3.12'])\n"
        "def tests(session):\n"
        "    session.install('-e', '.[tests]', 'pytest-randomly')\n"
        "    session.run('pytest', '-q', *session.posargs)\n"
    )
    hints = workflow_hints({".github/workflows/ci.yml": NOX_BASED}, {"noxfile.py": noxfile})
    assert hints.pythons == {"3.10", "3.12"}
    assert hints.plan == InstallPlan(extras=("tests",), packages=("pytest-randomly",))
    assert hints.test_command == "pytest -q"


def test_decimals_stay_text() -> None:
    assert load_yaml("v: [3.8, 3.10, '3.11', 3]\nx: 1.5e3") == {
        "v": ["3.8", "3.10", "3.11", 3],
        "x": "1.5e3",
    }


def _job(steps: str, matrix: str = "") -> str:
    strategy = f"    strategy:\n      matrix:\n{matrix}" if matrix else ""
    return f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n{strategy}    steps:\n{steps}"


def test_pypy_and_wildcards_are_ignored() -> None:
    text = _job(
        "      - uses: actions/setup-python@v5\n"
        "        with:\n          python-version: ${{ matrix.python-version }}\n",
        "        python-version: ['pypy-3.9', '3.x', '3.12-dev', '3.11.4']\n",
    )
    assert workflow_hints({"w.yml": text}).pythons == {"3.12", "3.11"}


def test_literal_and_multi_line_setup_python_versions() -> None:
    literal = _job(
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: 3.13\n"
    )
    several = _job(
        "      - uses: actions/setup-python@v5\n"
        "        with:\n          python-version: |\n            3.12\n            3.10\n"
    )
    assert workflow_hints({"a.yml": literal}).pythons == {"3.13"}
    assert workflow_hints({"b.yml": several}).pythons == {"3.12", "3.10"}


@pytest.mark.parametrize(
    ("run", "command"),
    [
        ("python -m pytest -ra", "python -m pytest -ra"),
        # A path or an option's value would change what the sandbox selects.
        ("python -m pytest -ra tests", None),
        ("python3.11 -m pytest", "python3.11 -m pytest"),
        ("py.test -q", "py.test -q"),
        ("poetry run pytest -q", "pytest -q"),
        ("uv run pytest", "pytest"),
        ("coverage run -m pytest -q", "python -m pytest -q"),
        ("PYTHONPATH=src pytest tests", None),
        ("pytest -k 'not slow and not network'", None),
        ("pytest \\\n  --strict-markers \\\n  -ra", "pytest --strict-markers -ra"),
        ("pytest -n ${{ matrix.workers }}", None),
        ("pytest -x && coverage report", None),
        ("pytest | tee log.txt", None),
        ("pytest; echo done", None),
        ("pytest > out.txt", None),
        ("pytest $(cat args.txt)", None),
        ("pytest `cat args.txt`", None),
        ("pytest $PYTEST_ARGS", None),
    ],
)
def test_pytest_command_lines(run: str, command: str | None) -> None:
    block = "\n".join("            " + line for line in run.splitlines())
    text = _job(f"      - run: |\n{block}\n")
    assert workflow_hints({"w.yml": text}).test_command == command


def test_first_pytest_line_decides_and_comments_and_other_tools_are_skipped() -> None:
    text = _job(
        "      - run: |\n"
        "          set -euxo pipefail\n"
        "          # pytest --this-is-a-comment\n"
        "          pip install pytest\n"
        "          python -m pip install pytest-xdist\n"
        "          pytest -n auto --dist loadfile || pytest --lf\n"
        "      - run: pytest tests/unit\n"
    )
    # The first pytest line is a shell program: a later line is not a safe guess for it.
    assert workflow_hints({"w.yml": text}).test_command is None


def test_files_that_do_not_parse_are_skipped_and_sources_name_the_useful_ones() -> None:
    files = {
        ".github/workflows/broken.yml": "jobs: [unclosed\n",
        ".github/workflows/docs.yml": _job("      - run: sphinx-build docs out\n"),
        ".github/workflows/release.yml": "- not\n- a mapping\n",
        ".github/workflows/tests.yml": MATRIX_WITH_COV,
    }
    hints = workflow_hints(files)
    assert hints.pythons == {"3.8", "3.9", "3.10"}
    assert hints.runs_tests
    assert hints.job == ".github/workflows/tests.yml: job build"


def test_no_workflows() -> None:
    assert workflow_hints({}) == WorkflowHints()


def test_a_job_that_runs_a_few_named_tests_is_not_the_test_job() -> None:
    files = {
        ".github/workflows/check.yml": _job(
            "      - run: python -m unittest tests.test_meta.TestVersion\n"
        ),
        ".github/workflows/tox.yml": _job(
            "      - run: |\n          sudo apt-get install -y libtidy-dev\n"
            "          python -m pip install tox\n      - run: python -m tox\n"
        ),
    }
    tox = (
        "[testenv]\ndeps = pytidylib\n"
        "commands = coverage run --source=pkg -m unittest discover {toxinidir}/tests\n"
    )
    hints = workflow_hints(files, {"tox.ini": tox})
    assert hints.job == ".github/workflows/tox.yml: job test"
    assert not hints.narrow
    assert hints.system_packages == ("libtidy-dev",)
    assert hints.plan.packages == ("pytidylib",)
    assert hints.test_command == "python -m unittest discover tests"
    # Alone, the narrow job is still the one that runs tests.
    only = workflow_hints({"w.yml": files[".github/workflows/check.yml"]})
    assert only.narrow and only.runs_tests


def test_the_usual_test_workflow_comes_first_and_downstream_jobs_are_skipped() -> None:
    downstream = (
        "on: push\njobs:\n  fastapi:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n        with:\n          repository: fastapi/fastapi\n"
        "      - run: pip install -e .[all]\n      - run: pytest -q\n"
    )
    files = {
        ".github/workflows/docker-integration.yml": _job("      - run: pytest -q docker/\n"),
        ".github/workflows/test-downstream.yml": downstream,
        ".github/workflows/test.yml": _job(
            "      - run: pip install --group test\n      - run: pytest -ra\n"
        ),
    }
    hints = workflow_hints(files, {"pyproject.toml": '[dependency-groups]\ntest = ["trustme"]\n'})
    assert hints.job == ".github/workflows/test.yml: job test"
    assert hints.plan.packages == ("trustme",)
    assert hints.test_command == "pytest -ra"
