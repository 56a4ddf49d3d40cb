"""``issue-code`` and ``issue-code-last``: the issue's code blocks run as tests, the last
expression of each shown as a notebook shows it, so that the test fails with the issue's
exception on the commit and passes once it is gone."""

from __future__ import annotations

from reprobot.generation.drafter.reading import Produced, Reading
from reprobot.generation.drafter.session_variants import displayed
from reprobot.generation.drafter.sources import TestSource


def code_run_variants(reading: Reading) -> Produced:
    """Every code block before the traceback (``issue-code``), and each later block alone
    (``issue-code-last``)."""
    out = []
    for index, program in enumerate(reading.code):
        steps = [s.source for s in program.steps]
        body = "\n".join([*steps[:-1], *displayed(program.steps[-1])]) if steps else ""
        name = "issue-code" if index == 0 else "issue-code-last"
        out.append(TestSource(name, program.imports, body, "the issue's code, run as a test"))
    return Produced(tuple(out))
