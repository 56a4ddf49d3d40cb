"""What an issue shows a code block printed, in the words after it (pure): the output block it
pastes right after the code ("I get this output:", "says", "Output:"), or one code span ending
the words after it ("The output is `-0.5*x**2.5 + 0.5*x**2.5`").

A block after words about the environment ("#### Versions"), or that reads as a version report,
is never this output; nor is one after words saying what should happen ("Expected output:"). A
block of one value that also reads as Python (``OrderedDict()``) is output when the words
before it say the code gave it ("returns"). How the output pairs with the code's prints is the
drafter's (``printed_output``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from reprobot.generation.issue.report import CodeBlock, IssueReport
from reprobot.generation.issue.values import is_expression

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
# Words saying the block after them is what the script gave: "I get this output:",
# "### Actual outcome", "which returns".
_INTRODUCES_OUTPUT = re.compile(
    r"\b(?:output|outputs|outcome|results?|returns?|gives?|got|get|prints?|printed|shows?"
    r"|yields?|produces?|says)\b",
    re.I,
)


@dataclass(frozen=True)
class ShownOutput:
    """What the issue shows a code block printed: the output block right after it (``block``)
    or a code span ending the words after it (``block`` None)."""

    text: str
    block: CodeBlock | None
    # Whether the words before it say it is what the code gave ("I get:", "returns"); a span
    # is only read when they do.
    introduced: bool


def shown_output(issue: IssueReport, block: CodeBlock) -> ShownOutput | None:
    """The output the issue shows ``block`` printed, as a block or as a span; None when it
    shows none."""
    found = _following_output(issue, block)
    if found is not None:
        following, prose = found
        return ShownOutput(following.text, following, bool(_INTRODUCES_OUTPUT.search(prose)))
    inline = inline_output_after(issue, block)
    return ShownOutput(inline, None, True) if inline is not None else None


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
    return bool(_INTRODUCES_OUTPUT.search(prose)) and is_expression(text)


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
