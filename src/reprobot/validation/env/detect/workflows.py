"""What a repository's CI workflows say of its tests: the Python versions its test job runs on,
what that job installs before the tests, and its test command.

The test job is the first job (workflow files named for tests or CI first, then by path; jobs in
file order) with a ``run:`` line that runs the tests, directly or through tox, nox, Hatch, uv,
Poetry or make. Its earlier lines are read as installs (``commands.read_line``); nothing of a
workflow is run as written, as it may need secrets or tools the sandbox does not have.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import yaml

from reprobot.validation.env.detect.commands import LineReading, Project, read_line
from reprobot.validation.env.detect.plan import InstallPlan
from reprobot.validation.env.detect.settings_file import load_yaml

_VERSION = re.compile(r"^(3\.\d+)(?:\.\d+)?(?:-dev)?$")
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_MATRIX_REF = re.compile(r"^\s*matrix\.([A-Za-z0-9_-]+)\s*$")
_PYTHON_MATRIX_KEYS = ("python-version", "python", "python_version", "py")
# Workflow files with the usual names of a test workflow come first, then others named for
# tests, then those named for CI in general.
_USUAL = re.compile(
    r"^(tests?|ci|main|testing|pytest|unit-?tests?|python-(?:package|tests?))\.ya?ml$", re.I
)
_TEST_FILE = re.compile(r"test|tox|nox|pytest", re.I)
_CI_FILE = re.compile(r"^(ci|main|python|build|check)", re.I)


@dataclass(frozen=True)
class WorkflowHints:
    """What the test job says: Python versions listed, installs, the test command, and where."""

    pythons: frozenset[str] = frozenset()
    plan: InstallPlan = field(default_factory=InstallPlan)
    runs_tests: bool = False
    test_command: str | None = None
    job: str | None = None  # "path: job name" of the test job
    prepare: tuple[str, ...] = ()  # the project's own scripts the job runs before the tests
    system_packages: tuple[str, ...] = ()  # Debian packages it installs with apt
    narrow: bool = False  # it runs a few tests it names, not the suite


def python_version(value: object) -> str | None:
    """``"3.10"`` for ``3.10``, ``"3.10.4"`` or ``"3.10-dev"``; None for PyPy, ranges, ``3.x``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    match = _VERSION.match(str(value).strip())
    return match.group(1) if match else None


def _as_list(value: object) -> list[object]:
    if isinstance(value, list):
        return value
    return [] if value is None else [value]


def _matrix_values(matrix: object, key: str) -> list[object]:
    """The values ``matrix.<key>`` takes, from the matrix lists and its ``include`` entries."""
    if not isinstance(matrix, dict):
        return []
    values = _as_list(matrix.get(key))
    for entry in _as_list(matrix.get("include")):
        if isinstance(entry, dict) and key in entry:
            values.append(entry[key])
    return values


def _expand(value: object, matrix: object) -> list[object]:
    """``value`` with a whole-value ``${{ matrix.X }}`` replaced by the values X takes."""
    if not isinstance(value, str):
        return [value]
    expression = _EXPRESSION.fullmatch(value.strip())
    if expression is None:
        # setup-python accepts several versions, one per line.
        return [line for line in value.splitlines() if line.strip()]
    ref = _MATRIX_REF.match(expression.group(1))
    return _matrix_values(matrix, ref.group(1)) if ref else []


def _jobs(document: object) -> Iterator[tuple[str, dict[str, Any]]]:
    if not isinstance(document, dict):
        return
    jobs = document.get("jobs")
    if isinstance(jobs, dict):
        yield from ((str(n), j) for n, j in jobs.items() if isinstance(j, dict))


def _steps(job: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    yield from (s for s in _as_list(job.get("steps")) if isinstance(s, dict))


def job_pythons(job: Mapping[str, Any]) -> set[str]:
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    raw: list[object] = []
    for key in _PYTHON_MATRIX_KEYS:
        raw += _matrix_values(matrix, key)
    for step in _steps(job):
        uses = step.get("uses")
        settings = step.get("with")
        sets_python = isinstance(uses, str) and uses.startswith(
            ("actions/setup-python", "astral-sh/setup-uv")
        )
        if sets_python and isinstance(settings, dict):
            raw += _expand(settings.get("python-version"), matrix)
    return {v for v in map(python_version, raw) if v is not None}


def run_lines(job: Mapping[str, Any]) -> Iterator[str]:
    """The command lines of the job's ``run:`` steps, continuation lines joined."""
    for step in _steps(job):
        run = step.get("run")
        if not isinstance(run, str):
            continue
        pending = ""
        for line in run.splitlines():
            stripped = line.strip()
            if stripped.endswith("\\"):
                pending += stripped[:-1] + " "
                continue
            joined = " ".join((pending + stripped).split())
            pending = ""
            if joined and not joined.startswith("#"):
                yield joined
        if pending.strip():
            yield " ".join(pending.split())


def _read_job(
    path: str, name: str, job: Mapping[str, Any], project: Project
) -> WorkflowHints | None:
    """The job's hints when it runs the tests; its installs are the lines up to the test line."""
    where = f"{path}: job {name}"
    reading = LineReading()
    for written in run_lines(job):
        # ``${{ matrix.extras }}`` and the like: words holding an expression are left out.
        reading = reading.merged(read_line(_EXPRESSION.sub("$CI", written), project, where))
        if reading.runs_tests:
            return WorkflowHints(
                frozenset(job_pythons(job)),
                reading.plan,
                True,
                reading.test_command,
                where,
                reading.prepare,
                reading.system_packages,
                reading.narrow,
            )
    return None


def _file_order(path: str) -> tuple[bool, bool, bool, str]:
    name = path.rsplit("/", 1)[-1]
    return (
        _USUAL.match(name) is None,
        _TEST_FILE.search(name) is None,
        _CI_FILE.search(name) is None,
        path,
    )


def tests_another_project(job: Mapping[str, Any]) -> bool:
    """Whether the job checks out or clones another repository (a downstream project's tests
    against this one): its test line is not this project's."""
    for step in _steps(job):
        uses, settings = step.get("uses"), step.get("with")
        checkout = isinstance(uses, str) and uses.startswith("actions/checkout")
        if checkout and isinstance(settings, dict) and settings.get("repository"):
            return True
        run = step.get("run")
        if isinstance(run, str) and re.search(r"\bgit clone\b|\bgh repo clone\b", run):
            return True
    return False


def workflow_hints(files: Mapping[str, str], project: Project) -> WorkflowHints:
    """Hints from ``files`` (path → text of ``.github/workflows/*.yml``); files that do not parse
    are skipped. The Python versions are the test job's, or every job's when it lists none."""
    jobs: list[tuple[str, str, dict[str, Any]]] = []
    for path in sorted(files, key=_file_order):
        try:
            document = load_yaml(files[path])
        except yaml.YAMLError:
            continue
        jobs += [(path, name, job) for name, job in _jobs(document)]
    listed = frozenset(v for _, _, job in jobs for v in job_pythons(job))
    found = [
        h
        for path, name, job in jobs
        if not tests_another_project(job) and (h := _read_job(path, name, job, project))
    ]
    # A job that runs a few named tests (a version check) is the test job only when no job
    # runs the suite.
    found.sort(key=lambda h: h.narrow)
    if not found:
        return WorkflowHints(pythons=listed)
    return found[0] if found[0].pythons else replace(found[0], pythons=listed)
