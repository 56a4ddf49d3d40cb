"""What a repository's CI workflow files say about its Python version and its pytest command."""

from __future__ import annotations

import re
import shlex
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import yaml

from reprobot.validation import SUPPORTED_PYTHONS

_FLOAT_TAG = "tag:yaml.org,2002:float"


class _DecimalsAsTextLoader(yaml.SafeLoader):
    """``yaml.SafeLoader`` that leaves decimal numbers as the text they were written as."""


# YAML reads ``python-version: 3.10`` as the float 3.1; without the float resolver the scalar
# stays the string "3.10", which is what every workflow author means.
_DecimalsAsTextLoader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != _FLOAT_TAG]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
}


def load_yaml(text: str) -> Any:
    """``yaml.safe_load(text)``, except that decimal numbers stay text (``3.10`` → ``"3.10"``).

    Raises ``yaml.YAMLError`` as ``yaml.safe_load`` does.
    """
    # A SafeLoader subclass: it builds plain data only, as yaml.safe_load does.
    return yaml.load(text, Loader=_DecimalsAsTextLoader)


@dataclass(frozen=True)
class WorkflowHints:
    """The Python version and pytest command a repository's workflows use, when they say."""

    python: str | None = None
    test_command: str | None = None
    sources: tuple[str, ...] = ()  # the workflow files the hints come from


_VERSION = re.compile(r"^(3\.\d+)(?:\.\d+)?(?:-dev)?$")
_EXPRESSION = re.compile(r"\$\{\{(.*?)\}\}", re.DOTALL)
_MATRIX_REF = re.compile(r"^\s*matrix\.([A-Za-z0-9_-]+)\s*$")
_PYTHON_MATRIX_KEYS = ("python-version", "python", "python_version")
# A line holding any of these is a shell program, not one pytest command line.
_SHELL_OPERATORS = ("&", "|", ";", "$", "`", ">", "<")
# Wrappers that only choose the environment pytest runs in; the sandbox has its own.
_RUN_WRAPPERS = (("poetry", "run"), ("uv", "run"), ("pipenv", "run"), ("pdm", "run"))
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def _version_key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def _python_version(value: object) -> str | None:
    """``"3.10"`` for ``3.10``, ``"3.10.4"`` or ``"3.10-dev"``; None for PyPy, ranges, ``3.x``."""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        return None
    match = _VERSION.match(str(value).strip())
    return match.group(1) if match else None


def choose_python(listed: set[str]) -> str | None:
    """The sandbox Python to use for a project whose CI tests ``listed`` versions.

    The lowest listed version the sandbox supports; otherwise the supported version closest to
    the lowest listed one, preferring a newer one. The lowest, because old dependency pins
    still find wheels there. None when nothing is listed.
    """
    if not listed:
        return None
    ours = sorted((v for v in listed if v in SUPPORTED_PYTHONS), key=_version_key)
    if ours:
        return ours[0]
    lowest = min(listed, key=_version_key)
    newer = [v for v in SUPPORTED_PYTHONS if _version_key(v) >= _version_key(lowest)]
    return newer[0] if newer else max(SUPPORTED_PYTHONS, key=_version_key)


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


def _jobs(document: object) -> Iterator[dict[str, Any]]:
    if not isinstance(document, dict):
        return
    jobs = document.get("jobs")
    if isinstance(jobs, dict):
        yield from (job for job in jobs.values() if isinstance(job, dict))


def _steps(job: Mapping[str, Any]) -> Iterator[dict[str, Any]]:
    yield from (s for s in _as_list(job.get("steps")) if isinstance(s, dict))


def _job_pythons(job: Mapping[str, Any]) -> set[str]:
    strategy = job.get("strategy")
    matrix = strategy.get("matrix") if isinstance(strategy, dict) else None
    raw: list[object] = []
    for key in _PYTHON_MATRIX_KEYS:
        raw += _matrix_values(matrix, key)
    for step in _steps(job):
        uses = step.get("uses")
        settings = step.get("with")
        is_setup_python = isinstance(uses, str) and uses.startswith("actions/setup-python")
        if is_setup_python and isinstance(settings, dict):
            raw += _expand(settings.get("python-version"), matrix)
    return {v for v in map(_python_version, raw) if v is not None}


def _run_lines(job: Mapping[str, Any]) -> Iterator[str]:
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


def _pytest_words(line: str) -> list[str] | None:
    """The words of ``line`` from its pytest invocation on, when the line invokes pytest."""
    try:
        words = shlex.split(line, comments=True)
    except ValueError:
        return None
    start = 0
    while start < len(words) and _ASSIGNMENT.match(words[start]):
        start += 1
    rest = words[start:]
    for wrapper in _RUN_WRAPPERS:
        if tuple(rest[: len(wrapper)]) == wrapper:
            rest = rest[len(wrapper) :]
            break
    program = rest[0].rsplit("/", 1)[-1] if rest else ""
    runs_pytest = program in ("pytest", "py.test")
    runs_module = program.startswith("python") and rest[1:3] == ["-m", "pytest"]
    return words[:start] + rest if runs_pytest or runs_module else None


def _usable_command(line: str, words: list[str]) -> str | None:
    """The pytest command of ``line`` as the sandbox may run it, or None when the line holds
    expressions or shell syntax that only the CI runner could give a meaning to."""
    if _EXPRESSION.search(line) or any(op in line for op in _SHELL_OPERATORS):
        return None
    return shlex.join(words)


def workflow_hints(files: Mapping[str, str]) -> WorkflowHints:
    """Hints from ``files`` (path → text of ``.github/workflows/*.yml``); files that do not parse
    are skipped.

    ``python``: chosen by ``choose_python`` among the versions ``actions/setup-python`` steps
    and ``python-version``/``python`` matrix entries list. ``test_command``: the first ``run:``
    line (files in path order, jobs and steps in file order) that invokes pytest, with
    ``poetry run``-style wrappers removed; None when that line needs the CI runner to mean
    anything (``${{ }}`` expressions, shell operators, variables), rather than a guess from a
    later line.
    """
    listed: set[str] = set()
    python_sources: list[str] = []
    command: str | None = None
    command_source: str | None = None
    found_pytest = False
    for path in sorted(files):
        try:
            document = load_yaml(files[path])
        except yaml.YAMLError:
            continue
        for job in _jobs(document):
            versions = _job_pythons(job)
            if versions:
                listed |= versions
                if path not in python_sources:
                    python_sources.append(path)
            if found_pytest:
                continue
            for line in _run_lines(job):
                words = _pytest_words(line)
                if words is None:
                    continue
                found_pytest = True
                command = _usable_command(line, words)
                command_source = path if command else None
                break
    python = choose_python(listed)
    sources = list(python_sources) if python else []
    if command_source and command_source not in sources:
        sources.append(command_source)
    return WorkflowHints(python=python, test_command=command, sources=tuple(sorted(sources)))
