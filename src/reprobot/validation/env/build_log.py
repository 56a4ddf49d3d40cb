"""The one-line cause of a failed build, read from its log (a pure function).

The build's own error names only the step that failed (``the install command failed: ...``);
the log says why: the requirement pip found no release of, the packages it could not build or
found in conflict, the header a compiler could not find, the exception a build backend raised
(``LookupError: setuptools-scm was unable to detect version``). The log is the project's build
output: only its tail is read, and the cause is cut short and stripped of control characters.
"""

from __future__ import annotations

import re

from reprobot.console import printable

_LIMIT = 300
# The step that failed ends the log: its cause is among the last lines.
_TAIL_BYTES = 256 * 1024
# pip's refusals, most telling first, each with how it is told.
_PIP = (
    (
        re.compile(r"^ERROR: No matching distribution found for (\S+)"),
        "pip found no distribution for {}",
    ),
    (
        re.compile(r"^ERROR: Cannot install (.+?) because these package versions"),
        "pip found the requirements of {} in conflict",
    ),
    (re.compile(r"^ERROR: (Package '.+' requires a different Python: .+)"), "{}"),
    (
        re.compile(r"^ERROR: Failed (?:building wheel for|building editable for|to build) (\S+)"),
        "pip could not build {}",
    ),
)
_COMPILER = re.compile(r"^\S+:\d+(?::\d+)?: (?:fatal )?error: .+")
_RAISED = re.compile(r"^(?:[A-Za-z_][\w.]*\.)?[A-Za-z_]\w*(?:Error|Exception)\b: .+")
# A build tool's own last word (cargo's ``error: failed to get `pyo3` as a dependency``).
_TOOL = re.compile(r"^error(?:\[\w+\])?: .+")
# Errors that only say a step failed, not why.
_NOT_A_CAUSE = re.compile(r"^(?:subprocess\.)?CalledProcessError\b|subprocess-exited-with-error")


def failure_cause(log: bytes) -> str:
    """The line of ``log`` that says why the build failed, at most 300 printable characters:
    pip's last refusal, else a compiler's last error, else the last exception raised, else a
    build tool's last error; "" when no line says."""
    lines = [line.strip() for line in log[-_TAIL_BYTES:].decode("utf-8", "replace").splitlines()]
    for pattern, words in _PIP:
        for line in reversed(lines):
            match = pattern.match(line)
            if match:
                return _said(words.format(match.group(1)))
    for pattern in (_COMPILER, _RAISED, _TOOL):
        for line in reversed(lines):
            if pattern.match(line) and not _NOT_A_CAUSE.search(line):
                return _said(line)
    return ""


def _said(text: str) -> str:
    return printable(text)[:_LIMIT]
