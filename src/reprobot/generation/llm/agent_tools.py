"""The agent's tools: their schemas for OpenAI function calling and the session that answers
them.

``search_code`` (BM25), ``grep`` and ``read_file`` explore the repository; ``write_test`` keeps
test files (and only test files) in an in-memory overlay; ``run_tests`` runs the overlay as a
draft through the injected ``RunDraft``; ``submit`` ends the work. Every answer is text for the
model, capped in size, and a mistaken call is answered with an error message, never raised.
The session also notices when the model repeats itself; the loop that drives it is
``llm_agent``.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import PurePosixPath
from typing import Any

from reprobot.errors import ReprobotError
from reprobot.generation.drafts import Draft, DraftOutcome, Feedback, RunDraft
from reprobot.generation.errors import DiffFormatError
from reprobot.generation.formats.function_diff import check_python
from reprobot.generation.formats.patch_text import patch_from_files
from reprobot.generation.llm.client import ToolCall
from reprobot.generation.llm.retrieval import CodeIndex
from reprobot.generation.llm.zero_shot import check_test_path
from reprobot.validation import RepoSnapshot

OUTPUT_CHARS = 6_000
READ_LINES = 200
LINE_CHARS = 400
SEARCH_HITS = 8
SEARCH_PREVIEW_LINES = 15
GREP_HITS = 40
MAX_TEST_CHARS = 60_000
# The same call on the same files a third time means the model is going round in circles.
REPEAT_LIMIT = 3


def _function(name: str, description: str, properties: dict[str, Any], required: list[str]) -> Any:
    return {
        "type": "function",
        "function": {
            "name": name,
            "description": description,
            "parameters": {"type": "object", "properties": properties, "required": required},
        },
    }


_TEXT = {"type": "string"}
TOOLS: list[dict[str, Any]] = [
    _function(
        "search_code",
        "Search the repository's Python code (BM25 over functions and classes).",
        {"query": {**_TEXT, "description": "words or identifiers to look for"}},
        ["query"],
    ),
    _function(
        "grep",
        "Find lines containing a literal text (case-sensitive, not a regular expression).",
        {"text": _TEXT},
        ["text"],
    ),
    _function(
        "read_file",
        f"Read lines of a file, numbered; at most {READ_LINES} lines per call.",
        {
            "path": {**_TEXT, "description": "relative to the repository root"},
            "start_line": {"type": "integer", "description": "first line, 1-based"},
            "end_line": {"type": "integer", "description": "last line, inclusive"},
        },
        ["path"],
    ),
    _function(
        "write_test",
        "Create or replace a whole test file (test_*.py, *_test.py or conftest.py).",
        {"path": _TEXT, "content": {**_TEXT, "description": "the complete file"}},
        ["path", "content"],
    ),
    _function(
        "run_tests",
        "Run the test files you wrote on the current (buggy) code and report the outcome.",
        {},
        [],
    ),
    _function("submit", "Finish: hand in the tests as last run.", {}, []),
]

_HINTS = {
    DraftOutcome.REPRODUCES: "They fail for the reason the issue describes: call submit.",
    DraftOutcome.PASSES: (
        "The tests pass on the buggy code, so they do not show the bug. Make them assert the "
        "behaviour the issue expects."
    ),
    DraftOutcome.BROKEN: (
        "The tests fail because of themselves (syntax, imports, names, fixtures), not because "
        "of the bug. Fix them."
    ),
    DraftOutcome.UNRELATED: (
        "The tests fail, but not in the way the issue describes. Check that they exercise the "
        "reported behaviour and assert what the issue expects."
    ),
    DraftOutcome.NOT_APPLIED: (
        "The test files could not be added to the repository; check the paths."
    ),
    DraftOutcome.ERROR: "The sandbox could not run the tests; simplify them or submit.",
}


class _ToolError(Exception):
    """A tool call the model got wrong; the message goes back to it."""


def cap(text: str, limit: int = OUTPUT_CHARS) -> str:
    """``text`` cut to ``limit`` characters with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not shown]"


def _text_arg(args: dict[str, Any], name: str) -> str:
    value = args.get(name)
    if not isinstance(value, str) or not value.strip():
        raise _ToolError(f"'{name}' must be a non-empty string")
    return value


def _int_arg(args: dict[str, Any], name: str) -> int | None:
    value = args.get(name)
    if value is None:
        return None
    if isinstance(value, bool):
        raise _ToolError(f"'{name}' must be a line number")
    try:
        return int(value)
    except (TypeError, ValueError):
        raise _ToolError(f"'{name}' must be a line number") from None


def _readable(raw: str) -> str:
    """A relative path inside the repository (any file kind), or a _ToolError."""
    path = raw.strip().replace("\\", "/").removeprefix("./")
    parts = PurePosixPath(path).parts
    if not path or path.startswith(("/", "~")) or ".." in parts or ".git" in parts:
        raise _ToolError(f"{raw!r} is not a path inside the repository")
    return path


@dataclass
class _Run:
    draft: Draft
    feedback: Feedback
    state: str
    report: str


@dataclass
class ToolSession:
    """The agent's workspace: the overlay of written files, its runs, and loop detection."""

    snapshot: RepoSnapshot
    index: CodeIndex
    run_draft: RunDraft
    read_file: Callable[[str], str | None]
    # The agent's method name, passed in so that the tools need nothing from the loop's module.
    method: str
    overlay: dict[str, str] = field(default_factory=dict)
    runs: list[_Run] = field(default_factory=list)
    calls: Counter[str] = field(default_factory=Counter)
    submitted: bool = False
    stop: str = ""

    def state(self) -> str:
        digest = hashlib.sha256(json.dumps(sorted(self.overlay.items())).encode())
        return digest.hexdigest()[:16]

    def handle(self, call: ToolCall) -> str:
        """The tool's answer to ``call``; mistakes become messages, never exceptions."""
        arguments = (
            json.dumps(call.arguments, sort_keys=True) if not call.error else call.raw_arguments
        )
        key = f"{call.name}\0{arguments}\0{self.state()}"
        self.calls[key] += 1
        seen = self.calls[key]
        if seen >= REPEAT_LIMIT:
            self.stop = f"the model repeated {call.name}({cap(arguments, 200)}) {seen} times"
        if call.error:
            return f"error: {call.error}"
        try:
            output = self._dispatch(call.name, call.arguments)
        except _ToolError as exc:
            output = f"error: {exc}"
        if seen == REPEAT_LIMIT - 1:
            output = (
                "note: you made this exact call before and nothing has changed since; the "
                "answer is the same. Do something different.\n" + output
            )
        return output

    def _dispatch(self, name: str, args: dict[str, Any]) -> str:
        if name == "search_code":
            return self._search(_text_arg(args, "query"))
        if name == "grep":
            return self._grep(_text_arg(args, "text"))
        if name == "read_file":
            path = _text_arg(args, "path")
            return self._read(path, _int_arg(args, "start_line"), _int_arg(args, "end_line"))
        if name == "write_test":
            content = args.get("content")
            if not isinstance(content, str):
                raise _ToolError("'content' must be the complete file as a string")
            return self._write(_text_arg(args, "path"), content)
        if name == "run_tests":
            return self._run()
        if name == "submit":
            return self._submit()
        names = ", ".join(t["function"]["name"] for t in TOOLS)
        raise _ToolError(f"there is no tool {name!r}; the tools are {names}")

    # --- the tools ---------------------------------------------------------------------------

    def _search(self, query: str) -> str:
        hits = self.index.search(query, SEARCH_HITS)
        if not hits:
            return "no code matches; try other words or grep for an identifier"
        out = []
        for chunk, score in hits:
            lines = chunk.text.split("\n")
            preview = "\n".join(lines[:SEARCH_PREVIEW_LINES])
            more = (
                f"\n[... {len(lines) - SEARCH_PREVIEW_LINES} more lines]"
                if len(lines) > SEARCH_PREVIEW_LINES
                else ""
            )
            out.append(
                f"{chunk.path}:{chunk.start}-{chunk.end} (score {score:.1f})\n{preview}{more}"
            )
        return "\n\n".join(out)

    def _grep(self, text: str) -> str:
        found = [
            (path, n, line)
            for path, content in sorted(self.overlay.items())
            for n, line in enumerate(content.splitlines(), start=1)
            if text in line
        ]
        # One more than shown, to know whether there are more.
        hits = self.index.grep(text, GREP_HITS + 1)
        found += [hit for hit in hits if hit[0] not in self.overlay]
        if not found:
            return f"no line contains {text!r}"
        shown: list[str] = []
        room = OUTPUT_CHARS - 100
        for path, n, line in found[:GREP_HITS]:
            entry = f"{path}:{n}: {line[:LINE_CHARS]}"
            room -= len(entry) + 1
            if room < 0:
                break
            shown.append(entry)
        if len(shown) < len(found):
            shown.append(f"[... {len(shown)} matches shown, there are more; grep narrower text]")
        return "\n".join(shown)

    def _read(self, raw: str, start: int | None, end: int | None) -> str:
        path = _readable(raw)
        text = self.overlay.get(path)
        if text is None:
            text = self.index.file_text(path)
        if text is None:
            text = self.read_file(path)
        if text is None:
            return f"error: {path} does not exist (or is too large or binary to read)"
        lines = text.splitlines()
        first = max(start or 1, 1)
        last = min(end if end is not None else first + READ_LINES - 1, first + READ_LINES - 1)
        last = min(last, len(lines))
        if first > len(lines):
            return f"{path} has {len(lines)} lines; start_line {first} is past its end"
        width = len(str(last))
        shown: list[str] = []
        room = OUTPUT_CHARS - 200  # what the footer needs
        for n in range(first, last + 1):
            line = f"{n:>{width}}| {lines[n - 1]}"
            if len(line) > LINE_CHARS:
                line = line[:LINE_CHARS] + " [... line cut]"  # minified or data lines
            room -= len(line) + 1
            if room < 0 and shown:
                break  # whole lines only, so the footer's line numbers stay true
            shown.append(line)
        last = first + len(shown) - 1
        footer = f"\n[lines {first}-{last} of {len(lines)}"
        footer += f"; read on with start_line={last + 1}]" if last < len(lines) else "]"
        return "\n".join(shown) + footer

    def _write(self, raw: str, content: str) -> str:
        try:
            path = check_test_path(raw)
        except DiffFormatError as exc:
            raise _ToolError(f"not written: {exc}") from None
        if len(content) > MAX_TEST_CHARS:
            raise _ToolError(
                f"not written: a test file may have at most {MAX_TEST_CHARS} characters"
            )
        if not content.endswith("\n"):
            content += "\n"
        try:
            check_python(path, content)
        except DiffFormatError as exc:
            raise _ToolError(f"not written: {exc}") from None
        self.overlay[path] = content
        existed = self.read_file(path) is not None
        action = "replaced the repository's" if existed else "wrote the new file"
        return f"{action} {path} ({len(content.splitlines())} lines). Call run_tests to run it."

    def changes(self) -> dict[str, tuple[str | None, str]]:
        changes: dict[str, tuple[str | None, str]] = {}
        for path, content in sorted(self.overlay.items()):
            before = self.read_file(path)
            if before != content:
                changes[path] = (before, content)
        return changes

    def _run(self) -> str:
        if not self.overlay:
            return "nothing to run: write a test file with write_test first"
        state = self.state()
        for run in self.runs:
            if run.state == state:
                return "(the files are unchanged since an earlier run)\n" + run.report
        changes = self.changes()
        if not changes:
            return "your files are identical to the repository's; there is nothing new to run"
        number = len(self.runs) + 1
        draft = Draft(
            self.method,
            patch_from_files(changes, name=f"{self.method}-{number}.diff"),
            f"agent run {number}",
        )
        try:
            feedback = self.run_draft(draft)
        except ReprobotError as exc:
            return f"error: the tests could not be run: {cap(str(exc), 500)}"
        lines = [f"outcome: {feedback.outcome.value}"]
        if feedback.failing_tests:
            lines.append("failing tests: " + ", ".join(feedback.failing_tests[:20]))
        lines += [cap(feedback.summary.strip(), OUTPUT_CHARS - 600), _HINTS[feedback.outcome]]
        report = "\n".join(line for line in lines if line)
        self.runs.append(_Run(draft, feedback, state, report))
        return report

    def _submit(self) -> str:
        if not self.runs:
            return "not submitted: call run_tests first, then submit"
        if self.runs[-1].state != self.state():
            return "not submitted: the tests changed since the last run; call run_tests first"
        self.submitted = True
        return "submitted"
