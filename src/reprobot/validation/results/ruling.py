"""The verdict rules, in one place (pure): from the graded tests' transitions, what each
fail-to-pass test checks, the guard's outcomes and what the change touches, to a status.

``verify`` (the command line and the App) and ``bench pod`` both rule through here; each first
decides whether its runs are usable at all (patches applied, no error), which is theirs to say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Literal

from reprobot.validation.results.oracles import OracleKind, unchecked_result
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.results.verdict import (
    Transition,
    broken_tests,
    is_success,
    removed_tests,
)

# "weak": no test that goes from fail to pass checks a result: each only checks that the
# reported error no longer occurs or that a reported wrong value is gone (see oracles.py), so a
# fix giving another wrong result would pass as well.
# "needs_review": the tests pass as they should, but the change holds what a reviewer cannot
# read in its diff or what decides how the tests run (``source.allowlist``), reaches the tests
# themselves, removes existing tests, or its existing tests could not run: a pass there can
# prove nothing, so only a maintainer who reads it can call the fix verified.
Status = Literal["verified", "weak", "needs_review", "not_verified", "inconclusive"]


@dataclass(frozen=True)
class GuardOutcomes:
    """The project's existing tests of the changed files (``modules``), run without the
    reproducing tests before and after the fix; ``trouble`` says why they could not be."""

    modules: tuple[str, ...]
    before: Mapping[str, Outcome]
    after: Mapping[str, Outcome]
    trouble: str | None = None


@dataclass(frozen=True)
class Ruling:
    """A status, the transitions it rests on (broken guard tests joined), and why."""

    status: Status
    transitions: Mapping[str, Transition]
    reasons: tuple[str, ...] = ()
    # Why a pass is not enough on its own: what makes a success "needs_review".
    review: tuple[str, ...] = ()
    # What the fail-to-pass tests check instead of a result (a "weak" success).
    short_of_a_result: str | None = None
    broken: Mapping[str, Transition] = field(default_factory=dict)


@dataclass(frozen=True)
class Executed:
    """How much of the change the tests ran: its executable changed lines in files the runs
    measured (a file no run imported says nothing), and how many of them ran."""

    executable: int
    covered: int


def rule(
    graded: Mapping[str, Transition],
    kind_of: Callable[[str], OracleKind | None] = lambda _: None,
    guard: GuardOutcomes | None = None,
    harness: Sequence[str] = (),
    review: Sequence[str] = (),
    executed: Executed | None = None,
) -> Ruling:
    """The status of usable runs of the graded tests.

    Not verified unless some test goes from fail to pass and none fails after (an expected
    failure or an unexpected pass is not a pass); not verified when the tests ran none of the
    change's executable lines in the files they measured (``executed``); weak when no
    fail-to-pass test checks a result (``kind_of``: a test id's oracle kind, None when unknown);
    not verified when a guard test that passed before fails after; needs review when the guard
    could not run, the change touches ``harness`` files, removes a guard test that passed, or
    has another ``review`` reason; verified otherwise."""
    if not graded:
        return Ruling("inconclusive", graded, ("the tests reported no outcome",))
    if not is_success(graded):
        return Ruling("not_verified", graded)
    if executed is not None and executed.executable and not executed.covered:
        return Ruling(
            "not_verified",
            graded,
            (
                "the tests pass without running the change: none of its "
                f"{executed.executable} executable changed line(s) ran",
            ),
        )
    reasons: list[str] = []
    concerns = list(review)
    status: Status = "verified"
    fixed = [kind_of(t) for t, tr in graded.items() if tr.fail_to_pass]
    short = unchecked_result(fixed)
    if short:
        status = "weak"
        reasons.append(
            f"the tests that go from fail to pass only check that {short}, not that the result "
            "is right"
        )
    if guard is not None:
        named = ", ".join(guard.modules)
        broken = broken_tests(guard.before, guard.after)
        if guard.trouble:
            # A guard run that erred, timed out or was killed shows nothing the change kept.
            concerns.append(
                f"the existing tests of {named} could not be run ({guard.trouble}): nothing "
                "shows the change keeps them passing"
            )
        elif broken:
            reasons.append(
                f"{len(broken)} existing test(s) of {named} pass before this change and fail "
                "with it"
            )
            return Ruling(
                "not_verified", {**graded, **broken}, tuple(reasons), (), short, dict(broken)
            )
        elif removed := removed_tests(guard.before, guard.after):
            concerns.append(
                f"it removes {len(removed)} existing test(s) of {named} that pass before it "
                f"(e.g. {removed[0]}): a removed test cannot fail, so a maintainer must confirm "
                "it should go"
            )
    if harness:
        concerns.insert(
            0,
            f"it touches {len(harness)} file(s) that decide how its tests run "
            f"({', '.join(harness[:5])}{', …' if len(harness) > 5 else ''}): code there runs "
            "inside the test process and can make it report a pass",
        )
    if concerns:
        status = "needs_review"
        reasons.extend(f"the change needs a maintainer's review: {c}" for c in concerns)
    return Ruling(status, graded, tuple(reasons), tuple(concerns), short)
