"""``issue-code`` and ``issue-code-last``: the issue's code blocks run as tests, the last
expression of each shown as the issue showed it (its repr, and the notebook display methods the
issue's traceback went through), so that the test fails with the issue's exception on the commit
and passes once it is gone.

Where the title says the exception's message is what is wrong ("misleading exception when the
required column check fails"), the raise may stay after a fix: the block is run for the message
the issue shows gone instead (``issue-wrong-value``), and not for the crash gone."""

from __future__ import annotations

from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import Produced, Reading
from reprobot.generation.drafter.session_variants import displayed
from reprobot.generation.drafter.sources import TestSource
from reprobot.generation.drafter.test_writer import assert_message_gone
from reprobot.generation.issue.sentences import message_called_wrong


def code_run_variants(reading: Reading) -> Produced:
    """Every code block before the traceback (``issue-code``), and each later block alone
    (``issue-code-last``); or each for its message gone, when that is what the issue calls
    wrong."""
    message = message_called_wrong(reading.issue)
    out = []
    for index, program in enumerate(reading.code):
        steps = [s.source for s in program.steps]
        shown = displayed(program.steps[-1], reading.issue.display_methods) if steps else []
        body = "\n".join([*steps[:-1], *shown])
        if message is not None:
            note = f"the issue's code must no longer raise the message it calls wrong: {message}"
            body = assert_message_gone(body, message)
            out.append(TestSource(Method.ISSUE_WRONG_VALUE, program.imports, body, note))
            continue
        name = Method.ISSUE_CODE if index == 0 else Method.ISSUE_CODE_LAST
        out.append(TestSource(name, program.imports, body, "the issue's code, run as a test"))
    return Produced(tuple(out), (message,) if message is not None and out else ())
