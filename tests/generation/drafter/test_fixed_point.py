"""An operation the issue calls incomplete: its result must be a fixed point of it."""

from __future__ import annotations

import pytest

from reprobot.generation.drafter.fixed_point import (
    fixed_point_sources,
    reapplied,
)
from reprobot.generation.drafter.snippets import code_programs, session_programs
from reprobot.generation.issue.report import parse_issue
from reprobot.validation.results.oracles import OracleKind, module_oracles


@pytest.mark.parametrize(
    ("expression", "again"),
    [
        ("P.expand(tensorproduct=True)", ("result.expand(tensorproduct=True)", "expand")),
        ("simplify(e, ratio=1)", ("simplify(result, ratio=1)", "simplify")),
        ("a.b.normalize()", ("result.normalize()", "normalize")),
        ("f()", None),
        ("f(*args)", None),
        ("x + y", None),
        ("(", None),
    ],
)
def test_reapplied_gives_the_call_on_its_own_result(
    expression: str, again: tuple[str, str] | None
) -> None:
    assert reapplied(expression) == again


ISSUE = """The expansion of a product stops incomplete when a factor has a scalar:
```python
from shapes import Product
P = Product(2*u - v, u + v)
print(P)
# (2*u - v)x(u + v)
print(P.expand(deep=True))
# 2*ux(u + v) - vx(u + v)
```
"""


def test_the_shown_value_of_an_incomplete_operation_must_be_a_fixed_point() -> None:
    issue = parse_issue("Bug in expand of Product", ISSUE)
    [program] = code_programs(issue)
    [source], wrong = fixed_point_sources(program, issue)
    assert wrong == "2*ux(u + v) - vx(u + v)"
    assert source.method == "issue-expected"
    assert source.body.splitlines()[-3:] == [
        "result = P.expand(deep=True)",
        "again = result.expand(deep=True)",
        "assert again == result, 'applying expand again still changes ' + repr(result) + "
        "' into ' + repr(again)",
    ]
    body = "\n".join("    " + line for line in source.body.splitlines())
    oracles = module_oracles("tests/test_p.py", f"def test_p():\n{body}\n")
    assert [o.kind for o in oracles.values()] == [OracleKind.EXPECTED]


def test_nothing_when_the_issue_does_not_call_the_operation_incomplete() -> None:
    issue = parse_issue("Bug in expand of Product", ISSUE.replace("stops incomplete", "is wrong"))
    [program] = code_programs(issue)
    assert fixed_point_sources(program, issue) == ([], "")
    session = parse_issue(
        "simplify is not fully simplifying",
        "```\n>>> simplify(e)\nTraceback (most recent call last):\nValueError: x\n```\n",
    )
    # A step that raised shows no value to take again.
    assert all(fixed_point_sources(p, session) == ([], "") for p in session_programs(session))
