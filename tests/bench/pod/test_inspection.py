"""Patches opened until the first correct one: random selection (RS-85, RS-95) and the filter's
grades, against hand-computed values (arithmetic in the comments)."""

from __future__ import annotations

import pytest

from reprobot.bench.pod.classification import FilterCall
from reprobot.bench.pod.inspection import (
    IssueEffort,
    expected_first_correct,
    expected_grades_inspections,
    grades_inspections,
    grades_p_found,
    issue_effort,
    p_found_random,
    rs_inspections,
    tally_versus_rs,
)
from tests.bench.pod.samples import effort_sample

# --- random selection -----------------------------------------------------------------------------


def test_random_selection_nine_patches_five_correct() -> None:
    assert p_found_random(9, 5, 1) == pytest.approx(5 / 9)
    # 1 − C(4,2)/C(9,2) = 1 − 6/36 = 0.8333 < 0.85
    assert p_found_random(9, 5, 2) == pytest.approx(1 - 6 / 36)
    # 1 − C(4,3)/C(9,3) = 1 − 4/84 = 0.952 >= 0.95
    assert p_found_random(9, 5, 3) == pytest.approx(1 - 4 / 84)
    assert rs_inspections(9, 5, 0.85) == 3
    assert rs_inspections(9, 5, 0.95) == 3
    assert expected_first_correct(9, 5) == pytest.approx(10 / 6)  # (9+1)/(5+1)


def test_random_selection_one_correct_patch() -> None:
    # One correct of 8: p(k) = 1 − C(7,k)/C(8,k) = 1 − (8−k)/8 = k/8.
    for k in range(9):
        assert p_found_random(8, 1, k) == pytest.approx(k / 8)
    assert rs_inspections(8, 1, 0.85) == 7  # 6/8 = 0.75 < 0.85 <= 7/8 = 0.875
    assert rs_inspections(8, 1, 0.95) == 8  # 7/8 = 0.875 < 0.95 <= 8/8
    assert expected_first_correct(8, 1) == pytest.approx(4.5)  # 9/2


def test_random_selection_exact_at_the_confidence() -> None:
    # One correct of 20: p(k) = k/20 reaches 0.85 exactly at k = 17 and 0.95 exactly at k = 19;
    # "≥" must count the exact hits, whatever the float rounding of 17/20 and 0.85.
    assert rs_inspections(20, 1, 0.85) == 17
    assert rs_inspections(20, 1, 0.95) == 19


def test_random_selection_edge_cases() -> None:
    assert p_found_random(5, 0, 5) == 0.0
    assert p_found_random(5, 2, 0) == 0.0
    assert p_found_random(5, 2, 5) == 1.0
    assert p_found_random(5, 2, 9) == 1.0  # opening more patches than there are
    assert rs_inspections(5, 0, 0.85) is None
    assert expected_first_correct(5, 0) is None
    assert rs_inspections(4, 4, 0.95) == 1
    with pytest.raises(ValueError, match="correct"):
        p_found_random(3, 4, 1)
    with pytest.raises(ValueError, match="confidence"):
        rs_inspections(3, 1, 0.0)


# --- the filter's effort --------------------------------------------------------------------------


def test_filter_effort_correct_patch_accepted() -> None:
    # Accepted 2 (1 correct), rejected 6 (none correct).
    # k=1: 1 − C(1,1)/C(2,1) = 1/2; k=2: 1 − C(1,2)/C(2,2) = 1 − 0 = 1.
    assert grades_p_found([(2, 1), (6, 0)], 1) == pytest.approx(0.5)
    assert grades_p_found([(2, 1), (6, 0)], 2) == 1.0
    assert grades_p_found([(2, 1), (6, 0)], 5) == 1.0
    assert grades_inspections([(2, 1), (6, 0)], 0.85) == 2
    assert grades_inspections([(2, 1), (6, 0)], 0.95) == 2
    assert expected_grades_inspections([(2, 1), (6, 0)]) == pytest.approx(1.5)  # (2+1)/(1+1)


def test_filter_effort_correct_patches_rejected() -> None:
    # Accepted 3 (none correct), rejected 5 (2 correct): the 3 accepted are opened in vain,
    # then p = 1 − C(3,j)/C(5,j) for j rejected ones: j=1 0.4, j=2 0.7, j=3 0.9, j=4 1.
    assert grades_p_found([(3, 0), (5, 2)], 3) == 0.0
    assert grades_p_found([(3, 0), (5, 2)], 4) == pytest.approx(0.4)
    assert grades_p_found([(3, 0), (5, 2)], 6) == pytest.approx(0.9)
    assert grades_inspections([(3, 0), (5, 2)], 0.85) == 6  # 3 + 3
    assert grades_inspections([(3, 0), (5, 2)], 0.95) == 7  # 3 + 4
    assert expected_grades_inspections([(3, 0), (5, 2)]) == pytest.approx(5.0)  # 3 + 6/3


def test_filter_effort_without_correct_patch() -> None:
    assert grades_inspections([(2, 0), (3, 0)], 0.85) is None
    assert expected_grades_inspections([(2, 0), (3, 0)]) is None
    assert grades_p_found([(2, 0), (3, 0)], 5) == 0.0


def test_a_grade_with_no_correct_patch_is_opened_in_vain() -> None:
    # Accepted 1 (none correct), weak 2 (1 correct), the rest 5 (2 correct): after the accepted
    # one, k−1 of the weak: 1/2 at k=2, 1 at k=3.
    grades = [(1, 0), (2, 1), (5, 2)]
    assert grades_p_found(grades, 1) == 0.0
    assert grades_p_found(grades, 2) == pytest.approx(0.5)
    assert grades_p_found(grades, 3) == 1.0
    assert grades_inspections(grades, 0.95) == 3
    assert expected_grades_inspections(grades) == pytest.approx(1 + 3 / 2)
    # Empty grades are skipped; without a correct patch there is nothing to find.
    assert grades_inspections([(0, 0), (4, 1)], 0.5) == 2
    assert expected_grades_inspections([(0, 0), (3, 0)]) is None


def test_opening_weak_verdicts_before_the_rest_beats_accepted_first_alone() -> None:
    # 8 patches, 1 correct; nothing accepted; the correct one is among 2 weak ones.
    calls = [
        FilterCall("s|a", "a", False, True, weak=True),
        FilterCall("s|a", "a", False, False, weak=True),
    ]
    calls += [FilterCall("s|a", "a", False, False)] * 6
    (row,) = issue_effort(calls)
    assert (row.accepted, row.weak, row.weak_correct) == (0, 2, 1)
    assert row.grades() == [(0, 0), (2, 1), (6, 0)]
    assert row.grades(by_grade=False) == [(0, 0), (8, 1)]
    # By grade: both weak ones within 2; RS-95 needs 8 of 8 (k/8 ≥ 0.95).
    assert (row.filter95, row.rs95, row.expected_filter) == (2, 8, 1.5)
    assert row.versus_rs(0.95) == "better"
    assert row.versus_rs(0.95, by_grade=False) == "same"
    assert tally_versus_rs([row], 0.95, by_grade=False)["same"] == 1


def test_issue_effort_groups_by_issue() -> None:
    rows = issue_effort(effort_sample())
    assert [row.issue for row in rows] == ["a", "b", "c"]
    a, b, c = rows
    # a: 8 patches, 1 correct, 3 accepted, none correct. RS: k/8 → 7 (85 %), 8 (95 %).
    # Filter: 3 in vain, then (k−3)/5 over the 5 rejected: ≥ 0.85 needs k−3 ≥ 4.25 → k = 8,
    # ≥ 0.95 needs k−3 ≥ 4.75 → k = 8. Expected: random 9/2, filter 3 + 6/2 = 6.
    assert a == IssueEffort(
        issue="a",
        patches=8,
        correct=1,
        accepted=3,
        accepted_correct=0,
        rs85=7,
        rs95=8,
        filter85=8,
        filter95=8,
        expected_random=4.5,
        expected_filter=6.0,
    )
    assert a.versus_rs(0.85) == "worse"
    assert a.versus_rs(0.95) == "same"
    # b: 9 patches, 5 correct, 3 accepted (2 correct). RS-85 = RS-95 = 3 (see above).
    # Filter: k=1: 1 − C(1,1)/C(3,1) = 2/3; k=2: 1 − C(1,2)/C(3,2) = 1 → 2 at both levels.
    # Expected: random 10/6, filter (3+1)/(2+1) = 4/3.
    assert (b.patches, b.correct, b.accepted, b.accepted_correct) == (9, 5, 3, 2)
    assert (b.rejected, b.rejected_correct) == (6, 3)
    assert (b.rs85, b.rs95, b.filter85, b.filter95) == (3, 3, 2, 2)
    assert b.expected_random == pytest.approx(10 / 6)
    assert b.expected_filter == pytest.approx(4 / 3)
    assert b.versus_rs(0.85) == "better"
    assert b.versus_rs(0.95) == "better"
    # c: no correct patch, nothing to find.
    assert (c.rs85, c.rs95, c.filter85, c.filter95) == (None, None, None, None)
    assert c.expected_random is None
    assert c.expected_filter is None
    assert c.versus_rs(0.95) == "n/a"
    assert tally_versus_rs(rows, 0.95) == {"better": 1, "same": 1, "worse": 0, "n/a": 1}
    assert tally_versus_rs(rows, 0.85) == {"better": 1, "same": 0, "worse": 1, "n/a": 1}
