"""An issue's title and markdown body, parsed once into the parts a test drafter uses.

Issue text is untrusted: parsing is pure, reads at most ``MAX_BODY_CHARS`` of the body, and
every regular expression here is linear on any input (no nested quantifiers that can overlap,
bounded repetitions where a match could otherwise restart at every position).
"""

from __future__ import annotations

import builtins
import keyword
import re
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Literal

from reprobot.generation.issue.expectations import Expectation, find_expectations
from reprobot.generation.issue.names import as_path, code_names, spans, unique
from reprobot.generation.issue.tracebacks import HEADER, Traceback, find_tracebacks
from reprobot.generation.issue.unfenced import PY_SIGNAL, parses_as_code, unfenced, width

MAX_BODY_CHARS = 200_000
MAX_TITLE_CHARS = 1_000
_NAME_CHARS = 200

_PYTHON_LANGUAGES = frozenset(
    {"python", "py", "python3", "py3", "python2", "py2", "pycon", "ipython", "ipython3", "pyi"}
    | {"cython", "pyx", "sage", "pyodide", "python-repl", "repl", "doctest", "jupyter"}
)
# Languages whose blocks hold what a program printed (or commands and their output).
_OUTPUT_LANGUAGES = frozenset(
    {"text", "txt", "plain", "plaintext", "console", "output", "out", "log", "logs", "pytb"}
    | {"traceback", "python-traceback", "pytest", "shell", "sh", "bash", "zsh", "fish", "cmd"}
    | {"powershell", "ps", "ps1", "bat", "shell-session", "sh-session", "stdout", "stderr", "err"}
    | {"none", "nohighlight", "term", "terminal", "ansi"}
)
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})(.*)")
_LANGUAGE = re.compile(r"[{.\s]*([\w+#-]+)")
_LIST_ITEM = re.compile(r"[ \t]{0,3}(?:[-*+]|\d{1,9}[.)])(?:[ \t]|$)")
# Bounded attribute run: an unclosed "<details" must not make every later "<" rescan the line.
_HTML_TAG = re.compile(r"</?(?:details|summary)\b[^>\n]{0,300}>|<br[ \t]{0,5}/?>", re.IGNORECASE)
_IPY_IN = re.compile(r"In \[\d{0,6}\]: ?")
_IPY_OUT = re.compile(r"Out\[\d{0,6}\]: ?")
_IPY_MORE = re.compile(r"\.{3,}: ?")
# Comments and strings are skipped so that names inside them do not count as code.
_IDENTIFIER = re.compile(r"[^\W\d]\w*")
_PATH_SPLIT = re.compile(r"[\s\"'`()\[\]<>{},;|=*]+")
# File kinds a bare name ("setup.py") is taken for; others need a directory ("src/ext.c").
_BARE_FILE_EXTENSIONS = frozenset(
    {"py", "pyi", "pyx", "pxd", "ipynb", "toml", "cfg", "ini", "txt", "md", "rst", "json"}
    | {"yaml", "yml"}
)
_NOT_NAMES = frozenset(keyword.kwlist) | frozenset(dir(builtins))


@dataclass(frozen=True)
class SessionStep:
    """One statement typed at an interactive prompt and what it printed (tracebacks included)."""

    source: str
    output: str


@dataclass(frozen=True)
class Session:
    """An interactive session (``>>>`` or IPython ``In [n]:``) as statements in order."""

    statements: tuple[SessionStep, ...]
    # Where it starts (1-based, in the cleaned body; 0: unknown): what came before it in the
    # issue is the setup it may use.
    line: int = field(default=0, compare=False)


@dataclass(frozen=True)
class CodeBlock:
    """A fenced, indented or unfenced code block; ``line`` (1-based, in the cleaned body) is its
    opening fence or, for the others, its first line."""

    text: str
    language: str | None
    # "unfenced": lines of Python in the prose itself (a tracker that lost the markup).
    kind: Literal["fenced", "indented", "unfenced"]
    line: int

    @property
    def after(self) -> int:
        """The index (0-based) in the body's lines of the first line after the block: past its
        closing fence, for a fenced one."""
        size = len(self.text.split("\n"))
        return self.line + size + 1 if self.kind == "fenced" else self.line - 1 + size

    @cached_property
    def session(self) -> Session | None:
        """The interactive session in this block, when it has prompts."""
        sessions = _sessions(self.text.split("\n"), prose=False)
        return replace(sessions[0], line=self.line) if sessions else None

    @property
    def is_session(self) -> bool:
        return self.session is not None

    @cached_property
    def is_python(self) -> bool:
        """Python source or a Python session, by language tag or, untagged, by its content."""
        code = _code_part(self.text)
        if self.language is not None:
            # Tracebacks are often tagged "python"; a block that is only one is not code.
            return self.language in _PYTHON_LANGUAGES and (bool(code.strip()) or self.is_session)
        if self.session is not None:
            return True
        return parses_as_code(code) or PY_SIGNAL.search(code) is not None

    @cached_property
    def tracebacks(self) -> tuple[Traceback, ...]:
        # A lone "KeyError: 'a'" line is output in a session or a log, but a statement in code.
        return find_tracebacks(self.text, bare=self.is_session or not self.is_python)

    @property
    def is_traceback(self) -> bool:
        return bool(self.tracebacks)

    @property
    def is_output(self) -> bool:
        """Printed output, logs or a console transcript: neither code nor a config file."""
        if not self.text.strip() or self.is_python or self.is_session:
            return False
        # A "python" tag that is not Python code is a traceback pasted with that tag.
        return self.language in (None, *_OUTPUT_LANGUAGES, *_PYTHON_LANGUAGES)


# What IPython and Jupyter call to show a value, richest first.
DISPLAY_METHODS = ("_repr_html_", "_repr_png_", "_repr_svg_", "_repr_latex_", "_repr_mimebundle_")


@dataclass(frozen=True)
class IssueReport:
    """An issue parsed once. ``body`` is the cleaned text every other field was read from:
    line breaks normalized, HTML comments, ``<details>``/``<summary>`` tags and quote markers
    removed, cut to ``MAX_BODY_CHARS`` (then ``truncated`` is set)."""

    title: str
    body: str
    code_blocks: tuple[CodeBlock, ...]
    sessions: tuple[Session, ...]
    tracebacks: tuple[Traceback, ...]
    expectations: tuple[Expectation, ...]
    truncated: bool
    # How the repository names the issue ("#123"), when it is known: a drafted test's header
    # names it, as a maintainer's regression test does.
    reference: str = ""

    @property
    def python_blocks(self) -> tuple[CodeBlock, ...]:
        return tuple(block for block in self.code_blocks if block.is_python)

    @property
    def output_blocks(self) -> tuple[CodeBlock, ...]:
        return tuple(block for block in self.code_blocks if block.is_output)

    def line_of(self, text: str) -> int | None:
        """The body line (1-based) where ``text``'s first line first stands; None when the body
        does not hold it (words of the title)."""
        first = text.split("\n", 1)[0].strip()
        at = self.body.find(first) if first else -1
        return self.body.count("\n", 0, at) + 1 if at >= 0 else None

    @property
    def final_traceback(self) -> Traceback | None:
        """The last traceback: with chained exceptions, the one that reached the user."""
        return self.tracebacks[-1] if self.tracebacks else None

    @property
    def final_exception(self) -> str | None:
        """The exception type of the last traceback that names one."""
        named = [traceback.exc_type for traceback in self.tracebacks if traceback.exc_type]
        return named[-1] if named else None

    @cached_property
    def identifiers(self) -> tuple[str, ...]:
        """Dotted names, called names and imports in Python code and inline `code` spans."""
        sources = [
            block.text for block in self.code_blocks if block.is_python and not block.session
        ]
        sources += [step.source for session in self.sessions for step in session.statements]
        inline = [span for line in (self.title, *self.body.split("\n")) for span in spans(line)]
        names = [name for source in sources for name in code_names(source)]
        for span in inline:
            names.extend(code_names(span))
            if _IDENTIFIER.fullmatch(span) and span not in _NOT_NAMES:
                names.append(span)
        # "utils.py" in backticks is a file, reported by mentioned_paths.
        return unique(n for n in names if len(n) <= _NAME_CHARS and not as_path(n))

    @cached_property
    def spans_by_line(self) -> tuple[tuple[int, str], ...]:
        """Every inline code span of the body, with its line (1-based), in order."""
        lines = self.body.split("\n")
        return tuple((number, span) for number, line in enumerate(lines, 1) for span in spans(line))

    @cached_property
    def display_methods(self) -> tuple[str, ...]:
        """The display methods of a notebook (``_repr_png_``, ...) the issue's tracebacks pass
        through: what showing a value did when it failed for the reporter. A crash test shows a
        value only as the issue did; calling every display method would add calls the issue
        never made, which can fail after a fix for reasons of their own."""
        found = [
            method
            for traceback in self.tracebacks
            for method in DISPLAY_METHODS
            if re.search(rf"\b{method}\b", traceback.text)
            or any(frame.function and method in frame.function for frame in traceback.frames)
        ]
        return unique(found)

    @cached_property
    def mentioned_paths(self) -> tuple[str, ...]:
        """File paths mentioned anywhere (``pkg/mod.py:12`` gives ``pkg/mod.py``), in order."""
        tokens = _PATH_SPLIT.split(self.title + "\n" + self.body)
        return unique(path for token in tokens if (path := as_path(token)))


# A reference a header may carry: an issue number, never free text.
_REFERENCE = re.compile(r"#[0-9]{1,9}")


def parse_issue(title: str, body: str, reference: str = "") -> IssueReport:
    """Parse an issue's title and markdown body (``reference``: how its repository names it,
    "#123"); never raises on any text."""
    truncated = len(body) > MAX_BODY_CHARS or len(title) > MAX_TITLE_CHARS
    title = " ".join(title[:MAX_TITLE_CHARS].split())
    text = _clean(body[:MAX_BODY_CHARS])
    lines = text.split("\n")
    blocks, owner = _code_blocks(lines)
    sessions: list[Session] = []
    tracebacks: list[Traceback] = []
    start = 0
    while start < len(lines):
        end = start + 1
        while end < len(lines) and owner[end] == owner[start]:
            end += 1
        if owner[start] >= 0:
            block = blocks[owner[start]]
            sessions.extend([block.session] if block.session else [])
            tracebacks.extend(block.tracebacks)
        else:
            sessions.extend(
                replace(session, line=start + 1)
                for session in _sessions(lines[start:end], prose=True)
            )
            tracebacks.extend(find_tracebacks("\n".join(lines[start:end])))
        start = end
    python = [block.text for block in blocks if block.is_python]
    expectations = find_expectations(title, lines, owner, [b.text for b in blocks], python)
    return IssueReport(
        title=title,
        body=text,
        code_blocks=tuple(blocks),
        sessions=tuple(sessions),
        tracebacks=tuple(tracebacks),
        expectations=expectations,
        truncated=truncated,
        reference=reference if _REFERENCE.fullmatch(reference) else "",
    )


# --- cleaning -----------------------------------------------------------------------------------


def _unquote(line: str, limit: int = -1) -> tuple[str, int]:
    """The line without (at most ``limit``) blockquote markers, and how many it had.

    ``>>>`` is a Python prompt, not three quote markers."""
    pos, depth = 0, 0
    while depth != limit:
        j = pos
        while j < len(line) and j - pos < 3 and line[j] == " ":
            j += 1
        if j >= len(line) or line[j] != ">" or line.startswith(">>>", j):
            break
        pos = j + 2 if line.startswith("> ", j) else j + 1
        depth += 1
    return line[pos:], depth


def _open_fence(line: str) -> tuple[int, str, str] | None:
    """(indent, marker, info string) when the line opens a fenced block."""
    match = _FENCE.fullmatch(line)
    if match is None or (match.group(1)[0] == "`" and "`" in match.group(2)):
        return None
    return match.start(1), match.group(1), match.group(2).strip()


def _closes(line: str, marker: str) -> bool:
    text = line.strip()
    return len(text) >= len(marker) and text == marker[0] * len(text)


def _strip_comments(line: str, base: int, last_close: int) -> tuple[str, bool]:
    """The line without HTML comments, and whether a comment stays open past its end.

    ``base`` is the line's offset in the text; a ``<!--`` with no ``-->`` anywhere after it is
    kept as text rather than hiding the rest of the issue."""
    parts: list[str] = []
    pos = 0
    while (start := line.find("<!--", pos)) >= 0 and base + start + 4 <= last_close:
        parts.append(line[pos:start])
        end = line.find("-->", start + 4)
        if end < 0:
            return "".join(parts), True
        pos = end + 3
    parts.append(line[pos:])
    return "".join(parts), False


def _clean(body: str) -> str:
    """Normalize line breaks; drop HTML comments, details tags and quote markers outside code.

    Lines are never removed (a line that was all comment becomes empty), so line numbers match
    the original text."""
    text = body.replace("\r\n", "\n").replace("\r", "\n")
    last_close = text.rfind("-->")
    out: list[str] = []
    fence: tuple[str, int] | None = None  # marker, quote depth it was opened at
    in_comment = False
    offset = 0
    for raw in text.split("\n"):
        base, offset = offset, offset + len(raw) + 1
        if fence is not None:
            line = _unquote(raw, fence[1])[0] if fence[1] else raw
            if _closes(line, fence[0]):
                fence = None
            out.append(line)
            continue
        line = raw
        if in_comment:
            end = raw.find("-->")
            if end < 0:
                out.append("")
                continue
            line, base = raw[end + 3 :], base + end + 3
        line, in_comment = _strip_comments(line, base, last_close)
        line, quoted = _unquote(line)
        opened = _open_fence(line)
        if opened is not None:
            fence = (opened[1], quoted)
        else:
            line = _HTML_TAG.sub("", line)
        out.append(line)
    return "\n".join(out)


# --- code blocks --------------------------------------------------------------------------------


def _dedent(line: str, columns: int) -> str:
    if line.startswith("\t") and columns >= 4:
        return line[1:]
    cut = 0
    while cut < columns and cut < len(line) and line[cut] in " \t":
        cut += 1
    return line[cut:]


def _language(info: str) -> str | None:
    match = _LANGUAGE.match(info)
    return match.group(1).lower() if match else None


def _code_blocks(lines: list[str]) -> tuple[list[CodeBlock], list[int]]:
    """The code blocks, and for every line the index of the block holding it (or -1).

    An indented block needs four columns after a blank line, outside a list: in a list the same
    indentation continues the item (a deliberate simplification of CommonMark's rules)."""
    blocks: list[CodeBlock] = []
    owner = [-1] * len(lines)
    after_blank, in_list = True, False
    tried_until = 0  # unfenced code is not looked for again inside a run that was not code
    found: tuple[int, str | None] = (0, None)
    i = 0
    while i < len(lines):
        line = lines[i]
        opened = _open_fence(line)
        if opened is not None:
            indent, marker, info = opened
            j = i + 1
            while j < len(lines) and not _closes(lines[j], marker):
                j += 1
            text = "\n".join(_dedent(inner, indent) for inner in lines[i + 1 : j])
            block = CodeBlock(text, _language(info), "fenced", i + 1)
            last = min(j, len(lines) - 1)  # an unclosed fence runs to the end of the body
        elif not line.strip():
            after_blank = True
            i += 1
            continue
        elif width(line) >= 4 and after_blank and not in_list:
            j = last = i
            while j < len(lines) and (not lines[j].strip() or width(lines[j]) >= 4):
                last = j if lines[j].strip() else last
                j += 1
            text = "\n".join(_dedent(inner, 4) for inner in lines[i : last + 1])
            block = CodeBlock(text, None, "indented", i + 1)
        elif not in_list and i >= tried_until and (found := unfenced(lines, i))[1] is not None:
            last, text = found[0], found[1] or ""
            block = CodeBlock(text, "python", "unfenced", i + 1)
        else:
            if not in_list and i >= tried_until:
                # A run tried from here is not code: no start inside it is either.
                tried_until = found[0] + 1
            if _LIST_ITEM.match(line):
                in_list = True
            elif after_blank and width(line) == 0:
                in_list = False
            after_blank = False
            i += 1
            continue
        owner[i : last + 1] = [len(blocks)] * (last + 1 - i)
        blocks.append(block)
        after_blank = False
        i = last + 1
    return blocks, owner


def _code_part(text: str) -> str:
    """The text before a traceback header: code pasted above its own traceback."""
    at = text.find(HEADER)
    return text if at < 0 else text[: text.rfind("\n", 0, at) + 1]


# --- sessions -----------------------------------------------------------------------------------


def _prompt(line: str) -> tuple[str, int, str] | None:
    """(kind, indent, rest) of a prompt line; kind is "in", "more" or "out"."""
    text = line.lstrip(" \t")
    indent = len(line) - len(text)
    for prompt, kind in ((">>>", "in"), ("...", "more")):
        if text.startswith(prompt) and (len(text) == 3 or text[3] == " "):
            return kind, indent, text[4:]
    # A hand-typed prompt without its space (">>>convert_to(J*s, J)"); never a run of four
    # or more (a merge marker, a quote).
    if text.startswith(">>>") and text[3] not in "> \t":
        return "in", indent, text[3:]
    for pattern, kind in ((_IPY_IN, "in"), (_IPY_MORE, "more"), (_IPY_OUT, "out")):
        if match := pattern.match(text):
            return kind, indent, text[match.end() :]
    return None


def _flush(steps: list[SessionStep], source: list[str] | None, output: list[str]) -> None:
    if source is None:
        return
    code = "\n".join(source).rstrip()
    printed = "\n".join(output).rstrip().lstrip("\n")
    if code or printed:
        steps.append(SessionStep(code, printed))


# A line of prose: a capitalised word and three or more words after it, with no sign of code
# or of a printed value ("The query is ordered ASC but I expect DESC.").
_SENTENCE = re.compile(r"^[A-Z][a-z']*(?:\s+[\w'’,-]+){3,}[.:!?]?$")


def _sessions(lines: list[str], *, prose: bool) -> list[Session]:
    """Sessions in these lines. In a code block everything up to the next prompt is output; in
    prose, output ends at a blank line, or at a sentence after some output (tickets that lose
    their blank lines run the words on), and a paragraph without a prompt ends the session."""
    sessions: list[Session] = []
    steps: list[SessionStep] = []
    source: list[str] | None = None
    output: list[str] = []
    indent, gap = 0, False
    for line in lines:
        prompt = _prompt(line)
        kind = prompt[0] if prompt else None
        if kind == "more" and (source is None or output):
            kind = None  # "..." after output is printed text (an Ellipsis, a cut listing)
        if prompt is not None and kind == "in":
            _flush(steps, source, output)
            source, output, indent, gap = [prompt[2]], [], prompt[1], False
        elif source is None:
            continue
        elif prompt is not None and kind == "more":
            source.append(prompt[2])
        elif prompt is not None and kind == "out":
            output.append(prompt[2])
        elif prose and not line.strip():
            gap = True
        elif prose and (gap or (output and _SENTENCE.match(line.strip()))):
            _flush(steps, source, output)
            source, output = None, []
            if steps:
                sessions.append(Session(tuple(steps)))
                steps = []
        else:
            output.append(_dedent(line, indent) if width(line) >= indent else line.strip())
    _flush(steps, source, output)
    if steps:
        sessions.append(Session(tuple(steps)))
    return sessions
