"""What a change may contain and still be called verified (pure functions).

A pass of the tests proves something only about code a reviewer can read in the diff and that
runs as the diff shows. Python, pip and pytest load code from a far larger surface than any
list of dangerous names: compiled and sourceless files, archives on a package's path, build
backends, entry points, ``.pth`` files, configuration, modules that shadow others. So this is
an allowlist: every changed path must be a text file of a kind that cannot change how code is
imported, built or tested; any other path makes a passing change "needs review", with the path
and why. The architecture document states the same list.
"""

from __future__ import annotations

import configparser
import re
import sys
import tomllib
import unicodedata
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import Any

from reprobot.validation.source.git_changes import EXECUTABLE, REGULAR, FileChange

# Folders whose modules Python finds before the project's own packages in a test run: the
# repository's root (the run puts it first) and a src layout's root.
_IMPORT_ROOTS = frozenset({"", "src"})
_TEST_FOLDERS = frozenset({"test", "tests", "testing"})
# Modules pytest and Reprobot's runner import at start-up, beside the standard library's.
_START_UP_MODULES = frozenset(
    {
        "pytest", "_pytest", "py", "pluggy", "iniconfig", "packaging", "exceptiongroup",
        "tomli", "colorama", "pygments", "coverage", "cov", "cov_contexts", "reprobot_report",
        "reprobot_unittest", "reprobot", "sitecustomize", "usercustomize", "typing_extensions",
    }
)  # fmt: skip
# Python files that run before the tests, or while the project is built, whatever they hold.
_RUNS_FIRST = frozenset(
    {"conftest.py", "setup.py", "noxfile.py", "sitecustomize.py", "usercustomize.py",
     "versioneer.py", "fabfile.py", "tasks.py", "__main__.py"}
)  # fmt: skip
# Text that is read, not run: documentation, change notes, data and type stubs.
_TEXT_SUFFIXES = frozenset(
    {
        ".rst", ".md", ".markdown", ".txt", ".adoc", ".asciidoc", ".html", ".htm", ".css",
        ".svg", ".csv", ".tsv", ".json", ".jsonl", ".xml", ".yaml", ".yml", ".po", ".pot",
        ".dat", ".pyi", ".ipynb", ".tex", ".bib", ".j2", ".jinja", ".tpl",
    }
)  # fmt: skip
_TEXT_NAMES = frozenset(
    {
        "README", "CHANGES", "CHANGELOG", "HISTORY", "NEWS", "AUTHORS", "CONTRIBUTORS",
        "LICENSE", "LICENCE", "COPYING", "NOTICE", "THANKS", "TODO", "py.typed",
    }
)  # fmt: skip
# Text files of known kinds that nonetheless decide how the project is built or tested.
_TEXT_BUT_SETTINGS = frozenset(
    {"entry_points.txt", "top_level.txt", "SOURCES.txt", "requires.txt", "CMakeLists.txt",
     "reprobot.yml", ".readthedocs.yml", ".pre-commit-config.yaml", "environment.yml",
     "environment.yaml", "codecov.yml", "meta.yaml"}
)  # fmt: skip
_NOTES_FOLDERS = frozenset({"docs", "doc", "changelog.d", "newsfragments", "changes"})
# Settings files whose only change may be a linter's or formatter's section, or the version.
_SETTINGS = frozenset({"pyproject.toml", "setup.cfg", "tox.ini"})
_HARMLESS_TOOLS = frozenset(
    {
        "black", "ruff", "isort", "mypy", "pylint", "flake8", "pyright", "pydocstyle",
        "pycodestyle", "pep8", "codespell", "towncrier", "bumpversion", "bumpver", "yapf",
        "autopep8", "docformatter", "interrogate", "check-manifest", "check_manifest",
        "commitizen", "darglint", "doc8", "blackdoc", "pyupgrade", "vulture", "bandit",
        "typos", "mdformat", "sphinx-lint", "semantic_release", "pylint.messages_control",
        "pylint.format", "pylint.master", "pylint.basic", "pylint.design",
    }
)  # fmt: skip
# Characters that make text read differently from how it runs (Trojan Source) or hide it.
_INVISIBLE_CATEGORIES = frozenset({"Cf", "Cc", "Co", "Cs"})
_ALLOWED_CONTROLS = frozenset("\t\n\r\f\v")
_ASCII_CONTROL = re.compile(rb"[\x00-\x08\x0e-\x1f\x7f]")


@dataclass(frozen=True)
class PathConcern:
    """A changed path a verified change may not contain, and why."""

    path: str
    why: str

    def describe(self) -> str:
        return f"{self.path} ({self.why})"


Reader = Callable[[str | None], bytes | None]


def review_paths(
    changes: Iterable[FileChange], content: Reader, existing: Iterable[str]
) -> tuple[PathConcern, ...]:
    """The changed paths that keep a passing change from being verified, in path order.

    ``content`` gives a blob's bytes by its id (None for an absent side); ``existing`` is every
    file path of the base tree."""
    folders = {str(parent) for path in existing for parent in PurePosixPath(path).parents}
    found: dict[str, PathConcern] = {}
    for change in changes:
        concern = _concern(change, content, frozenset(folders))
        if concern is not None:
            found.setdefault(concern.path, concern)
    return tuple(found[p] for p in sorted(found))


def _concern(change: FileChange, content: Reader, folders: frozenset[str]) -> PathConcern | None:
    for path in change.paths:
        if unreadable := _unreadable_name(path):
            return PathConcern(path, unreadable)
    if change.status not in ("A", "M", "D", "R"):
        return PathConcern(change.path, f"git reads it as a change of kind {change.status}")
    for mode in (change.old_mode, change.new_mode):
        if mode is not None and mode not in (REGULAR, EXECUTABLE):
            return PathConcern(change.path, "a symbolic link or a submodule, not a file")
    if change.old_mode and change.new_mode and change.old_mode != change.new_mode:
        modes = f"{change.old_mode} to {change.new_mode}"
        return PathConcern(change.path, f"its mode changes ({modes})")
    for path in change.paths:
        added = change.status in ("A", "R") and path == change.path
        if kind := _kind_concern(path, added, folders):
            return PathConcern(path, kind)
    new = content(change.new_blob)
    if change.new_blob is not None and (new is None or not _is_text(new)):
        return PathConcern(
            change.path, "binary, not UTF-8, or over 1 MB: not text a reviewer reads in the diff"
        )
    if new is not None and (hidden := _hidden_characters(new)):
        return PathConcern(change.path, hidden)
    name = PurePosixPath(change.path).name
    if name in _SETTINGS:
        old = content(change.old_blob)
        if not settings_change_is_harmless(name, old, new):
            return PathConcern(
                change.path,
                "build, packaging or test settings: only a linter's section or the version may "
                "change",
            )
    return None


def _unreadable_name(path: str) -> str | None:
    if any(unicodedata.category(ch) in _INVISIBLE_CATEGORIES for ch in path):
        return "its name holds control or invisible characters"
    return None


def _kind_concern(path: str, added: bool, existing_folders: frozenset[str]) -> str | None:
    """Why a path's kind alone keeps a change from being verified (None: a kind it may hold)."""
    pure = PurePosixPath(path)
    parts, name = pure.parts, pure.name
    folders = parts[:-1]
    if any(part == "__pycache__" or part.endswith((".egg-info", ".dist-info")) for part in parts):
        return "build output or package metadata, not source"
    if name.startswith(".git") or name in (".gitattributes", ".gitmodules"):
        return "git's own settings change how the tree is read"
    if name.endswith(".pth"):
        return "a .pth file runs code at every interpreter start"
    if name.endswith(".py"):
        return _python_concern(folders, name, added, existing_folders)
    if name in _SETTINGS:
        return None  # judged on its content
    if name in _TEXT_BUT_SETTINGS or folders[:1] == (".github",):
        return "build, packaging, CI or Reprobot settings"
    if name.lower().startswith("requirements") or name in ("MANIFEST.in", "Makefile"):
        return "build, packaging or test settings"
    suffix = "".join(pure.suffixes[-1:]).lower()
    if suffix in _TEXT_SUFFIXES or name.split(".")[0].upper() in _TEXT_NAMES or name in _TEXT_NAMES:
        return None
    if _NOTES_FOLDERS & set(folders):
        return None  # documentation and change notes (towncrier's "123.bugfix"), text checked
    return _other_kind(suffix)


def _other_kind(suffix: str) -> str:
    what = f"a {suffix} file" if suffix else "a file with no known kind"
    return f"{what}: not Python source, documentation or text data of a known kind"


def _python_concern(
    folders: tuple[str, ...], name: str, added: bool, existing_folders: frozenset[str]
) -> str | None:
    if name in _RUNS_FIRST:
        return "runs before the tests or while the project is built"
    in_tests = bool(_TEST_FOLDERS & set(folders)) or any(f.startswith("test") for f in folders[-1:])
    if name == "__init__.py" and in_tests:
        return "the package file of a test folder decides what its tests import"
    if not added:
        return None
    module = name[: -len(".py")]
    top = "/".join(folders)
    if top in _IMPORT_ROOTS:
        return "a new top-level module, imported before the project's own"
    if module in _shadowable() and in_tests:
        # pytest puts a test folder with no package file first on the import path.
        return "named like a module the interpreter, pytest or Reprobot imports"
    package = folders[1] if folders[0] == "src" and len(folders) > 1 else folders[0]
    root = "src/" + package if folders[0] == "src" else package
    if root not in existing_folders and not in_tests:
        return "a new top-level package, imported before the project's own"
    return None


def _shadowable() -> frozenset[str]:
    return frozenset(sys.stdlib_module_names) | _START_UP_MODULES


def _is_text(data: bytes) -> bool:
    if b"\0" in data:
        return False
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


def _hidden_characters(data: bytes) -> str | None:
    # Only ASCII controls can hide in ASCII text; other characters are looked at one by one,
    # and only where they are, so that a large change costs little.
    if data.isascii() and not _ASCII_CONTROL.search(data):
        return None
    text = data.decode("utf-8", "replace")
    for number, line in enumerate(text.splitlines(), 1):
        if line.isascii() and not _ASCII_CONTROL.search(line.encode()):
            continue
        for ch in line:
            if ch not in _ALLOWED_CONTROLS and unicodedata.category(ch) in _INVISIBLE_CATEGORIES:
                if ch == "\ufeff" and number == 1 and line.startswith(ch):
                    continue  # a byte-order mark
                return f"line {number} holds the invisible character U+{ord(ch):04X}"
    return None


def settings_change_is_harmless(name: str, old: bytes | None, new: bytes | None) -> bool:
    """Whether a settings file changes only linters' and formatters' sections, or the version."""
    try:
        return bool(_meaningful(name, old) == _meaningful(name, new))
    except (tomllib.TOMLDecodeError, configparser.Error, UnicodeDecodeError, TypeError):
        return False


def _meaningful(name: str, data: bytes | None) -> Any:
    """The part of a settings file that can change how the project is built or tested."""
    if data is None:
        return None
    text = data.decode("utf-8")
    if name == "pyproject.toml":
        parsed = tomllib.loads(text)
        tool = parsed.get("tool")
        if isinstance(tool, dict):
            parsed["tool"] = {k: v for k, v in tool.items() if k not in _HARMLESS_TOOLS}
        project = parsed.get("project")
        if isinstance(project, dict):
            parsed["project"] = {k: v for k, v in project.items() if k != "version"}
        # A file holding only linters' settings means what no file means.
        return {k: v for k, v in parsed.items() if v} or None
    parser = configparser.RawConfigParser(strict=False, interpolation=None)
    parser.read_string(text)
    out = {}
    for section in parser.sections():
        if _harmless_section(section):
            continue
        items = dict(parser.items(section))
        if section == "metadata":
            items.pop("version", None)
        out[section] = items
    return {k: v for k, v in out.items() if v} or None


def _harmless_section(section: str) -> bool:
    name = section.removeprefix("tool:").split(":", 1)[0].split("-", 1)[0]
    return name in _HARMLESS_TOOLS or section.startswith("mypy-")


def describe(concerns: Sequence[PathConcern], limit: int = 5) -> str:
    """The concerns in one phrase for a verdict's reasons."""
    shown = "; ".join(c.describe() for c in concerns[:limit])
    more = f"; and {len(concerns) - limit} more" if len(concerns) > limit else ""
    return f"it changes {len(concerns)} file(s) a verified change may not contain: {shown}{more}"
