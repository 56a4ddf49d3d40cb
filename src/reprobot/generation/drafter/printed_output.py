"""What a code block printed, read from the output block the issue shows right after it (pure).

Reporters who paste a script rather than a session often paste what it printed in a block of
its own: "I get this output:", "says", "Output:". Each top-level ``print``/``pprint`` of the
script is given its lines of that block, so the script becomes a session in all but form:

- a print of string constants (``print('C is')``) and ``print()`` print known lines, which
  anchor the others;
- a print of an expression takes the lines up to the next anchor, or one line when the next
  print is of an expression too (and then no value may span lines: that would be a miscount);
- a script with no print whose last statement is an expression (a notebook cell) shows that
  value: it takes the whole block, when the words before it say it is output ("Output:").

A block after words about the environment ("#### Versions"), or that reads as a version report,
is never this output.

Words right after the script may give the output as one code span ending their line instead
("The output is `-0.5*x**2.5 + 0.5*x**2.5`"). A block of one value that also reads as Python
(``OrderedDict()``) is that output too when the words before it say the code gave it
("returns").

Anything else (a print inside a loop or a function, lines left over or missing) pairs nothing:
a wrong pairing would put words in the reporter's mouth.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from reprobot.generation.drafter.sources import print_call
from reprobot.generation.issue.report import CodeBlock, IssueReport
from reprobot.validation import UNPARSABLE

# Prose lines allowed between a script and its output ("I get this output:"); more is another
# part of the report.
_MAX_PROSE_LINES = 2
_MAX_OUTPUT_LINES = 60
# The words joining code and a block of one value that reads as Python are a few ("returns",
# "I get:"): a paragraph that mentions a return says something else.
_MAX_JOINING_CHARS = 60
# An output block that starts with a shell prompt is a command's transcript, not this output.
_SHELL_PROMPTS = ("$ ", "> ", "% ", "C:\\")
# Words between a script and a block that make the block something else: the environment the
# reporter ran it in ("#### Versions", "### System Information").
_ABOUT_ENVIRONMENT = re.compile(
    r"\b(?:versions?|environment|system|platform|installed|show_versions)\b", re.I
)
# A line of a version report: "python: 3.8.3", "numpy: 1.18.5", "sqlfluff, version 0.6.6".
_VERSION_LINE = re.compile(
    r"^\s*[\w.-]+(?:\s*[:,]\s*|\s+)(?:version\s+)?v?\d+\.\d+|\bversion\b.*\d", re.I
)
# Words saying what follows is not what the script printed: the environment, or what should
# happen ("#### Expected Results").
_NOT_OUTPUT = re.compile(
    rf"{_ABOUT_ENVIRONMENT.pattern}|\b(?:expect\w*|should|would|want\w*|instead)\b", re.I
)
# An exception or a warning ("colors.py:730: DeprecationWarning: ..."): raised or warned
# somewhere in the script, not the value its last statement shows.
_EXCEPTION_LINE = re.compile(r"\b[A-Z][\w.]*(?:Error|Exception|Warning)\s*:")
# Words saying the block after them is what the script gave: "I get this output:",
# "### Actual outcome", "which returns".
_INTRODUCES_OUTPUT = re.compile(
    r"\b(?:output|outputs|outcome|results?|returns?|gives?|got|get|prints?|printed|shows?"
    r"|yields?|produces?|says)\b",
    re.I,
)


def output_after(issue: IssueReport, block: CodeBlock) -> CodeBlock | None:
    """The output block the issue shows right after ``block``, with at most a line or two of
    prose between them; None when the next block is code, a traceback, a version report or far
    away."""
    found = _following_output(issue, block)
    return found[0] if found is not None else None


def _following_output(issue: IssueReport, block: CodeBlock) -> tuple[CodeBlock, str] | None:
    """(the output block after ``block``, the prose between them)."""
    blocks = issue.code_blocks
    at = next((k for k, b in enumerate(blocks) if b is block), None)
    if at is None or at + 1 >= len(blocks):
        return None
    following = blocks[at + 1]
    lines = issue.body.split("\n")
    prose = [text for text in lines[block.after : following.line - 1] if text.strip()]
    shown_value = _is_shown_value(following, " ".join(prose))
    if not (following.is_output or shown_value) or following.is_traceback:
        return None
    if following.text.lstrip().startswith(_SHELL_PROMPTS):
        return None
    if len(following.text.split("\n")) > _MAX_OUTPUT_LINES:
        return None
    # "Expected output:" over a block is what should be printed, not what was.
    if len(prose) > _MAX_PROSE_LINES or any(_NOT_OUTPUT.search(t) for t in prose):
        return None
    if sum(1 for line in following.text.split("\n") if _VERSION_LINE.search(line)) >= 2:
        return None
    return following, " ".join(prose)


def _is_shown_value(block: CodeBlock, prose: str) -> bool:
    """An untagged block holding one value that also reads as Python (``OrderedDict()``,
    ``[1, 2]``, ``True``), after words saying the code gave it ("```...``` returns ```[1]```"):
    the value the code showed, not more code."""
    text = block.text.strip()
    if block.language is not None or "\n" in text or len(prose) > _MAX_JOINING_CHARS:
        return False
    return bool(_INTRODUCES_OUTPUT.search(prose)) and _is_expression(text)


def _printed_text(statement: str) -> str | None:
    """What a print of string constants prints ("" for ``print()``); None for any other."""
    node = print_call(statement)
    if node is None or node.keywords:
        return None
    texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return " ".join(texts) if len(texts) == len(node.args) else None


def _is_expression(statement: str) -> bool:
    try:
        ast.parse(statement.strip(), mode="eval")
    except UNPARSABLE:
        return False
    return True


def pair_outputs(statements: Sequence[str], output: str, introduced: bool = True) -> dict[int, str]:
    """By statement index, the lines of ``output`` each printing statement printed; empty when
    the statements and the lines do not pair up exactly. A script without a print shows the
    value of its last expression only when the words before the block say it is ``introduced``
    as output: any block after it would do otherwise."""
    prints = [k for k, s in enumerate(statements) if print_call(s) is not None]
    if any("print" in s for k, s in enumerate(statements) if k not in prints):
        return {}  # a print in a loop or a function: its lines cannot be told apart
    lines = output.rstrip().split("\n")
    while lines and not lines[0].strip():
        lines.pop(0)
    if not prints:
        last = len(statements) - 1
        if last < 0 or not _is_expression(statements[last]) or not lines or not introduced:
            return {}
        if _EXCEPTION_LINE.search(output):
            return {}
        return {last: "\n".join(lines)}
    shown: dict[int, str] = {}
    cursor = 0
    # Once values in a row were taken a line each, a value over several lines is a miscount.
    one_line = False
    for n, k in enumerate(prints):
        constant = _printed_text(statements[k])
        if constant is not None:
            # The trailing empty lines of final ``print()`` calls are often not pasted.
            rest = [_printed_text(statements[j]) for j in prints[n:]]
            if cursor == len(lines) and all(t == "" for t in rest):
                break
            if cursor >= len(lines) or lines[cursor].strip() != constant.strip():
                return {}
            cursor += 1
            continue
        following = [_printed_text(statements[j]) for j in prints[n + 1 :]]
        anchor = next((t for t in following if t is not None), None)
        if following and following[0] is None:
            stop = cursor + 1  # two values in a row: one line each
            one_line = True
        elif anchor is None or all(t == "" for t in following):
            # Up to the end: the empty lines of trailing ``print()`` calls are cut with it.
            stop = next((j for j in range(cursor, len(lines)) if anchor == lines[j] == ""), -1)
            stop = len(lines) if stop < 0 else stop
        else:
            stop = next(
                (j for j in range(cursor, len(lines)) if lines[j].strip() == anchor.strip()),
                -1,
            )
        if stop <= cursor or stop > len(lines):
            return {}
        shown[k] = "\n".join(lines[cursor:stop])
        cursor = stop
    if cursor != len(lines) or (one_line and any("\n" in v for v in shown.values())):
        return {}
    return shown


def block_output(issue: IssueReport, block: CodeBlock, statements: Sequence[str]) -> dict[int, str]:
    """By index in ``statements`` (the top-level statements of ``block``), what the output
    block after it shows each printed; empty when there is none or they do not pair up."""
    found = _following_output(issue, block)
    if found is not None:
        following, prose = found
        return pair_outputs(statements, following.text, bool(_INTRODUCES_OUTPUT.search(prose)))
    inline = inline_output_after(issue, block)
    return pair_outputs(statements, inline) if inline is not None else {}


# One code span ending a line: "The output is `-0.5*x**2.5 + 0.5*x**2.5`".
_ENDING_SPAN = re.compile(r"^(?P<before>[^`]*)`(?P<value>[^`\n]+)`[\s.:;,!]*$")


def inline_output_after(issue: IssueReport, block: CodeBlock) -> str | None:
    """The value the words right after ``block`` say it printed, as the one code span ending
    one of their first lines ("The output is `x + 1`"); None otherwise."""
    lines = issue.body.split("\n")
    following = [b.line for b in issue.code_blocks if b.line > block.line]
    end = min([*following, len(lines) + 1]) - 1
    prose: list[str] = []
    for text in lines[block.after : end]:
        if not text.strip():
            continue
        prose.append(text.strip())
        match = _ENDING_SPAN.match(text.strip())
        if match is not None:
            intro = " ".join([*prose[:-1], match.group("before")])
            wanted = _INTRODUCES_OUTPUT.search(intro) and not _NOT_OUTPUT.search(intro)
            return match.group("value").strip() if wanted else None
        if len(prose) >= _MAX_PROSE_LINES:
            break
    return None
