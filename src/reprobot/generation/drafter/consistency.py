"""Two computations the issue says should agree (pure).

"`simplify(e)` gives an inequivalent expression", "Inconsistency when simplifying": the reporter
shows the same computation on two objects that should be equivalent (``N(e.subs(x, a))`` and
``N(f.subs(x, a))``, where ``f = simplify(e)``) printing different values. Neither value is
called wrong and no expected value is stated, yet the issue is clear: the two must agree. The
test computes both and asserts they are equal (numbers within a tolerance, arrays elementwise).
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass

from reprobot.generation.drafter.snippet_names import bound_names
from reprobot.generation.drafter.snippets import Program, Step
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.sentences import consistency_claim

# A printed number, real or complex ("-1.32255049319339", "-0.739 - 0.1896*I", "(1+2j)"):
# only numbers are compared, as two symbolic forms of one value print differently.
_REAL = r"[-+]?\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
_NUMBER = re.compile(
    rf"\(?{_REAL}(?:\s*[-+]\s*(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*(?:\*\s*I|j))?\)?"
    rf"|{_REAL}\s*(?:\*\s*I|j)"
)
_SKIP_TOKENS = frozenset(
    {tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT}
    | {tokenize.ENDMARKER}
)


@dataclass(frozen=True)
class Disagreement:
    """Steps ``first`` and ``second`` of a program compute the same thing on two objects the
    issue says should be equivalent, and the issue shows different values."""

    first: int
    second: int
    claim: str  # the issue's word for it ("inequivalent")


def _tokens(source: str) -> list[tuple[int, str]] | None:
    try:
        found = tokenize.generate_tokens(io.StringIO(source).readline)
        return [(t.type, t.string) for t in found if t.type not in _SKIP_TOKENS]
    except (tokenize.TokenError, SyntaxError):
        return None


def _bound_names(steps: tuple[Step, ...]) -> set[str]:
    """Names the steps bind (``e = ...``, ``a, b = ...``)."""
    return {name for step in steps for name in bound_names(step.source)}


def _parallel(first: str, second: str, bound: set[str]) -> bool:
    """Whether two statements are one computation on two objects: the same tokens but for
    names the program bound itself, swapped consistently (``e`` for ``f`` throughout)."""
    a, b = _tokens(first), _tokens(second)
    if a is None or b is None or len(a) != len(b) or a == b:
        return False
    swap: dict[str, str] = {}
    for (kind_a, text_a), (kind_b, text_b) in zip(a, b, strict=True):
        if (kind_a, text_a) == (kind_b, text_b):
            continue
        if kind_a != tokenize.NAME or kind_b != tokenize.NAME:
            return False
        if text_a not in bound or text_b not in bound or swap.setdefault(text_a, text_b) != text_b:
            return False
    return True


def _squash(text: str) -> str:
    return "".join(text.split())


def find_disagreement(issue: IssueReport, program: Program) -> Disagreement | None:
    """The last pair of parallel steps the program shows printing different numbers, when the
    issue says results should agree."""
    claim = consistency_claim(issue)
    if claim is None:
        return None
    steps = program.steps
    shown = [
        k
        for k, step in enumerate(steps)
        if _NUMBER.fullmatch(step.output.strip()) and step.is_expression
    ]
    for j in reversed(shown):
        bound = _bound_names(steps[:j])
        for i in reversed([k for k in shown if k < j]):
            if _squash(steps[i].output) == _squash(steps[j].output):
                continue
            if _parallel(steps[i].source, steps[j].source, bound):
                return Disagreement(i, j, claim)
    return None


# Equal by ``==`` (elementwise for arrays), or numbers within a relative 1e-9 (complex and
# symbolic numbers included). A helper, so the assertion reads as what it checks.
_AGREE = (
    "def _agree(first, second):",
    "    same = first == second",
    "    if hasattr(same, 'all'):",
    "        return bool(same.all())",
    "    if same:",
    "        return True",
    "    try:",
    "        return abs(complex(first) - complex(second)) <= 1e-9 * (1 + abs(complex(second)))",
    "    except (TypeError, ValueError, OverflowError, AttributeError):",
    "        return False",
)


def assert_agree(first: str, second: str, claim: str, setup: list[str]) -> str:
    """Run ``setup``, compute both expressions, and require that they agree."""
    lead = f"the issue calls them {claim}: {first} gives "
    middle = f" but {second} gives "
    return "\n".join(
        [
            *_AGREE,
            *setup,
            f"first_value = {first}",
            f"second_value = {second}",
            "assert _agree(first_value, second_value), "
            f"{lead!r} + repr(first_value) + {middle!r} + repr(second_value)",
        ]
    )
