"""Two computations an issue says should agree: found in sessions, asserted equal."""

from __future__ import annotations

import pytest

from reprobot.generation.drafter.consistency import (
    assert_agree,
    find_disagreement,
)
from reprobot.generation.drafter.snippets import session_programs
from reprobot.generation.issue.report import parse_issue

SESSION = """\
```
>>> from sympy import *
>>> x = Symbol('x')
>>> e = (-x/4 - S(1)/12)**x - 1
>>> f = simplify(e)
>>> simplify(e.subs(x, a))
-1 - 32*15**(1/5)*2**(2/5)/225
>>> simplify(f.subs(x, a))
-1 - 32*(-1)**(4/5)*60**(1/5)/225
>>> N(e.subs(x, a))
-1.32255049319339
>>> N(f.subs(x, a))
-0.739051169462523 - 0.189590423018741*I
>>> N(e.subs(x, 2))
4.0
>>> N(x)
5.0
```
"""


def _found(title: str, body: str = SESSION) -> tuple[str, str, str] | None:
    issue = parse_issue(title, body)
    (program,) = session_programs(issue)
    found = find_disagreement(issue, program)
    if found is None:
        return None
    steps = program.steps
    return steps[found.first].source, steps[found.second].source, found.claim


def test_the_last_pair_of_one_computation_on_two_objects_printing_different_numbers() -> None:
    # Symbolic forms of one value print differently, so only printed numbers are compared;
    # "N(e.subs(x, 2))" and "N(x)" differ in more than a swapped name.
    assert _found("(-x/4 - S(1)/12)**x - 1 simplifies to an inequivalent expression") == (
        "N(e.subs(x, a))",
        "N(f.subs(x, a))",
        "inequivalent",
    )


def test_no_claim_no_disagreement() -> None:
    assert _found("simplify returns a complex number") is None


def _run(body: str, **names: object) -> None:
    exec(
        compile(
            "def check():\n" + "".join(f"    {line}\n" for line in body.split("\n")), "t", "exec"
        ),
        names,
    )
    names["check"]()  # type: ignore[operator]


def test_the_assertion_compares_numbers_within_a_tolerance_and_arrays_elementwise() -> None:
    body = assert_agree("f(a)", "f(b)", "inconsistent", ["a = 1"])
    _run(body, f=lambda v: complex(0.5, 1 / 3), b=2)
    _run(body, f=lambda v: 0.1 + 0.2 if v == 1 else 0.3, b=2)
    _run(body, f=lambda v: "same", b=2)
    with pytest.raises(
        AssertionError, match=r"calls them inconsistent: f\(a\) gives 1 but f\(b\) gives 2"
    ):
        _run(body, f=lambda v: v, b=2)
    # An array compares elementwise, and its truth is that of all its elements.
    _run(body, f=lambda v: _Array([1.0, 2.0]), b=2)
    with pytest.raises(AssertionError):
        _run(body, f=lambda v: _Array([1.0, float(v)]), b=2)


class _Array:
    """What NumPy's arrays do with ``==``: a result per element, reduced by ``all()``."""

    def __init__(self, items: list[float]) -> None:
        self.items = items

    def __eq__(self, other: object) -> _Elementwise:  # type: ignore[override]
        assert isinstance(other, _Array)
        return _Elementwise([a == b for a, b in zip(self.items, other.items, strict=True)])

    def __hash__(self) -> int:
        return id(self)

    def __bool__(self) -> bool:
        raise ValueError("the truth value of an array is ambiguous")


class _Elementwise(_Array):
    def all(self) -> bool:
        return all(self.items)
