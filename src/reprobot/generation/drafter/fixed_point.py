"""An operation the issue says stops short of its result ("the expansion of a TensorProduct
stops incomplete", "it is not fully simplified", "repeat it until the term no longer changes"):
the value the issue shows, given to the same call again, must come back unchanged. A complete
result is a fixed point of the operation that made it; an incomplete one is not. Pure functions.

The check needs no expected value from the issue, and says more than "the shown value is gone":
a fix that stops one step further, still short, fails it. It is read only when a sentence names
the operation (its first letters: "expansion" for ``expand``) and calls it incomplete.
"""

from __future__ import annotations

import ast

from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import Produced, Reading
from reprobot.generation.drafter.snippets import Program, raising_steps, shown_value_step
from reprobot.generation.drafter.sources import TestSource, printed
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.sentences import says_incomplete
from reprobot.generation.issue.values import MAX_SHOWN_CHARS
from reprobot.validation import UNPARSABLE


def reapplied(expression: str) -> tuple[str, str] | None:
    """(the call ``expression`` makes, applied to ``result`` in place of its operand, the
    operation's name): ``result.expand(deep=False)`` for ``P.expand(deep=False)``,
    ``simplify(result, ratio=1)`` for ``simplify(e, ratio=1)``; None for anything else."""
    try:
        node = ast.parse(expression, mode="eval").body
    except UNPARSABLE:
        return None
    if not isinstance(node, ast.Call):
        return None
    result = ast.Name("result", ast.Load())
    func = node.func
    if isinstance(func, ast.Attribute):
        again = ast.Call(ast.Attribute(result, func.attr, ast.Load()), node.args, node.keywords)
        name = func.attr
    elif isinstance(func, ast.Name) and node.args and not isinstance(node.args[0], ast.Starred):
        again = ast.Call(func, [result, *node.args[1:]], node.keywords)
        name = func.id
    else:
        return None
    return ast.unparse(again), name


def fixed_point_sources(program: Program, issue: IssueReport) -> tuple[list[TestSource], str]:
    """The test that the shown value of an operation the issue calls incomplete is a fixed point
    of it, and that value (wrong: the issue says so); ``([], "")`` when the issue says nothing
    of the kind."""
    shown = shown_value_step(program)
    if shown is None:
        return [], ""
    step = program.steps[shown]
    expression = printed(step.source) or step.source
    value = step.output.strip()
    again = reapplied(expression)
    if again is None or not value or len(value) > MAX_SHOWN_CHARS:
        return [], ""
    call, operation = again
    if not says_incomplete(issue, operation):
        return [], ""
    failed = raising_steps(program)
    setup = [s.source for k, s in enumerate(program.steps[:shown]) if k not in failed]
    body = "\n".join(
        [
            *setup,
            f"result = {expression}",
            f"again = {call}",
            f"assert again == result, 'applying {operation} again still changes ' + "
            "repr(result) + ' into ' + repr(again)",
        ]
    )
    note = f"`{expression}` must be complete: applying `{operation}` again changes nothing"
    return [TestSource(Method.ISSUE_EXPECTED, program.imports, body, note)], value


def fixed_point_variants(reading: Reading) -> Produced:
    """Per program, the value of an operation the issue calls incomplete, given to it again."""
    sources: list[TestSource] = []
    wrong: list[str] = []
    for program in reading.programs:
        fixed, incomplete = fixed_point_sources(program, reading.issue)
        sources.extend(fixed)
        wrong.append(incomplete)
    return Produced(tuple(sources), tuple(w for w in wrong if w))
