"""SWT-Bench grading of one prediction and the aggregate rows, on hand-made inputs (no Docker).

Every expected number is worked out by hand in the comments next to it."""

from __future__ import annotations

import math

import pytest

from reprobot.bench.swt_metrics import (
    F2F,
    F2P,
    P2F,
    P2P,
    CoverageDelta,
    Flags,
    InstanceScore,
    added,
    changed_tests,
    classify,
    context_labels,
    flags,
    harness_status,
    own_labels,
    resolved,
    restrict_to,
    table_row,
)
from reprobot.validation.results.testrun import FileCoverage, Outcome

P, F, E, S, M = Outcome.PASSED, Outcome.FAILED, Outcome.ERROR, Outcome.SKIPPED, Outcome.MISSING


def report(
    f2p: set[str] | None = None,
    p2p: set[str] | None = None,
    p2f: set[str] | None = None,
    f2f: set[str] | None = None,
) -> dict[str, set[str]]:
    """A classified report with the four categories (empty unless given)."""
    return {F2P: f2p or set(), P2P: p2p or set(), P2F: p2f or set(), F2F: f2f or set()}


# --- statuses and reports -----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("outcome", "status"),
    [(P, "P"), (F, "F"), (E, None), (S, None), (M, None), (None, None)],
)
def test_harness_status_has_three_states(outcome: Outcome | None, status: str | None) -> None:
    assert harness_status(outcome) == status


def test_classify_sorts_every_pair_into_the_four_buckets() -> None:
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
    out = classify(pre, post)
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


def test_classify_of_empty_runs_has_four_empty_buckets() -> None:
    assert classify({}, {}) == report()


def test_added_is_per_category_difference() -> None:
    pred = report(f2p={"a", "b"}, p2p={"c"}, p2f={"d"}, f2f={"e"})
    base = report(f2p={"a"}, p2p={"c"}, f2f={"x"})
    assert added(pred, base) == report(f2p={"b"}, p2f={"d"}, f2f={"e"})
    # A category the base report lacks counts as empty there.
    assert added(pred, {F2P: {"a"}}) == report(f2p={"b"}, p2p={"c"}, p2f={"d"}, f2f={"e"})


# --- S (resolved) -------------------------------------------------------------------------------


def test_resolved_with_a_new_fail_to_pass_test() -> None:
    assert resolved(report(f2p={"new"}), report())


def test_resolved_keeps_the_base_fail_to_pass_tests_and_adds_one() -> None:
    # Pred F->P {a, b} strictly includes base F->P {a}.
    assert resolved(report(f2p={"a", "b"}), report(f2p={"a"}))


def test_not_resolved_when_the_prediction_only_repeats_the_base_fail_to_pass() -> None:
    # An existing test is already F->P in the base run; the prediction adds nothing to it.
    assert not resolved(report(f2p={"a"}, p2p={"kept"}), report(f2p={"a"}, p2p={"kept"}))


def test_not_resolved_when_a_base_fail_to_pass_test_is_lost() -> None:
    # {b} is not a superset of {a, c}: more tests, but not all of the base's.
    assert not resolved(report(f2p={"a", "b"}), report(f2p={"a", "c"}))


def test_not_resolved_with_a_new_fail_to_fail_test() -> None:
    assert not resolved(report(f2p={"new"}, f2f={"still_fails"}), report())


def test_not_resolved_with_a_new_pass_to_fail_test() -> None:
    assert not resolved(report(f2p={"new"}, p2f={"broken"}), report())


def test_resolved_despite_fail_to_fail_tests_the_base_already_has() -> None:
    # F->F {old} and P->F {flaky} are in the base report too, so they are not new.
    pred = report(f2p={"new"}, f2f={"old"}, p2f={"flaky"})
    assert resolved(pred, report(f2f={"old"}, p2f={"flaky"}))


# --- flags --------------------------------------------------------------------------------------


def test_flags_of_a_prediction_that_does_not_apply_are_all_false() -> None:
    # The reports would make a success; not applying overrides them.
    assert flags(False, report(f2p={"new"}), report()) == Flags(False, False, False, False, False)


def test_flags_of_a_success() -> None:
    got = flags(True, report(f2p={"new"}, p2p={"other"}), report())
    # pass_only is False: an added test is F->P.
    assert got == Flags(
        applied=True, success=True, fail_any=True, fail_to_pass=True, pass_only=False
    )


def test_flags_of_an_added_fail_to_fail_test() -> None:
    got = flags(True, report(f2f={"new"}), report())
    assert got == Flags(
        applied=True, success=False, fail_any=True, fail_to_pass=False, pass_only=False
    )


def test_pass_only_when_every_added_test_passes_on_both_sides() -> None:
    base = report(p2p={"old"}, f2f={"old_broken"})
    # The base's own F->F test is not added, so it does not spoil pass_only.
    got = flags(True, report(p2p={"old", "new"}, f2f={"old_broken"}), base)
    assert got == Flags(
        applied=True, success=False, fail_any=False, fail_to_pass=False, pass_only=True
    )


@pytest.mark.parametrize(
    "pred",
    [
        report(p2p={"new"}, f2p={"also"}),
        report(p2p={"new"}, f2f={"also"}),
        report(p2p={"new"}, p2f={"also"}),
        report(p2p={"old"}),  # adds no test at all
    ],
)
def test_not_pass_only(pred: dict[str, set[str]]) -> None:
    assert not flags(True, pred, report(p2p={"old"})).pass_only


# --- context labels -----------------------------------------------------------------------------


def test_context_labels_collects_every_file() -> None:
    run = {
        "a.py": FileCoverage(
            frozenset({1, 2}), frozenset({1, 2}), {1: frozenset({"t::x"}), 2: frozenset({"t::y"})}
        ),
        "b.py": FileCoverage(frozenset({1}), frozenset({1}), {1: frozenset({"t::z", "t::x"})}),
        "c.py": FileCoverage(frozenset({1}), frozenset({1})),  # ran outside any test
    }
    assert context_labels(run) == frozenset({"t::x", "t::y", "t::z"})
    assert context_labels(None) == frozenset()
    assert context_labels({}) == frozenset()


def test_restrict_to_keeps_the_lines_the_labels_ran_and_their_files_import_time() -> None:
    run = {
        "a.py": FileCoverage(
            statements=frozenset({1, 2, 3, 4}),
            # Line 4 ran outside any test function (at import): it counts, since the labels
            # ran lines of this file.
            executed=frozenset({1, 2, 3, 4}),
            contexts={1: frozenset({"own"}), 2: frozenset({"own", "other"}), 3: frozenset({"x"})},
        ),
        "b.py": FileCoverage(frozenset({7}), frozenset({7}), {7: frozenset({"other"})}),
        # Imported, but none of the labels ran a line of it: its import is not theirs.
        "c.py": FileCoverage(frozenset({1, 2}), frozenset({1, 2}), {2: frozenset({"other"})}),
    }
    got = restrict_to(run, frozenset({"own"}))
    assert got == {
        "a.py": FileCoverage(statements=frozenset({1, 2, 3, 4}), executed=frozenset({1, 2, 4})),
        # A file none of the labels ran stays, with nothing executed.
        "b.py": FileCoverage(statements=frozenset({7}), executed=frozenset()),
        "c.py": FileCoverage(statements=frozenset({1, 2}), executed=frozenset()),
    }
    assert restrict_to(None, frozenset({"own"})) == {}
    assert restrict_to(run, frozenset())["a.py"].executed == frozenset()


def test_a_module_level_edit_attributes_every_test_of_the_module() -> None:
    old = (
        "CASES = [1, 2]\n\n\ndef test_a():\n    pass\n\n\n"
        "class TestB:\n    def test_c(self):\n        pass\n"
    )
    data = old.replace("[1, 2]", "[1, 2, 3]")
    assert changed_tests(old, data) == frozenset({"test_a", "TestB.test_c"})
    # Only one function changed: only it.
    one = old.replace("def test_a():\n    pass", "def test_a():\n    assert 1")
    assert changed_tests(old, one) == frozenset({"test_a"})
    # A comment or blank line is no edit.
    assert changed_tests(old, "# note\n" + old) == frozenset()


# --- aggregates ---------------------------------------------------------------------------------


def score(
    instance_id: str, fl: Flags, executable: int, covered: int, **counts: int
) -> InstanceScore:
    return InstanceScore(instance_id, fl, CoverageDelta(executable, covered), counts=counts)


# a: success, ΔC 3/4 = 0.75.
A = score("a", Flags(True, True, True, True, False), 4, 3)
# b: applies, adds an F->F test only, ΔC 1/2 = 0.5.
B = score("b", Flags(True, False, True, False, False), 2, 1)
# c: does not apply; the golden fix has 5 executable lines, none covered: ΔC 0.
C = score("c", Flags(False, False, False, False, False), 5, 0)
# d: applies, adds passing tests only; the golden fix has no executable line: no ΔC.
D = score("d", Flags(True, False, False, False, True), 0, 0)


def test_table_row_by_hand() -> None:
    row = table_row([A, B, C, D])
    assert row["instances"] == 4
    assert row["W"] == 75.0  # a, b, d apply: 3/4
    assert row["S"] == 25.0  # a: 1/4
    assert row["F->x"] == 50.0  # a, b: 2/4
    assert row["F->P"] == 25.0  # a: 1/4
    assert row["P->P"] == 25.0  # d: 1/4
    # ΔC over a, b, c (d has no executable line): (75 + 50 + 0) / 3.
    assert math.isclose(row["dC_all"], 125 / 3)
    assert row["dC_succeeded"] == 75.0  # a alone
    # b and c (d left out): (50 + 0) / 2.
    assert row["dC_not_succeeded"] == 25.0
    assert set(row) == {
        "instances",
        "W",
        "S",
        "F->x",
        "F->P",
        "P->P",
        "dC_all",
        "dC_succeeded",
        "dC_not_succeeded",
    }


def test_table_row_without_any_executable_line_or_success() -> None:
    row = table_row([D])
    assert row["W"] == 100.0
    assert row["P->P"] == 100.0
    assert row["dC_all"] is None
    assert row["dC_succeeded"] is None  # no success at all
    assert row["dC_not_succeeded"] is None  # d has no executable line


def test_table_row_of_nothing() -> None:
    row = table_row([])
    assert row["instances"] == 0
    assert all(row[k] is None for k in row if k != "instances")


def test_instance_score_row() -> None:
    s = InstanceScore(
        "acme__w-1",
        Flags(True, True, True, True, False),
        CoverageDelta(4, 3, ("m.py:+2",)),
        counts={"pred_F->P": 2, "base_F->F": 1},
    )
    row = s.row()
    assert list(row) == [
        "instance_id",
        "excluded",
        "W",
        "S",
        "F->x",
        "F->P",
        "P->P",
        "dC",
        "executable_lines",
        "covered_lines",
        "n_base_F->F",  # counts, sorted by name
        "n_pred_F->P",
        "error",
    ]
    assert row == {
        "instance_id": "acme__w-1",
        "excluded": False,
        "W": True,
        "S": True,
        "F->x": True,
        "F->P": True,
        "P->P": False,
        "dC": 0.75,
        "executable_lines": 4,
        "covered_lines": 3,
        "n_base_F->F": 1,
        "n_pred_F->P": 2,
        "error": "",
    }


def test_instance_score_row_of_an_excluded_instance_with_an_error() -> None:
    s = InstanceScore("x", Flags(False, False, False, False, False), CoverageDelta(0, 0))
    s = InstanceScore(s.instance_id, s.flags, s.delta, excluded=True, error="SandboxError: boom")
    row = s.row()
    assert row["excluded"] is True
    assert row["dC"] is None
    assert row["error"] == "SandboxError: boom"
    assert not any(k.startswith("n_") for k in row)


# --- tests a prediction adds or edits ------------------------------------------------------------

OLD_TESTS = """\
def test_kept():
    assert 1


class TestThing:
    def test_edited(self):
        assert f(1) == 1
"""
NEW_TESTS = """\
def test_kept():
    assert 1


class TestThing:
    def test_edited(self):
        assert f(1) == 1
        assert f(2) == 2

    def test_added(self):
        assert f(3) == 3
"""


def test_changed_tests_lists_added_and_edited_functions_only() -> None:
    assert changed_tests(OLD_TESTS, NEW_TESTS) == {"TestThing.test_edited", "TestThing.test_added"}
    # A new module: every function is the prediction's.
    assert changed_tests(None, OLD_TESTS) == {"test_kept", "TestThing.test_edited"}
    # Reformatting that keeps the syntax tree is not an edit.
    assert changed_tests(OLD_TESTS, OLD_TESTS.replace("assert 1", "assert (1)")) == frozenset()
    assert changed_tests(OLD_TESTS, "def broken(:\n") == frozenset()


def test_own_labels_are_new_labels_and_labels_of_edited_functions() -> None:
    pred = frozenset(
        {"tests.test_mod.test_kept", "tests.test_mod.TestThing.test_edited", "test_new.test_x"}
    )
    base = frozenset({"tests.test_mod.test_kept", "tests.test_mod.TestThing.test_edited"})
    changed = {"tests/test_mod.py": frozenset({"TestThing.test_edited"})}
    assert own_labels(pred, base, changed) == {
        "tests.test_mod.TestThing.test_edited",
        "test_new.test_x",
    }
    # Same function name in another module is not the edited one.
    other = frozenset({"tests.test_other.TestThing.test_edited"})
    assert own_labels(other, other, changed) == frozenset()
