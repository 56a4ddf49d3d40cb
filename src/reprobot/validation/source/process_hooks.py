"""Lines a fix adds that reach into the test process (pure functions).

The sandbox keeps every other process, file and the network away from a run's report, but the
project's code runs inside pytest's own process, where it can switch off the tracer coverage.py
relies on, or reach the machinery that reports outcomes. Such a line is not proof of anything;
it is what a maintainer should read before trusting the figures.

Names are read as Python binds them, not as they are spelled: ``import os as _os``,
``from os import execv`` and ``from pytest import Function`` name ``os.execv`` and
``pytest.Function`` as surely as the dotted spelling does, and ``getattr(os, name)`` reaches any
of ``os``. The file's imports are read from its whole text after the change when the caller has
it, else from what the diff shows of it.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal

from reprobot.validation.source.patch import Patch

Kind = Literal["tracing", "report", "machinery"]

# What can stop or replace coverage.py's tracer for the rest of the process.
_TRACING = re.compile(
    r"\b(?:sys|threading)\s*\.\s*(?:settrace|setprofile|settrace_all_threads|setprofile_all_threads)\b"
    r"|\bsys\s*\.\s*monitoring\b|\bcoverage\s*\.\s*(?:Coverage|process_startup|collector)\b"
)
# What names the report's channel, pytest's JUnit writer, or another process's descriptors.
_REPORT = re.compile(
    r"reprobot_report|REPROBOT_REPORT_FD|/proc/self/fd|/proc/\d+/fd|\bjunitxml\b|\bLogXML\b"
    r"|\bxmlpath\b"
)
# Spellings that reach the machinery whatever they are bound to: pytest's hooks, writes to the
# module table, the builtins, another process's memory.
_MACHINERY = re.compile(
    r"\bpytest_(?:runtest|collect|make|report|configure|sessionstart"
    r"|sessionfinish|load_initial|plugin|pycollect|pyfunc|cmdline|terminal)\w*|\bpluginmanager\b"
    r"|\bsys\s*\.\s*modules\s*(?:\[[^\]]*\]\s*=(?!=)|\.\s*(?:update|setdefault|pop|clear)\b)"
    r"|\bdel\s+sys\s*\.\s*modules\b|\b__builtins__\b|\b__import__\b|/proc/"
)
_CHECKS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("tracing", _TRACING),
    ("report", _REPORT),
    ("machinery", _MACHINERY),
)

# Qualified names that reach the machinery: a module or attribute named here, or anything
# under it. What finds, imports and runs the tests (pytest's internals, import hooks, the
# interpreter's builtins), raw memory and code objects, and the descriptors and processes a
# report could be forged through (finding a socket by its descriptor, re-executing under
# pytest's process id, leaving without pytest's own exit).
_REACHING = frozenset(
    {
        "_pytest",
        "pluggy",
        "builtins",
        "ctypes",
        "marshal.loads",
        "importlib.abc",
        "importlib.machinery",
        "sys.meta_path",
        "sys.path_hooks",
        "sys.path_importer_cache",
        "socket.fromfd",
        "socket.socketpair",
        "gc.get_objects",
        "gc.get_referrers",
        "stat.S_ISSOCK",
        "stat.S_ISFIFO",
        *(
            f"os.{name}"
            for name in (
                "fstat",
                "fstatvfs",
                "dup",
                "dup2",
                "set_inheritable",
                "get_inheritable",
                "fdopen",
                "_exit",
                "fork",
                "forkpty",
                "posix_spawn",
                "posix_spawnp",
                "execl",
                "execle",
                "execlp",
                "execlpe",
                "execv",
                "execve",
                "execvp",
                "execvpe",
                "spawnl",
                "spawnle",
                "spawnlp",
                "spawnlpe",
                "spawnv",
                "spawnve",
                "spawnvp",
                "spawnvpe",
            )
        ),
    }
)
# What a test or a library may use of pytest; anything else of it (``pytest.Function``,
# ``pytest.Config``, ``pytest.hookimpl``, ``pytest.main``) is its machinery.
_PYTEST_FOR_TESTS = frozenset(
    {
        "approx",
        "deprecated_call",
        "fail",
        "fixture",
        "importorskip",
        "mark",
        "param",
        "raises",
        "skip",
        "warns",
        "xfail",
        "FixtureRequest",
        "MonkeyPatch",
        "TempPathFactory",
        "CaptureFixture",
        "LogCaptureFixture",
        "WarningsRecorder",
        "PytestWarning",
        "PytestDeprecationWarning",
        "PytestUnraisableExceptionWarning",
    }
)
# Modules a name stands for by its own spelling when the file's imports are not in view (a
# diff shows the lines around a change, not always the file's head).
_MODULES = (
    *("os", "sys", "pytest", "_pytest", "pluggy", "builtins"),
    *("ctypes", "marshal", "socket", "gc", "stat", "importlib"),
)
# Modules whose attributes ``getattr`` may reach by a name computed at run time.
_DYNAMIC_REACH = frozenset({"os", "sys", "pytest", "_pytest", "builtins", "socket", "gc"})

_IMPORT = re.compile(r"^[ \t]*import[ \t]+([^\n#;]+)", re.M)
_FROM = re.compile(r"^[ \t]*from[ \t]+([\w.]+)[ \t]+import[ \t]+(\([^)]*\)|[^\n#;]+)", re.M)
_DOTTED = re.compile(r"(?<![\w.])([A-Za-z_]\w*(?:\s*\.\s*[A-Za-z_]\w*)*)")
_GETATTR = re.compile(r"\b(?:getattr|setattr|delattr)\s*\(\s*([A-Za-z_]\w*)\s*,\s*([^,)]*)")


@dataclass(frozen=True)
class Hook:
    """One added line of ``path`` (numbered after the change) and what it reaches."""

    path: str
    line: int
    kind: Kind
    text: str

    def describe(self) -> str:
        return f"{self.path} line {self.line} ({self.text})"


def bindings(text: str) -> dict[str, str]:
    """The names ``text``'s imports bind, each to the module or attribute it stands for:
    ``import os as o`` binds ``o`` to ``os``, ``from os import execv as run`` binds ``run`` to
    ``os.execv``, ``import os.path`` binds ``os``."""
    bound: dict[str, str] = {}
    for match in _IMPORT.finditer(text):
        for part in match.group(1).split(","):
            words = part.split()
            if len(words) == 3 and words[1] == "as":
                bound[words[2]] = words[0]
            elif len(words) == 1:
                head = words[0].split(".")[0]
                bound[head] = head
    for match in _FROM.finditer(text):
        module = match.group(1)
        for part in match.group(2).strip().strip("()").replace("\n", " ").split(","):
            words = part.split()
            if not words or words[0] == "*":
                continue
            name = words[2] if len(words) == 3 and words[1] == "as" else words[0]
            bound[name] = f"{module}.{words[0]}"
    return bound


def _reaches(qualified: str) -> bool:
    parts = qualified.split(".")
    if parts[0] == "pytest" and len(parts) > 1:
        return parts[1] not in _PYTEST_FOR_TESTS
    return any(".".join(parts[:n]) in _REACHING for n in range(1, len(parts) + 1))


def reached(code: str, bound: dict[str, str]) -> str | None:
    """The first name in ``code`` (one line, comments removed) that reaches the machinery, as
    bound by ``bound``; None when none does."""
    for match in _DOTTED.finditer(code):
        dotted = re.sub(r"\s+", "", match.group(1))
        head, _, rest = dotted.partition(".")
        if head not in bound:
            continue
        qualified = bound[head] + ("." + rest if rest else "")
        if _reaches(qualified):
            return match.group(1)
    for match in _GETATTR.finditer(code):
        target, attribute = bound.get(match.group(1), ""), match.group(2).strip()
        if target.split(".")[0] not in _DYNAMIC_REACH:
            continue
        literal = re.fullmatch(r"""(['"])(\w+)\1""", attribute)
        # A name computed at run time may be any of the module's; a literal one is judged as
        # the dotted spelling would be.
        if literal is None or _reaches(f"{target}.{literal.group(2)}"):
            return match.group(0)
    return None


def process_hooks(
    fix: Patch, source_after: Callable[[str], bytes | None] | None = None
) -> tuple[Hook, ...]:
    """The lines ``fix`` adds to Python files that reach into the test process, in order;
    ``source_after`` gives a changed file's whole text after the change (its imports bind the
    names the added lines use)."""
    parsed = fix.parsed()
    if parsed is None:
        return ()
    found: list[Hook] = []
    for patched_file in parsed:
        path = patched_file.path
        path = path[2:] if path.startswith(("a/", "b/")) else path
        if not path.endswith(".py"):
            continue
        added = [
            (line.target_line_no, line.value.rstrip("\n"))
            for hunk in patched_file
            for line in hunk
            if line.is_added and line.target_line_no is not None
        ]
        if not added:
            continue
        whole = source_after(path) if source_after is not None else None
        shown = [
            line.value.rstrip("\n") for hunk in patched_file for line in hunk if not line.is_removed
        ]
        text = whole.decode("utf-8", "replace") if whole is not None else "\n".join(shown)
        bound = {name: name for name in _MODULES} | bindings(text)
        for number, value in added:
            code = value.split("#", 1)[0]
            for kind, pattern in _CHECKS:
                match = pattern.search(code)
                if match:
                    found.append(Hook(path, number, kind, match.group(0)))
                    break
            else:
                name = reached(code, bound)
                if name is not None:
                    found.append(Hook(path, number, "machinery", name))
    return tuple(found)
