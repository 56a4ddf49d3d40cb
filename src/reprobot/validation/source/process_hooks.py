"""Lines a fix adds that reach into the test process itself (pure functions).

The sandbox keeps every other process, file and the network away from a run's report, but the
project's code runs inside pytest's own process, where it can switch off the tracer coverage.py
relies on, or reach the machinery that reports outcomes. Such a line is not proof of anything;
it is what a maintainer should read before trusting the figures.
"""

from __future__ import annotations

import re
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
# What reaches the machinery that finds, imports and runs the tests: pytest's internals and
# hooks, import hooks, replacing modules or builtins, raw memory, re-executing the interpreter,
# other processes and descriptors.
_MACHINERY = re.compile(
    r"\b_pytest\b|\bpluggy\b|\bpytest_(?:runtest|collect|make|report|configure|sessionstart"
    r"|sessionfinish|load_initial|plugin|pycollect|pyfunc|cmdline|terminal)\w*|\bpluginmanager\b"
    r"|\bsys\s*\.\s*(?:meta_path|path_hooks|path_importer_cache)\b"
    r"|\bsys\s*\.\s*modules\s*(?:\[[^\]]*\]\s*=(?!=)|\.\s*(?:update|setdefault|pop|clear)\b)"
    r"|\bdel\s+sys\s*\.\s*modules\b|\bimportlib\s*\.\s*(?:abc|machinery)\b"
    r"|\bbuiltins\b|\b__builtins__\b|\bctypes\b|\bos\s*\.\s*exec\w*\s*\(|\bos\s*\.\s*fstat\b"
    r"|\bsocket\s*\.\s*fromfd\b|\bmarshal\s*\.\s*loads\b|/proc/"
)
_CHECKS: tuple[tuple[Kind, re.Pattern[str]], ...] = (
    ("tracing", _TRACING),
    ("report", _REPORT),
    ("machinery", _MACHINERY),
)


@dataclass(frozen=True)
class Hook:
    """One added line of ``path`` (numbered after the change) and what it reaches."""

    path: str
    line: int
    kind: Kind
    text: str

    def describe(self) -> str:
        return f"{self.path} line {self.line} ({self.text})"


def process_hooks(fix: Patch) -> tuple[Hook, ...]:
    """The lines ``fix`` adds to Python files that reach into the test process, in order."""
    parsed = fix.parsed()
    if parsed is None:
        return ()
    found: list[Hook] = []
    for patched_file in parsed:
        path = patched_file.path
        path = path[2:] if path.startswith(("a/", "b/")) else path
        if not path.endswith(".py"):
            continue
        for hunk in patched_file:
            for line in hunk:
                if not line.is_added or line.target_line_no is None:
                    continue
                code = line.value.split("#", 1)[0]
                for kind, pattern in _CHECKS:
                    match = pattern.search(code)
                    if match:
                        found.append(Hook(path, line.target_line_no, kind, match.group(0)))
                        break
    return tuple(found)
