"""Python version and pytest command from realistic GitHub Actions workflow files."""

from __future__ import annotations

import pytest

from reprobot.bot.config.ci_workflows import WorkflowHints, choose_python, load_yaml, workflow_hints

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


def test_tox_based_workflow_gives_the_lowest_supported_python_and_no_command() -> None:
    hints = workflow_hints({".github/workflows/tests.yaml": FLASK_LIKE})
    assert hints == WorkflowHints(
        python="3.11", test_command=None, sources=(".github/workflows/tests.yaml",)
    )


def test_matrix_floats_keep_their_written_form_and_pytest_line_is_found() -> None:
    hints = workflow_hints({".github/workflows/python-package.yml": MATRIX_WITH_COV})
    assert hints.python == "3.9"
    assert hints.test_command == "pytest --cov=mypkg --cov-report=xml tests/"
    assert hints.sources == (".github/workflows/python-package.yml",)


def test_nox_workflow_between_supported_versions() -> None:
    hints = workflow_hints({".github/workflows/ci.yml": NOX_BASED})
    assert (hints.python, hints.test_command) == ("3.11", None)


def test_decimals_stay_text() -> None:
    assert load_yaml("v: [3.8, 3.10, '3.11', 3]\nx: 1.5e3") == {
        "v": ["3.8", "3.10", "3.11", 3],
        "x": "1.5e3",
    }


@pytest.mark.parametrize(
    ("listed", "chosen"),
    [
        ({"3.8", "3.9", "3.10"}, "3.9"),
        ({"3.10", "3.12"}, "3.11"),
        ({"3.8", "3.11", "3.12"}, "3.11"),
        ({"3.7"}, "3.9"),
        ({"3.12"}, "3.13"),
        ({"3.14"}, "3.13"),
        (set(), None),
    ],
)
def test_choose_python(listed: set[str], chosen: str | None) -> None:
    assert choose_python(listed) == chosen


def _job(steps: str, matrix: str = "") -> str:
    strategy = f"    strategy:\n      matrix:\n{matrix}" if matrix else ""
    return f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n{strategy}    steps:\n{steps}"


def test_pypy_and_wildcards_are_ignored() -> None:
    text = _job(
        "      - uses: actions/setup-python@v5\n"
        "        with:\n          python-version: ${{ matrix.python-version }}\n",
        "        python-version: ['pypy-3.9', '3.x', '3.12-dev', '3.11.4']\n",
    )
    assert workflow_hints({"w.yml": text}).python == "3.11"


def test_literal_and_multi_line_setup_python_versions() -> None:
    literal = _job(
        "      - uses: actions/setup-python@v5\n        with:\n          python-version: 3.13\n"
    )
    several = _job(
        "      - uses: actions/setup-python@v5\n"
        "        with:\n          python-version: |\n            3.12\n            3.10\n"
    )
    assert workflow_hints({"a.yml": literal}).python == "3.13"
    assert workflow_hints({"b.yml": several}).python == "3.11"


@pytest.mark.parametrize(
    ("run", "command"),
    [
        ("python -m pytest -ra tests", "python -m pytest -ra tests"),
        ("python3.11 -m pytest", "python3.11 -m pytest"),
        ("py.test -q", "py.test -q"),
        ("poetry run pytest -q", "pytest -q"),
        ("uv run pytest", "pytest"),
        ("PYTHONPATH=src pytest tests", "PYTHONPATH=src pytest tests"),
        ("pytest -k 'not slow and not network'", "pytest -k 'not slow and not network'"),
        ("pytest \\\n  --strict-markers \\\n  -x", "pytest --strict-markers -x"),
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
    assert hints.python == "3.9"
    assert hints.test_command == "pytest --cov=mypkg --cov-report=xml tests/"
    assert hints.sources == (".github/workflows/tests.yml",)


def test_no_workflows() -> None:
    assert workflow_hints({}) == WorkflowHints()
