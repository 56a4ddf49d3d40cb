"""SWT-Bench grading of one prediction and the aggregate rows, on hand-made inputs (no Docker).

Every expected number is worked out by hand in the comments next to it."""

from __future__ import annotations

import math

import pytest

from reprobot.bench.swt.metrics import (
    CoverageDelta,
    Flags,
    InstanceScore,
    added,
    changed_tests,
    context_labels,
    flags,
    own_labels,
    restrict_to,
    table_row,
)
from reprobot.validation.results.success import F2F, F2P, P2F, P2P
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


# --- reports ----------------------------------------------------------------------------------


def test_added_is_per_category_difference() -> None:
    pred = report(f2p={"a", "b"}, p2p={"c"}, p2f={"d"}, f2f={"e"})
    base = report(f2p={"a"}, p2p={"c"}, f2f={"x"})
    assert added(pred, base) == report(f2p={"b"}, p2f={"d"}, f2f={"e"})
    # A category the base report lacks counts as empty there.
    assert added(pred, {F2P: {"a"}}) == report(f2p={"b"}, p2p={"c"}, p2f={"d"}, f2f={"e"})


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
    row = table_row([A, B, C, D]).to_json()
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
    # report.json's keys, in its order.
    assert list(row) == [
        "instances",
        "W",
        "S",
        "F->x",
        "F->P",
        "P->P",
        "dC_all",
        "dC_succeeded",
        "dC_not_succeeded",
    ]


def test_table_row_without_any_executable_line_or_success() -> None:
    row = table_row([D]).to_json()
    assert row["W"] == 100.0
    assert row["P->P"] == 100.0
    assert row["dC_all"] is None
    assert row["dC_succeeded"] is None  # no success at all
    assert row["dC_not_succeeded"] is None  # d has no executable line


def test_table_row_of_nothing() -> None:
    row = table_row([]).to_json()
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
