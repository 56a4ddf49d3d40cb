"""Files a change can use to alter how its tests run, before any test runs (pure functions).

Code in ``conftest.py``, in a pytest plugin, in pytest's configuration, in ``sitecustomize`` or
in a ``.pth`` file runs inside the test process before the tests do, and can make that process
report whatever it likes. The sandbox keeps such code away from the runner and the report, but
not from pytest's own process; so a verdict names a fix that changes these files, and the App
treats it with care.
"""

from __future__ import annotations

import configparser
import tomllib
from collections.abc import Callable, Iterable
from pathlib import PurePosixPath
from typing import Any

# pytest reads the first of pytest.toml, .pytest.toml, pytest.ini, .pytest.ini it finds (pytest 9
# reads all four; older ones the ini files): a new one wins over the project's own configuration.
ALWAYS = frozenset(
    {
        "conftest.py",
        "pytest.ini",
        ".pytest.ini",
        "pytest.toml",
        ".pytest.toml",
        "sitecustomize.py",
        "usercustomize.py",
    }
)
CONFIG_FILES = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
# setup.cfg and tox.ini sections that configure pytest or register its plugins.
_INI_SECTIONS = ("tool:pytest", "pytest", "options.entry_points")


def _pytest_part_of_pyproject(text: str) -> Any:
    data = tomllib.loads(text)
    tool = data.get("tool", {})
    project = data.get("project", {})
    return (
        tool.get("pytest") if isinstance(tool, dict) else None,
        (project.get("entry-points") or {}).get("pytest11") if isinstance(project, dict) else None,
        (tool.get("poetry", {}) or {}).get("plugins", {}).get("pytest11")
        if isinstance(tool, dict) and isinstance(tool.get("poetry"), dict)
        else None,
    )


def _pytest_part_of_ini(text: str) -> Any:
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.read_string(text)
    return {
        section: sorted(parser.items(section))
        for section in _INI_SECTIONS
        if parser.has_section(section)
    }


def _pytest_part(name: str, text: str | None) -> Any:
    """The part of a configuration file that configures pytest, comparable across versions."""
    if text is None:
        return None
    toml = name == "pyproject.toml"
    part = _pytest_part_of_pyproject(text) if toml else _pytest_part_of_ini(text)
    # A file that configures nothing of pytest's is as good as no file.
    return part if any(part.values() if isinstance(part, dict) else part) else None


def changes_how_tests_run(path: str, old_text: str | None, new_text: str | None) -> bool:
    """Whether a change of ``path`` from ``old_text`` to ``new_text`` (None: absent) can run
    code, or change pytest's options, in the test process before the tests run."""
    name = PurePosixPath(path).name
    if _runs_first(path):
        return True
    if name == "setup.py":
        return any("pytest11" in (text or "") for text in (old_text, new_text))
    if name in CONFIG_FILES:
        try:
            changed: bool = _pytest_part(name, old_text) != _pytest_part(name, new_text)
        except (tomllib.TOMLDecodeError, configparser.Error, AttributeError, TypeError):
            # A file that does not parse cannot be shown harmless.
            return True
        return changed
    return False


def _runs_first(path: str) -> bool:
    name = PurePosixPath(path).name
    return name in ALWAYS or name.endswith(".pth")


def _may_configure(path: str) -> bool:
    name = PurePosixPath(path).name
    return name == "setup.py" or name in CONFIG_FILES


def harness_changes(
    paths: Iterable[str],
    old_text: Callable[[str], str | None],
    new_text: Callable[[str], str | None],
) -> tuple[str, ...]:
    """The changed ``paths`` that change how the tests run, sorted. The readers give a file's
    text before and after the change (None when it does not exist on that side); only
    configuration files are read."""
    found = {
        path
        for path in paths
        if _runs_first(path)
        or (_may_configure(path) and changes_how_tests_run(path, old_text(path), new_text(path)))
    }
    return tuple(sorted(found))
