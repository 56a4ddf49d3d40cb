"""How a repository with no Reprobot configuration runs its tests, and what its build needs.

Pure functions of the file list and a reader of file texts:

- ``detect_test_command``: pytest when the project configures pytest; else Django's runner for a
  Django project (``manage.py test``) or for Django-style frameworks with their own
  ``tests/runtests.py``; else pytest, which also runs unittest-only suites. (A command its CI
  job or its tox, nox or Hatch sessions name comes first: ``detect``.)
- ``usable_command``: a project's command as a sandbox may run it.
- ``detect_system_packages``: the compilers a build of its extensions needs beyond the C
  compiler every base image has (C++ for C++ sources and the meson-python and scikit-build
  backends, Fortran for Fortran sources, cargo for Rust through maturin or setuptools-rust).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Callable, Collection

from reprobot.validation.env.test_commands import runner_family

Reader = Callable[[str], str | None]

_PYTEST_CONFIG_FILES = ("pytest.ini", "conftest.py", "tests/conftest.py", "test/conftest.py")
_CPP_SUFFIXES = (".cpp", ".cc", ".cxx", ".c++", ".hpp", ".hxx")
_FORTRAN_SUFFIXES = (".f", ".f90", ".f95", ".f03", ".for")
_CPP_BACKENDS = ("mesonpy", "scikit_build_core", "skbuild")
_RUST_BACKENDS = ("maturin", "setuptools-rust", "setuptools_rust")
_DJANGO = re.compile(r"^\s*(?:from|import)\s+django\b", re.M)


def pytest_configured(files: Collection[str], read: Reader) -> bool:
    """Whether the project configures pytest (an ini section, a conftest, pyproject's table)."""
    if any(f in files for f in _PYTEST_CONFIG_FILES):
        return True
    if "[tool.pytest.ini_options]" in (read("pyproject.toml") or ""):
        return True
    if "[tool:pytest]" in (read("setup.cfg") or ""):
        return True
    return "[pytest]" in (read("tox.ini") or "")


def usable_command(command: str) -> str | None:
    """A session's command as a sandbox may run it: tox's ``{posargs}`` dropped, nothing else
    that only tox could expand, a runner that reports, and for pytest options only (the
    sandbox appends the tests to run)."""
    command = command.replace("{posargs}", "").strip()
    if not command or "{" in command or any(op in command for op in ("&&", "||", ";", "|")):
        return None
    family = runner_family(command)
    if family is None:
        return None
    try:
        words = shlex.split(command)
    except ValueError:
        return None
    if family == "pytest":
        cut = next(
            (i + 1 for i, w in enumerate(words) if w.rsplit("/", 1)[-1] in ("pytest", "py.test")),
            len(words),
        )
        words = words[:cut] + _sandbox_options(words[cut:])
        if not all(w.startswith("-") for w in words[cut:]):
            return None
    return shlex.join(words)


# pytest options of a project's own command that a sandbox run must not take: coverage of its
# own (Reprobot measures coverage itself, and two tracers do not nest), parallel workers (the
# sandbox's limits are its own), stopping at the first failure or choosing tests by an earlier
# run's cache (the sandbox selects the tests to run). Each with whether a value follows.
_NOT_IN_SANDBOX = {
    "--cov": False,
    "--cov-report": True,
    "--cov-config": True,
    "--cov-append": False,
    "--cov-branch": False,
    "--cov-fail-under": True,
    "--cov-context": True,
    "--no-cov": False,
    "--no-cov-on-fail": False,
    "-n": True,
    "--numprocesses": True,
    "--dist": True,
    "--maxprocesses": True,
    "-x": False,
    "--exitfirst": False,
    "--lf": False,
    "--last-failed": False,
    "--ff": False,
    "--failed-first": False,
    "--sw": False,
    "--stepwise": False,
}


def _sandbox_options(words: list[str]) -> list[str]:
    """pytest's options without those a sandbox run must not take (``--cov=pkg`` included)."""
    kept: list[str] = []
    skip = False
    for word in words:
        if skip:
            skip = False
            continue
        name = word.split("=", 1)[0]
        if name in _NOT_IN_SANDBOX:
            skip = _NOT_IN_SANDBOX[name] and "=" not in word
            continue
        kept.append(word)
    return kept


def django_command(files: Collection[str], read: Reader) -> str | None:
    """Django's runner for a Django project, or a framework's own ``runtests.py`` on Django."""
    if "manage.py" in files and _DJANGO.search(read("manage.py") or ""):
        return "python manage.py test -v 2"
    for script in ("tests/runtests.py", "runtests.py"):
        if script in files and _DJANGO.search(read(script) or ""):
            return f"python {script} --verbosity 2 --parallel 1"
    return None


def detect_test_command(files: Collection[str], read: Reader) -> str:
    """The test command of a repository that names none and whose CI and task-runner sessions
    name none a sandbox can run (``detect`` reads those first): see the module's docstring."""
    if pytest_configured(files, read):
        return "pytest"
    return django_command(files, read) or "pytest"


def detect_system_packages(files: Collection[str], read: Reader) -> tuple[str, ...]:
    """Debian compilers the project's extensions need beyond gcc (sorted)."""
    needed: set[str] = set()
    sources = [f for f in files if not f.startswith(("docs/", "doc/", "examples/"))]
    if any(f.lower().endswith(_CPP_SUFFIXES) for f in sources):
        needed.add("g++")
    if any(f.lower().endswith(_FORTRAN_SUFFIXES) for f in sources):
        needed.add("gfortran")
    pyproject = read("pyproject.toml") if "pyproject.toml" in files else None
    backend = re.search(r"""build-backend\s*=\s*["']([\w.]+)""", pyproject or "")
    if backend and backend.group(1).split(".")[0] in _CPP_BACKENDS:
        needed.add("g++")
    # A Rust extension builds with Debian's cargo; the crates it needs come from the build's
    # network like any other dependency.
    if "Cargo.toml" in files or any(b in (pyproject or "") for b in _RUST_BACKENDS):
        needed.add("cargo")
    return tuple(sorted(needed))
