"""Reproductions through a command line: the files an issue shows, the command run on them, and
what its output should or should not contain.

Linters, test runners and checkers are reported this way: "with this file, ``tool -x file.py``
prints <wrong line>, it should print <right line>", or "with this ``.pylintrc``, ``pylint``
crashes" and a traceback: then the traceback's exception line must no longer be printed. The
test writes the files into a temporary directory, runs the project's own command there with
the running interpreter, and asserts on the output, with numbers and whitespace matched loosely
(line numbers and paths move between the reporter's machine and the sandbox).
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass

from reprobot.generation.drafter.directory_tree import from_root, is_listing, listed_files
from reprobot.generation.drafter.project_tools import Tool, project_tools
from reprobot.generation.drafter.snippet_names import written_tests
from reprobot.generation.drafter.snippets import repair
from reprobot.generation.issue.prose import caption, output_label
from reprobot.generation.issue.report import CodeBlock, IssueReport
from reprobot.generation.repo.test_layout import TestLayout

# "$ tool", and shells that print more before the sign: "(venv) host:dir user$ tool", and a
# git prompt's branch and state marks ("(.venv) ?master ~/src/proj> tool").
_PROMPT = re.compile(
    r"^\s*(?:\([\w.-]+\)\s*)?(?:[\w.@:~/?*!+-]+(?:\s[\w.@:~/?*!+-]+)?)?(?:\$|>|%|#)\s+"
    r"(?P<cmd>\S.*)$"
)
_SHELL_LANGUAGES = frozenset({"shell", "sh", "bash", "console", "zsh", "shell-session", "cmd"})
# A line naming the file of the block after it: ".pylintrc:", "`setup.cfg`:", "**tox.ini**".
_FILE_LABEL = re.compile(
    r"^\s*(?:[#*_`]+\s*)?(?:(?:in|file|contents of)\s+)?[`*_]*"
    r"(?P<name>\.?[\w-]+(?:\.[\w-]+)*)[`*_]*\s*:?\s*[*_]*\s*$",
    re.I,
)
_CONFIG_NAME = re.compile(r"^(?:\.[\w-]+rc|[\w.-]+\.(?:cfg|ini|toml|txt|ya?ml|json|rc|py))$")
_PY_NAME = re.compile(r"(?<![\w/.-])(?P<name>[\w-]+\.py)\b")
_MAX_OUTPUT_LINES = 6
_GENERIC = re.compile(
    r"^(?:=+.*=+|-+|platform |rootdir|cachedir|plugins:|collected |collecting|Ran \d|OK$|\s*$)"
)


@dataclass(frozen=True)
class CliCase:
    tool: Tool
    args: tuple[str, ...]
    files: dict[str, str]
    absent: tuple[str, ...]  # output lines the issue reports as wrong
    present: tuple[str, ...]  # output lines the issue shows as right
    # Whether the lines are matched at the start of an output line only: a crash the runner
    # reports as its own ("INTERNALERROR> RuntimeError: ...") must go, while the same exception
    # reported as a test's failure ("E   RuntimeError: ...") is the fixed behaviour.
    at_line_start: bool = False
    # What the command reads on its standard input ("echo 'select 1;;' | tool lint -").
    stdin: str | None = None


def split_command(command: str) -> tuple[list[str], str | None] | None:
    """The words of a shell command line and the text ``echo`` pipes into it (None when it
    reads nothing); None when the line does not split as the shell would (an open quote)."""
    stdin = None
    # "echo 'select 1;;' | tool lint -": the text a command reads on its standard input.
    head, bar, rest = command.partition("|")
    try:
        if bar and head.split()[:1] == ["echo"]:
            stdin = " ".join(shlex.split(head)[1:]) + "\n"
            command = rest
        words = shlex.split(command)
    except ValueError:
        return None
    if not words or any(w in ("|", ">", "<", "&&", ";") for w in words):
        return None
    return words, stdin


def _commands(issue: IssueReport, tools: Mapping[str, Tool]) -> list[tuple[int, str]]:
    """(line, command) pairs naming a project tool: prompt lines in blocks, code spans in prose."""
    found: list[tuple[int, str]] = []
    for block in issue.code_blocks:
        # A shell block of one line without a prompt is a command; more lines may be its output
        # ("pylint 2.14.4" under "pylint --version").
        lines = [line for line in block.text.split("\n") if line.strip()]
        shell = (block.language or "").lower() in _SHELL_LANGUAGES and len(lines) == 1
        for offset, line in enumerate(block.text.split("\n")):
            match = _PROMPT.match(line)
            command = match.group("cmd") if match else line.strip() if shell else ""
            split = split_command(command) if command else None
            if split is not None and split[0][0] in tools:
                found.append((block.line + offset, command))
    for number, span in issue.spans_by_line:
        first = span.split()[0] if span.split() else ""
        if first in tools and len(span.split()) > 1:
            found.append((number, span))
    return sorted(found)


def _output_lines(block: CodeBlock) -> list[str]:
    return [
        line.rstrip()
        for line in block.text.split("\n")
        if not _PROMPT.match(line) and not _GENERIC.match(line.strip()) and says_something(line)
    ]


# What only the reporter's machine prints: an interpreter banner, a date or clock time, an
# object's address. A test asserting on it asserts on their machine. (Paths are matched with any
# prefix by ``loose_pattern``.)
_MACHINE = re.compile(
    r"^\s*Python \d+\.\d+\S* \(|\[(?:GCC|Clang|MSC) |\b\d{4}-\d{2}-\d{2}\b"
    r"|\b\d{1,2}:\d{2}:\d{2}\b|\b0x[0-9a-fA-F]{6,}\b"
)
_LETTERS = re.compile(r"[^\W\d_]")


def says_something(line: str) -> bool:
    """Whether an output line says something of the project a test may assert on: a few
    letters at least (not a bare prompt ``$``), and nothing only the reporter's machine prints."""
    return len(_LETTERS.findall(line)) >= 3 and not _MACHINE.search(line)


def loose_pattern(line: str) -> str:
    """A regex for ``line`` that lets numbers, spacing and path prefixes differ."""
    parts = re.split(r"(\d+|\s+)", line.strip())
    out = []
    for part in parts:
        if not part:
            continue
        if part.isdigit():
            out.append(r"\d+")
        elif part.isspace():
            out.append(r"\s+")
        elif "/" in part or "\\" in part:
            # Paths print relative to wherever the command ran, with the separator of the
            # reporter's system: any prefix, same file name.
            name = re.split(r"[/\\]", part)[-1]
            out.append(r"(?:\S*[/\\])?" + re.escape(name))
        else:
            out.append(re.escape(part))
    return "".join(out)


def cli_case(
    issue: IssueReport, layout: TestLayout, manifests: Mapping[str, str]
) -> CliCase | None:
    """The command-line reproduction an issue shows, or None when it shows none."""
    tools = project_tools(layout, manifests)
    commands = _commands(issue, tools)
    if not commands:
        return _test_module_case(issue, tools)
    crash = _crash_case(issue, tools, commands)
    if crash is not None:
        return crash
    outputs = [
        b for b in issue.code_blocks if b.is_output and not b.is_traceback and not is_listing(b)
    ]
    picked = _bad_and_good(issue, outputs, commands) if outputs else None
    if picked is None:
        return None
    bad, good = picked
    command = _command_of(bad, commands) or commands[-1][1]
    split = split_command(command)
    if split is None:
        return None
    words, stdin = split
    tool = tools[words[0]]
    args = tuple(words[1:])
    bad_lines = _output_lines(bad)
    good_lines = _output_lines(good) if good is not None else []
    absent = [x for x in bad_lines if x not in good_lines][:_MAX_OUTPUT_LINES]
    present = [x for x in good_lines if x not in bad_lines][:_MAX_OUTPUT_LINES]
    if not absent:
        return None
    files = _files(issue, args, [*bad_lines, *good_lines])
    if not files:
        return None
    return CliCase(tool, args, files, tuple(absent), tuple(present), stdin=stdin)


def _command_of(block: CodeBlock, commands: list[tuple[int, str]]) -> str | None:
    """The last command shown before the end of ``block``: the one whose output it is."""
    before = [c for c in commands if c[0] <= block.line + block.text.count("\n")]
    return before[-1][1] if before else None


def _bad_and_good(
    issue: IssueReport, outputs: list[CodeBlock], commands: list[tuple[int, str]]
) -> tuple[CodeBlock, CodeBlock | None] | None:
    """The output the issue reports as wrong and, when it shows one, the right output: by their
    labels, else the last block is the wrong one; and an earlier output of the same command the
    right one (``pylint --version``'s output says nothing of what ``pylint a`` should print)."""
    labels = [output_label(issue, block) for block in outputs]
    bad_ones = [b for b, label in zip(outputs, labels, strict=True) if label == "bad"]
    unlabelled = [b for b, label in zip(outputs, labels, strict=True) if label is None]
    good_ones = [b for b, label in zip(outputs, labels, strict=True) if label == "good"]
    # Of the outputs called wrong, the first that prints anything: the report's own case, the
    # later ones its variants and side effects. Unlabelled, the last: the surprise comes last.
    printing = [b for b in bad_ones if _output_lines(b)]
    if printing:
        bad = printing[0]
    elif unlabelled:
        bad = unlabelled[-1]
    else:
        return None
    command = _command_of(bad, commands)
    others = [b for b in good_ones if b is not bad] or [
        b
        for b in outputs[: outputs.index(bad)]
        if b not in bad_ones and _command_of(b, commands) == command
    ]
    return bad, (others[-1] if others else None)


def _files(issue: IssueReport, args: tuple[str, ...], output: list[str]) -> dict[str, str]:
    """The issue's Python blocks as files, named by the command's arguments or the output."""
    blocks = [
        b for b in issue.code_blocks if b.is_python and not b.is_session and not b.is_traceback
    ]
    names = [a for a in args if a.endswith(".py") and "/" not in a]
    for line in output:
        names.extend(m.group("name") for m in _PY_NAME.finditer(line))
    names = list(dict.fromkeys(names))
    files: dict[str, str] = {}
    for block, name in zip(blocks, names, strict=False):
        source = repair(block.text)
        if source is not None:
            files[name] = source + "\n"
    for name, text in _named_files(issue).items():
        files.setdefault(name, text)
    # The files a directory tree shows, empty unless a block above gave them their text.
    for block in issue.code_blocks:
        for path in from_root(listed_files(block), args):
            files.setdefault(path, "")
    return files


def _crash_case(
    issue: IssueReport, tools: Mapping[str, Tool], commands: list[tuple[int, str]]
) -> CliCase | None:
    """The command the issue runs, then the traceback it shows: the exception line must go."""
    for block in issue.code_blocks:
        if not block.is_traceback:
            continue
        end = block.line + block.text.count("\n")
        before = [c for c in commands if c[0] <= end]
        traceback = block.tracebacks[-1] if block.tracebacks else None
        if not before or traceback is None or not traceback.exc_type:
            continue
        split = split_command(before[-1][1])
        if split is None:
            return None
        words, stdin = split
        line = f"{traceback.exc_type}: {traceback.message}".strip().rstrip(":")
        line = line.split("\n")[0][:200]
        args = tuple(words[1:])
        files = _files(issue, args, [])
        return CliCase(tools[words[0]], args, files, (line,), (), stdin=stdin)
    return None


# The last line of a crash as the runner printed it, whatever it puts before the exception:
# "INTERNALERROR> RuntimeError: No active exception to reraise".
_CRASH_LINE = re.compile(r"^\S.*?\b[A-Za-z_][\w.]*(?:Error|Exception|Exit)\b(?::.*)?$")


def _test_module_case(issue: IssueReport, tools: Mapping[str, Tool]) -> CliCase | None:
    """An issue about a test runner that shows a test module and the crash the runner printed
    running it, with no command: the runner (a project tool its output names) is run on the
    module, and the crash line must no longer start a line of its output."""
    modules = [
        source
        for b in issue.code_blocks
        if b.is_python and not b.is_session and not b.is_traceback
        and (source := repair(b.text)) is not None and any(written_tests(source))
    ]  # fmt: skip
    outputs = [b for b in issue.code_blocks if not b.is_python or b.is_traceback]
    text = "\n".join(b.text for b in outputs)
    # Named as a word ("pytest-5.4.1", "lintr 2.0"), not as a folder of a path in a traceback.
    runners = [
        name for name in tools if re.search(rf"(?<![\w./\\-]){re.escape(name)}(?![\w/\\])", text)
    ]
    if len(modules) != 1 or len(runners) != 1:
        return None
    crash = next(
        (
            line.strip()
            for b in reversed(outputs)
            for line in reversed(b.text.split("\n"))
            if _CRASH_LINE.match(line.strip()) and not line.lstrip().startswith("File ")
        ),
        None,
    )
    if crash is None or len(crash) > 300:
        return None
    names = [m.group("name") for m in _PY_NAME.finditer(text) if m.group("name").startswith("test")]
    name = names[0] if names else "test_issue.py"
    return CliCase(
        tools[runners[0]], (name,), {name: modules[0] + "\n"}, (crash,), (), at_line_start=True
    )


def _named_files(issue: IssueReport) -> dict[str, str]:
    """Configuration files the issue shows, each a code block after a line naming it."""
    out: dict[str, str] = {}
    for block in issue.code_blocks:
        if block.is_traceback or block.is_session:
            continue
        match = _FILE_LABEL.match(caption(issue, block))
        name = match.group("name") if match else ""
        if _CONFIG_NAME.match(name) and not name.endswith(".py") and "/" not in name:
            out.setdefault(name, _with_section(name, block.text.rstrip("\n") + "\n"))
    return out


# The one section a tool reads its own INI file from (pylint takes any section of a pylintrc):
# reporters quote just the option line they changed ("function-rgx=..."), and without a
# section the file is no configuration at all.
_INI_SECTIONS = {"pylintrc": "MAIN", ".pylintrc": "MAIN", "pytest.ini": "pytest"}
_INI_OPTION = re.compile(r"^[\w.-]+\s*[=:]")


def _with_section(name: str, text: str) -> str:
    """``text`` under its tool's section when it is a bare option line or list of them."""
    section = _INI_SECTIONS.get(name)
    first = next((line.strip() for line in text.split("\n") if line.strip()), "")
    if section is None or not _INI_OPTION.match(first):
        return text
    return f"[{section}]\n{text}"


def cli_test_body(case: CliCase, timeout_s: float = 300.0) -> tuple[list[str], str]:
    """(imports, body) of a test taking pytest's ``tmp_path``: write, run, assert on output."""
    lines = [
        f"(tmp_path / {name!r}).parent.mkdir(parents=True, exist_ok=True)"
        for name in case.files
        if "/" in name
    ]
    lines += [f"(tmp_path / {name!r}).write_text({text!r})" for name, text in case.files.items()]
    argv = ", ".join(repr(a) for a in (*case.tool.argv_prefix, *case.args))
    lines += [
        "proc = subprocess.run(",
        f"    [sys.executable, {argv}],",
        *([f"    input={case.stdin!r},"] if case.stdin is not None else []),
        f"    cwd=tmp_path, capture_output=True, text=True, timeout={timeout_s!r},",
        ")",
        "output = proc.stdout + proc.stderr",
    ]
    start = "(?m)^" if case.at_line_start else ""
    for line in case.absent:
        lines.append(
            f"assert not re.search({start + loose_pattern(line)!r}, output), "
            f"'the output still shows ' + {line!r} + ':\\n' + output[-3000:]"
        )
    for line in case.present:
        lines.append(
            f"assert re.search({loose_pattern(line)!r}, output), "
            f"'the output lacks ' + {line!r} + ':\\n' + output[-3000:]"
        )
    return ["import re", "import subprocess", "import sys"], "\n".join(lines)
