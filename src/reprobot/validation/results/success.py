"""Success (SWT-Bench's S): the one definition, for Reprobot's verdicts and for the benchmark.

The tests of a pair of runs (before the fix, after it) sort into four categories. A test's
state on one side is P (passed), F (failed) or x (errored, absent, skipped, or, for Reprobot,
marked as an expected failure):

- F→P: F or x before, P after; P→P: P on both sides;
- P→F: P before, anything but P after; F→F: everything else that does not pass after;
- a test skipped or absent on both sides is in no category (the harness's log parsers never name
  a skipped test), nor is a module's own id when it failed to collect on one side and its tests
  ran on the other (a golden test module importing a name only the fix adds): its tests are.

**S**: the F→P tests strictly include the base's, and there is no P→F and no F→F test beyond
the base's. In the benchmark the base is the project's existing tests of the prediction's files
run without it; in a verdict the base is empty (the drafted tests are all there is), so S is "at
least one test goes F→P and every other test passes after the fix".

The two readings differ only in xfail and xpass: SWT-Bench's harness reads pytest's XFAIL as a
pass (as SWE-bench's log parser does) and an XPASS as its console shows it, and the paper's
figures count them so; Reprobot never counts a test marked as an expected failure as a pass
(library code that calls ``pytest.xfail()`` for the failing input would otherwise fix
anything).
"""

from __future__ import annotations

from collections.abc import Mapping
from enum import Enum

from reprobot.validation.results.testrun import Outcome

F2P, P2P, P2F, F2F = "F->P", "P->P", "P->F", "F->F"
Categories = dict[str, set[str]]


class OutcomeReading(Enum):
    """How an outcome reads as P, F or x."""

    REPROBOT = "reprobot"
    HARNESS = "harness"


_UNSEEN = (None, Outcome.SKIPPED, Outcome.MISSING)


def state(outcome: Outcome | None, reading: OutcomeReading = OutcomeReading.REPROBOT) -> str | None:
    """``"P"``, ``"F"`` or None (x) for one side of one test."""
    if outcome is Outcome.PASSED:
        return "P"
    if outcome in (Outcome.XFAILED, Outcome.XPASSED):
        return "P" if reading is OutcomeReading.HARNESS else None
    if outcome is Outcome.FAILED:
        return "F"
    return None


def categorise(
    pre: Mapping[str, Outcome],
    post: Mapping[str, Outcome],
    reading: OutcomeReading = OutcomeReading.REPROBOT,
) -> Categories:
    """Sort the tests of a pre/post pair of runs into F->P, P->P, P->F and F->F."""
    out: Categories = {F2P: set(), P2P: set(), P2F: set(), F2F: set()}
    ids = set(pre) | set(post)
    # A module that failed to collect on one side is reported by its file's id; where its tests
    # ran on the other side, they are what went from one side to the other, not the file.
    with_tests = {t.split("::", 1)[0] for t in ids if "::" in t}
    for test in ids:
        if pre.get(test) in _UNSEEN and post.get(test) in _UNSEEN:
            continue
        if "::" not in test and test in with_tests:
            continue
        before, after = state(pre.get(test), reading), state(post.get(test), reading)
        if after == "P":
            out[P2P if before == "P" else F2P].add(test)
        elif before == "P":
            out[P2F].add(test)
        else:
            out[F2F].add(test)
    return out


def succeeds(tests: Mapping[str, set[str]], base: Mapping[str, set[str]] | None = None) -> bool:
    """S: more F->P tests than ``base`` (and all of its), no P->F or F->F test it lacks."""
    base = base or {}
    f2p, base_f2p = set(tests.get(F2P, ())), set(base.get(F2P, ()))
    new_failures = (set(tests.get(k, ())) - set(base.get(k, ())) for k in (P2F, F2F))
    return f2p > base_f2p and not any(new_failures)
