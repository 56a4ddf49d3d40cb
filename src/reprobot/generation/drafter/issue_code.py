"""``issue-code`` and ``issue-code-last``: the issue's code blocks run as tests, the last
expression of each shown as the issue showed it (its repr, and the notebook display methods the
issue's traceback went through), so that the test fails with the issue's exception on the commit
and passes once it is gone.

A block that writes out tests (top-level ``test*`` functions, as a reporter proposes a
regression test) is those tests, run by pytest as the project's own with the fixtures they ask
for; unless the issue shows a runner's session, whose report of running them is the problem (a
pytest issue's example module, which ``issue-command`` runs).

Where the title says the exception's message is what is wrong ("misleading exception when the
required column check fails"), the raise may stay after a fix: the block is run for the message
the issue shows gone instead (``issue-wrong-value``), and not for the crash gone."""

from __future__ import annotations

import ast

from reprobot.generation.drafter import snippet_names
from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import Produced, Reading
from reprobot.generation.drafter.session_variants import displayed
from reprobot.generation.drafter.snippets import Program
from reprobot.generation.drafter.sources import TestSource
from reprobot.generation.drafter.test_writer import assert_message_gone
from reprobot.generation.issue.runner_session import shows_runner_session
from reprobot.generation.issue.sentences import message_called_wrong
from reprobot.validation import UNPARSABLE


def written_tests(program: Program) -> tuple[str, ...]:
    """The test functions a program defines at its top level, pytest's way (``test*``, and not
    a method's ``self`` first)."""
    return tuple(
        name for step in program.steps for name in snippet_names.written_tests(step.source)[0]
    )


def _module_source(statements: list[str]) -> str:
    """Top-level statements as a module, with two blank lines around each definition."""
    lines: list[str] = []
    was_definition = False
    for statement in statements:
        definition = statement.lstrip().startswith(("def ", "async def ", "class ", "@"))
        if lines and (definition or was_definition):
            lines += ["", ""]
        lines.append(statement)
        was_definition = definition
    return "\n".join(lines)


def _run_by_pytest(source: str, tests: tuple[str, ...]) -> bool:
    """Whether a top-level statement is left to pytest: a call of one of the written tests
    (``test_foo()`` at the end of a script) or a ``__main__`` guard; pytest runs the tests."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return False
    if len(tree.body) != 1:
        return False
    node = tree.body[0]
    if isinstance(node, ast.Expr) and isinstance(node.value, ast.Call):
        func = node.value.func
        return isinstance(func, ast.Name) and func.id in tests
    return isinstance(node, ast.If) and "__main__" in ast.unparse(node.test)


def code_run_variants(reading: Reading) -> Produced:
    """Every code block before the traceback (``issue-code``), and each later block alone
    (``issue-code-last``); or each for its message gone, when that is what the issue calls
    wrong."""
    message = message_called_wrong(reading.issue)
    out = []
    runner_session = shows_runner_session(reading.issue)
    for index, program in enumerate(reading.code):
        name = Method.ISSUE_CODE if index == 0 else Method.ISSUE_CODE_LAST
        tests = written_tests(program)
        if tests and message is None and not runner_session:
            body = _module_source(
                [s.source for s in program.steps if not _run_by_pytest(s.source, tests)]
            )
            note = f"the tests the issue writes out ({', '.join(tests[:3])}), run as they are"
            out.append(TestSource(name, program.imports, body, note, module_level=True))
            continue
        steps = [s.source for s in program.steps]
        shown = displayed(program.steps[-1], reading.issue.display_methods) if steps else []
        body = "\n".join([*steps[:-1], *shown])
        if message is not None:
            note = f"the issue's code must no longer raise the message it calls wrong: {message}"
            body = assert_message_gone(body, message)
            out.append(TestSource(Method.ISSUE_WRONG_VALUE, program.imports, body, note))
            continue
        out.append(TestSource(name, program.imports, body, "the issue's code, run as a test"))
    return Produced(tuple(out), (message,) if message is not None and out else ())
