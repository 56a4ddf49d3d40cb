"""The verdict rules as a table of pure cases: transitions, oracles, guard, concerns and how much
of the change ran, to a status."""

from __future__ import annotations

from dataclasses import dataclass, field

import pytest

from reprobot.validation.results.oracles import OracleKind
from reprobot.validation.results.ruling import Executed, GuardOutcomes, Status, rule
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.results.verdict import transitions

P, F, E, XF = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.XFAILED
FIXED = ({"t::a": F}, {"t::a": P})
GUARD_KEPT = GuardOutcomes(("g.py",), {"g::x": P}, {"g::x": P})


@dataclass(frozen=True)
class Case:
    before: dict[str, Outcome]
    after: dict[str, Outcome]
    status: Status
    oracle: OracleKind | None = OracleKind.EXPECTED
    guard: GuardOutcomes | None = None
    harness: tuple[str, ...] = ()
    review: tuple[str, ...] = ()
    executed: Executed | None = None
    says: tuple[str, ...] = field(default_factory=tuple)


CASES = {
    "nothing reported": Case({}, {}, "inconclusive", says=("reported no outcome",)),
    "fixed, checks a value": Case(*FIXED, "verified"),
    "never failed": Case({"t::a": P}, {"t::a": P}, "not_verified"),
    "still fails": Case({"t::a": F}, {"t::a": F}, "not_verified"),
    "an expected failure after": Case({"t::a": F}, {"t::a": XF}, "not_verified"),
    "another test breaks": Case({"t::a": F, "t::b": P}, {"t::a": P, "t::b": F}, "not_verified"),
    "only the crash is gone": Case(*FIXED, "weak", oracle=OracleKind.CRASH, says=("only check",)),
    "guard kept": Case(*FIXED, "verified", guard=GUARD_KEPT),
    "guard broken": Case(
        *FIXED,
        "not_verified",
        guard=GuardOutcomes(("g.py",), {"g::x": P}, {"g::x": F}),
        says=("1 existing test(s) of g.py pass before this change and fail with it",),
    ),
    "guard could not run": Case(
        *FIXED,
        "needs_review",
        guard=GuardOutcomes(("g.py",), {"g::x": P}, {}, "after it: limits hit (memory)"),
        says=("could not be run (after it: limits hit (memory))",),
    ),
    "guard test removed": Case(
        *FIXED,
        "needs_review",
        guard=GuardOutcomes(("g.py",), {"g::x": P, "g::y": P}, {"g::x": P}),
        says=("removes 1 existing test(s)",),
    ),
    "harness file": Case(*FIXED, "needs_review", harness=("conftest.py",), says=("conftest.py",)),
    "a path the allowlist refuses": Case(
        *FIXED, "needs_review", review=("it changes 1 file(s) a verified change may not contain",)
    ),
    "the change never ran": Case(
        *FIXED,
        "not_verified",
        executed=Executed(executable=4, covered=0),
        says=("the tests pass without running the change: none of its 4",),
    ),
    "part of the change ran": Case(*FIXED, "verified", executed=Executed(4, 1)),
    "no executable line changed": Case(*FIXED, "verified", executed=Executed(0, 0)),
    "never ran, and a harness file": Case(
        *FIXED, "not_verified", harness=("conftest.py",), executed=Executed(2, 0)
    ),
}


@pytest.mark.parametrize("name", list(CASES))
def test_the_rules(name: str) -> None:
    case = CASES[name]
    graded = transitions(case.before, case.after)
    ruling = rule(
        graded,
        lambda _: case.oracle,
        case.guard,
        case.harness,
        case.review,
        case.executed,
    )
    assert ruling.status == case.status
    said = " ".join(ruling.reasons)
    for words in case.says:
        assert words in said, said
    # A status short of verified never comes without its reason, but for tests that did not
    # pass, which the transitions themselves show.
    if ruling.status in ("weak", "needs_review"):
        assert ruling.reasons
