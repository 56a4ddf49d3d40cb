"""S, the one definition of success: categories of a pair of runs in both readings, and the rule
itself, on hand-made inputs (Reprobot's verdicts use it through ``is_success``)."""

from __future__ import annotations

import pytest

from reprobot.validation.results.success import (
    F2F,
    F2P,
    P2F,
    P2P,
    OutcomeReading,
    categorise,
    state,
    succeeds,
)
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.results.verdict import is_success, transitions

P, F, E, S, M = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.MISSING
XF, XP = Outcome.XFAILED, Outcome.XPASSED


def report(
    f2p: set[str] | None = None,
    p2p: set[str] | None = None,
    p2f: set[str] | None = None,
    f2f: set[str] | None = None,
) -> dict[str, set[str]]:
    """A categorised report with the four categories (empty unless given)."""
    return {F2P: f2p or set(), P2P: p2p or set(), P2F: p2f or set(), F2F: f2f or set()}


# --- statuses and reports -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [(P, "P"), (F, "F"), (E, None), (S, None), (M, None), (None, None)],
)
def test_the_harness_reading_has_three_states(outcome: Outcome | None, status: str | None) -> None:
    assert state(outcome, OutcomeReading.HARNESS) == status


def test_categorise_sorts_every_pair_into_the_four_buckets() -> None:
    pre = {
        "f_p": F,
        "e_p": E,
        "s_p": S,  # skipped counts as x
        "p_p": P,
        "p_f": P,
        "p_e": P,
        "p_s": P,
        "p_absent": P,
        "f_f": F,
        "e_m": E,
        "f_s": F,
        "s_s": S,
        "s_m": S,
    }
    post = {
        "f_p": P,
        "absent_p": P,  # x -> P: absent before
        "e_p": P,
        "s_p": P,
        "p_p": P,
        "p_f": F,
        "p_e": E,
        "p_s": S,
        "f_f": F,
        "e_m": M,
        "f_s": S,
        "absent_f": F,
        "s_s": S,
        "absent_s": S,
    }
    out = categorise(pre, post, OutcomeReading.HARNESS)
    assert out == {
        # F or x before, P after.
        F2P: {"f_p", "absent_p", "e_p", "s_p"},
        P2P: {"p_p"},
        # P before, F or x after (an error, a skip, or the test vanishing).
        P2F: {"p_f", "p_e", "p_s", "p_absent"},
        # Everything else that does not pass after: F->F, x->x, F->x, x->F; a test skipped or
        # absent on both sides ("s_s", "s_m", "absent_s") is in none, as the harness never
        # names a skipped test.
        F2F: {"f_f", "e_m", "f_s", "absent_f"},
    }


def test_categorise_of_empty_runs_has_four_empty_buckets() -> None:
    assert categorise({}, {}) == report()


@pytest.mark.parametrize(("outcome", "harness", "reprobot"), [(XF, "P", None), (XP, "P", None)])
def test_the_readings_differ_only_in_expected_failures(
    outcome: Outcome, harness: str, reprobot: str | None
) -> None:
    assert state(outcome, OutcomeReading.HARNESS) == harness
    assert state(outcome, OutcomeReading.REPROBOT) == reprobot
    for other in (P, F, E, S, M, None):
        assert state(other, OutcomeReading.HARNESS) == state(other, OutcomeReading.REPROBOT)


# --- S --------------------------------------------------------------------------------------


def test_succeeds_with_a_new_fail_to_pass_test() -> None:
    assert succeeds(report(f2p={"new"}), report())


def test_succeeds_keeps_the_base_fail_to_pass_tests_and_adds_one() -> None:
    # Pred F->P {a, b} strictly includes base F->P {a}.
    assert succeeds(report(f2p={"a", "b"}), report(f2p={"a"}))


def test_fails_when_the_prediction_only_repeats_the_base_fail_to_pass() -> None:
    # An existing test is already F->P in the base run; the prediction adds nothing to it.
    assert not succeeds(report(f2p={"a"}, p2p={"kept"}), report(f2p={"a"}, p2p={"kept"}))


def test_fails_when_a_base_fail_to_pass_test_is_lost() -> None:
    # {b} is not a superset of {a, c}: more tests, but not all of the base's.
    assert not succeeds(report(f2p={"a", "b"}), report(f2p={"a", "c"}))


def test_fails_with_a_new_fail_to_fail_test() -> None:
    assert not succeeds(report(f2p={"new"}, f2f={"still_fails"}), report())


def test_fails_with_a_new_pass_to_fail_test() -> None:
    assert not succeeds(report(f2p={"new"}, p2f={"broken"}), report())


def test_succeeds_despite_fail_to_fail_tests_the_base_already_has() -> None:
    # F->F {old} and P->F {flaky} are in the base report too, so they are not new.
    pred = report(f2p={"new"}, f2f={"old"}, p2f={"flaky"})
    assert succeeds(pred, report(f2f={"old"}, p2f={"flaky"}))


def test_a_verdict_is_s_against_an_empty_base() -> None:
    """``is_success`` is ``succeeds`` of the verdict's own tests, read as Reprobot reads them:
    an expected failure after the fix is not a pass, and a test that failed before and is skipped
    after is a test still not passing."""
    assert is_success(transitions({"a": F}, {"a": P}))
    assert not is_success(transitions({"a": F}, {"a": XF}))
    assert not is_success(transitions({"a": F}, {"a": XP}))
    assert not is_success(transitions({"a": F, "b": F}, {"a": P, "b": S}))
    for before, after in [({"a": F}, {"a": P}), ({"a": F, "b": P}, {"a": P, "b": F})]:
        graded = transitions(before, after)
        assert is_success(graded) == succeeds(categorise(before, after))


def test_a_module_that_collects_on_one_side_only_is_counted_by_its_tests() -> None:
    """Before the fix the new test module cannot import what the fix adds (its file's id
    errors); after it, its tests pass: they go F->P, and the file's id is no test of its own."""
    pre = {"tests/test_new.py": E}
    post = {"tests/test_new.py::test_a": P, "tests/test_new.py::test_b": P}
    assert categorise(pre, post) == report(
        f2p={"tests/test_new.py::test_a", "tests/test_new.py::test_b"}
    )
    assert succeeds(categorise(pre, post, OutcomeReading.HARNESS))
    # A module whose tests never ran anywhere still counts by its id: it errors on both sides.
    assert categorise({"tests/test_x.py": E}, {"tests/test_x.py": E}) == report(
        f2f={"tests/test_x.py"}
    )
