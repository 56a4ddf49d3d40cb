"""What a code block printed, paired statement by statement with the output the issue shows
after it (``issue.shown_output``: an output block, or a code span ending the words after it).

Reporters who paste a script rather than a session often paste what it printed in a block of
its own. Each top-level ``print``/``pprint`` of the script is given its lines of that output,
so the script becomes a session in all but form:

- a print of string constants (``print('C is')``) and ``print()`` print known lines, which
  anchor the others;
- a print of an expression takes the lines up to the next anchor, or one line when the next
  print is of an expression too (and then no value may span lines: that would be a miscount);
- a script with no print whose last statement is an expression (a notebook cell) shows that
  value: it takes the whole output, when the words before it say it is output ("Output:").

Anything else (a print inside a loop or a function, lines left over or missing) pairs nothing:
a wrong pairing would put words in the reporter's mouth.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from reprobot.generation.drafter.sources import print_call
from reprobot.generation.issue.report import CodeBlock, IssueReport
from reprobot.generation.issue.shown_output import shown_output
from reprobot.generation.issue.values import is_expression

# An exception or a warning ("colors.py:730: DeprecationWarning: ..."): raised or warned
# somewhere in the script, not the value its last statement shows.
_EXCEPTION_LINE = re.compile(r"\b[A-Z][\w.]*(?:Error|Exception|Warning)\s*:")


def _printed_text(statement: str) -> str | None:
    """What a print of string constants prints ("" for ``print()``); None for any other."""
    node = print_call(statement)
    if node is None or node.keywords:
        return None
    texts = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
    return " ".join(texts) if len(texts) == len(node.args) else None


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
        if last < 0 or not is_expression(statements[last]) or not lines or not introduced:
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
    shown = shown_output(issue, block)
    return pair_outputs(statements, shown.text, shown.introduced) if shown is not None else {}
