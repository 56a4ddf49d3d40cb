"""Fix-filter metrics and baselines against hand-computed values (arithmetic in the comments)."""

from __future__ import annotations

import math
import random
from pathlib import Path

import numpy as np
import pytest

from reprobot.bench.pod.metrics import (
    METRIC_NAMES,
    WPC_GRID,
    Confusion,
    FilterCall,
    IssueEffort,
    cluster_bootstrap,
    cluster_bootstrap_samples,
    confusion,
    expected_first_correct,
    expected_grades_inspections,
    grades_inspections,
    grades_p_found,
    issue_effort,
    p_found_random,
    quantile,
    rs_inspections,
    tally_versus_rs,
    wpc_confusion,
    wpc_envelope,
    wpc_equivalent_p,
)
from reprobot.bench.pod.plots import plot_effort_table, plot_wpc_envelope

PNG_MAGIC = b"\x89PNG"


def _judgements(cluster: str, issue: str, pairs: list[tuple[bool, bool]]) -> list[FilterCall]:
    """Judgements from (predicted, actual) pairs."""
    return [FilterCall(cluster, issue, predicted, actual) for predicted, actual in pairs]


# --- confusion matrix ---------------------------------------------------------------------------


def test_metrics_of_a_plain_confusion() -> None:
    c = Confusion(tp=3, fp=1, tn=4, fn=2)
    assert c.total == 10
    m = c.metrics()
    assert set(m) == set(METRIC_NAMES)
    assert m["accuracy"] == pytest.approx(0.7)  # (3+4)/10
    assert m["precision"] == pytest.approx(0.75)  # 3/(3+1)
    assert m["recall"] == pytest.approx(0.6)  # 3/(3+2)
    assert m["negative_recall"] == pytest.approx(0.8)  # 4/(4+1)
    assert m["balanced_accuracy"] == pytest.approx(0.7)  # (0.6+0.8)/2
    assert m["f1"] == pytest.approx(2 / 3)  # 2·0.75·0.6/1.35 = 0.9/1.35
    # (3·4 − 1·2)/√((3+1)(3+2)(4+1)(4+2)) = 10/√600 = 0.408248...
    assert m["mcc"] == pytest.approx(10 / math.sqrt(600))
    assert m["mcc"] == pytest.approx(0.40825, abs=1e-5)


def test_perfect_filter_with_zero_off_diagonal_cells() -> None:
    # fp = fn = 0 become 1e-12: MCC = (6 − 1e-24)/((2+1e-12)(3+1e-12)) = 1 − O(1e-12).
    m = Confusion(tp=2, fp=0, tn=3, fn=0).metrics()
    assert m["mcc"] == pytest.approx(1.0, abs=1e-9)
    assert m["accuracy"] == pytest.approx(1.0, abs=1e-9)
    assert m["f1"] == pytest.approx(1.0, abs=1e-9)


def test_empty_column_gives_mcc_about_zero() -> None:
    # A filter that accepts everything: the predicted-negative column (tn, fn) is empty.
    # ε = 1e-12: MCC = (5ε − 3ε)/√((5+3)(5+ε)(ε+3)(2ε)) ≈ 2ε/√(240ε) = 2e-12/1.549e-5 ≈ 1.3e-7.
    assert Confusion(tp=5, fp=3, tn=0, fn=0).mcc == pytest.approx(0.0, abs=1e-6)
    # A filter that accepts nothing: precision = ε/(ε+ε) = 1/2 by the zero rule, not an error.
    nothing = Confusion(tp=0, fp=0, tn=3, fn=2)
    assert nothing.mcc == pytest.approx(0.0, abs=1e-6)
    assert nothing.precision == pytest.approx(0.5)
    assert nothing.recall == pytest.approx(0.0, abs=1e-9)


def test_single_nonzero_cell_gives_mcc_one_half() -> None:
    # Only TPs: every other cell is ε, so MCC = (5ε − ε²)/((5+ε)(5+ε)(2ε)(2ε))^½
    # = (5ε − ε²)/((5+ε)·2ε) → 5/10 = 1/2. No exception, but not 0 either.
    assert Confusion(tp=5, fp=0, tn=0, fn=0).mcc == pytest.approx(0.5, abs=1e-9)
    # Only FNs: (ε² − 5ε)/((ε+5)·2ε) → −1/2.
    assert Confusion(tp=0, fp=0, tn=0, fn=5).mcc == pytest.approx(-0.5, abs=1e-9)


def test_all_zero_confusion_is_defined() -> None:
    # Every cell ε: accuracy 2ε/4ε = 1/2, MCC (ε² − ε²)/... = 0.
    m = Confusion(0, 0, 0, 0).metrics()
    assert m["accuracy"] == pytest.approx(0.5)
    assert m["mcc"] == 0.0


def test_negative_cell_is_rejected() -> None:
    with pytest.raises(ValueError, match="tp"):
        Confusion(tp=-1, fp=0, tn=0, fn=0)


def test_confusion_counts_judgements() -> None:
    judgements = _judgements(
        "s|i", "i", [(True, True), (True, True), (True, False), (False, False), (False, True)]
    )
    assert confusion(judgements) == Confusion(tp=2, fp=1, tn=1, fn=1)
    assert confusion([]) == Confusion(0, 0, 0, 0)


# --- random selection ---------------------------------------------------------------------------


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


# --- the filter's effort ------------------------------------------------------------------------


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


def _effort_sample() -> list[FilterCall]:
    b_issue = [(True, True), (True, True), (True, False)]  # accepted 3, 2 correct
    b_issue += [(False, True)] * 3 + [(False, False)] * 3  # rejected 6, 3 correct
    a_issue = [(True, False)] * 3 + [(False, True)] + [(False, False)] * 4  # 8 patches, 1 correct
    c_issue = [(True, False), (False, False)]  # no correct patch
    # Issues listed out of order, split over two systems each, to check grouping and sorting.
    return (
        _judgements("sys1|b", "b", b_issue[:4])
        + _judgements("sys1|c", "c", c_issue)
        + _judgements("sys1|a", "a", a_issue[:5])
        + _judgements("sys2|b", "b", b_issue[4:])
        + _judgements("sys2|a", "a", a_issue[5:])
    )


def test_issue_effort_groups_by_issue() -> None:
    rows = issue_effort(_effort_sample())
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


# --- weighted-probability classifier ------------------------------------------------------------


def test_wpc_confusion_cells() -> None:
    # p = 0.8, P = 27, N = 51: tp = 0.8·27, fn = 0.2·27, tn = 0.8·51, fp = 0.2·51.
    c = wpc_confusion(0.8, 27, 51)
    assert c.tp == pytest.approx(21.6)
    assert c.fn == pytest.approx(5.4)
    assert c.tn == pytest.approx(40.8)
    assert c.fp == pytest.approx(10.2)


@pytest.mark.parametrize(("positives", "negatives"), [(27, 51), (30, 30), (5, 90)])
def test_wpc_mcc_extremes(positives: int, negatives: int) -> None:
    # p = 1: fp = fn = 0 (→ ε), a perfect classifier. p = 1/2: tp·tn − fp·fn = PN/4 − PN/4 = 0.
    assert wpc_confusion(1.0, positives, negatives).mcc == pytest.approx(1.0, abs=1e-9)
    assert wpc_confusion(0.5, positives, negatives).mcc == pytest.approx(0.0, abs=1e-9)


@pytest.mark.parametrize(("positives", "negatives"), [(27, 51), (30, 30), (5, 90)])
def test_wpc_mcc_closed_form(positives: int, negatives: int) -> None:
    # tp·tn − fp·fn = p²PN − (1−p)²PN = (2p−1)PN; the margins are tp+fn = P, tn+fp = N,
    # tp+fp = pP + (1−p)N, tn+fn = pN + (1−p)P, whose product is PN + p(1−p)(P−N)². So
    # MCC = (2p−1)·√(PN/(PN + p(1−p)(P−N)²)), which is 2p−1 only when P = N.
    p_, n_ = positives, negatives
    for p in (0.55, 0.7, 0.8, 0.93):
        expected = (2 * p - 1) * math.sqrt(p_ * n_ / (p_ * n_ + p * (1 - p) * (p_ - n_) ** 2))
        assert wpc_confusion(p, p_, n_).mcc == pytest.approx(expected)
        if p_ == n_:
            assert wpc_confusion(p, p_, n_).mcc == pytest.approx(2 * p - 1)
        else:
            assert wpc_confusion(p, p_, n_).mcc < 2 * p - 1


def test_wpc_equivalent_p() -> None:
    # P = 27, N = 51: PN = 1377, (P−N)² = 576.
    # p = 0.80: 0.6·√(1377/(1377 + 0.16·576)) = 0.6·√(1377/1469.16) = 0.6·0.96813 = 0.58088 < 0.6
    # p = 0.81: 0.62·√(1377/(1377 + 0.1539·576)) = 0.62·√(1377/1465.65) = 0.62·0.96929 = 0.60096
    assert wpc_confusion(0.80, 27, 51).mcc == pytest.approx(0.58088, abs=1e-5)
    assert wpc_confusion(0.81, 27, 51).mcc == pytest.approx(0.60096, abs=1e-5)
    assert wpc_equivalent_p(0.6, "mcc", 27, 51) == 0.81
    # Balanced classes: MCC = 2p − 1, so 0.6 is reached at p = 0.80 exactly (up to rounding).
    assert wpc_equivalent_p(0.6, "mcc", 30, 30) == 0.80
    # Accuracy of the WPC is p whatever P and N: (pP + pN)/(P + N).
    assert wpc_equivalent_p(0.73, "accuracy", 27, 51) == 0.73
    # An MCC at or below the coin flip's 0 is reached at the bottom of the grid.
    assert wpc_equivalent_p(-0.1, "mcc", 27, 51) == 0.5
    assert wpc_equivalent_p(1.01, "mcc", 27, 51) is None
    with pytest.raises(ValueError, match="unknown metric"):
        wpc_equivalent_p(0.5, "auc", 27, 51)


def test_wpc_envelope_grid() -> None:
    envelope = wpc_envelope(27, 51)
    ps = [p for p, _ in envelope]
    assert len(ps) == 51
    assert ps == list(WPC_GRID)
    assert ps[0] == 0.5
    assert ps[-1] == 1.0
    assert ps[7] == 0.57  # exactly the float literal, no accumulated drift
    assert all(set(metrics) == set(METRIC_NAMES) for _, metrics in envelope)
    assert wpc_envelope(27, 51, ps=[0.6])[0][1] == wpc_confusion(0.6, 27, 51).metrics()


# --- cluster bootstrap --------------------------------------------------------------------------


def _bootstrap_sample() -> list[FilterCall]:
    rng = random.Random(42)
    judgements: list[FilterCall] = []
    for system in range(4):
        for issue in range(8):
            name = f"issue-{issue}"
            for _ in range(rng.randint(1, 4)):
                actual = rng.random() < 0.4
                # A filter that is right about 75 % of the time.
                predicted = actual if rng.random() < 0.75 else not actual
                judgements.append(FilterCall(f"sys{system}|{name}", name, predicted, actual))
    return judgements


def test_quantile_matches_numpy_linear() -> None:
    values = [0.3, 0.1, 0.9, 0.5, 0.7, 0.2]
    for q in (0.0, 0.025, 0.25, 0.5, 0.975, 1.0):
        assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)))
    # Sorted 0.1 0.2 0.3 0.5 0.7 0.9; h = 5·0.5 = 2.5 → 0.3 + 0.5·(0.5 − 0.3) = 0.4.
    assert quantile(values, 0.5) == pytest.approx(0.4)


def test_bootstrap_is_deterministic_and_order_free() -> None:
    sample = _bootstrap_sample()
    first = cluster_bootstrap(sample, resamples=300, seed=7)
    assert cluster_bootstrap(sample, resamples=300, seed=7) == first
    shuffled = list(sample)
    random.Random(1).shuffle(shuffled)
    assert cluster_bootstrap(shuffled, resamples=300, seed=7) == first
    assert cluster_bootstrap(sample, resamples=300, seed=8) != first


def test_bootstrap_interval_contains_point_estimate() -> None:
    sample = _bootstrap_sample()
    point = confusion(sample).metrics()
    intervals = cluster_bootstrap(sample, resamples=1000, level=0.95, seed=0)
    assert set(intervals) == set(METRIC_NAMES)
    for name, (lower, upper) in intervals.items():
        assert lower < point[name] < upper, name


def test_bootstrap_of_a_perfect_filter() -> None:
    sample = _judgements("s1|i1", "i1", [(True, True), (False, False)])
    sample += _judgements("s2|i2", "i2", [(True, True), (True, True), (False, False)])
    lower, upper = cluster_bootstrap(sample, resamples=200)["accuracy"]
    # Only fp = fn = 0 → ε, so accuracy is 1 − O(1e-13), not exactly 1.
    assert lower == pytest.approx(1.0, abs=1e-9)
    assert upper == pytest.approx(1.0, abs=1e-9)


def test_bootstrap_resamples_clusters_not_judgements() -> None:
    # Two internally homogeneous clusters: "good" right on all 3 patches, "bad" wrong on all 3.
    # Drawing 2 clusters gives good+good (accuracy 1), good+bad (1/2) or bad+bad (0). Resampling
    # the 6 judgements one by one would give accuracies k/6 for k = 0..6 instead.
    sample = _judgements("good|i", "i", [(True, True), (False, False), (True, True)])
    sample += _judgements("bad|j", "j", [(True, False), (False, True), (True, False)])
    accuracies = cluster_bootstrap_samples(sample, resamples=500, seed=3)["accuracy"]
    assert len(accuracies) == 500
    assert {round(a, 9) for a in accuracies} == {0.0, 0.5, 1.0}


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="no judgements"):
        cluster_bootstrap([])
    with pytest.raises(ValueError, match="level"):
        cluster_bootstrap(_bootstrap_sample(), level=1.0)


# --- plots --------------------------------------------------------------------------------------


def test_plot_wpc_envelope_writes_png(tmp_path: Path) -> None:
    sample = _bootstrap_sample()
    positives = sum(j.actual for j in sample)
    envelope = wpc_envelope(positives, len(sample) - positives)
    ours = confusion(sample).metrics()
    intervals = cluster_bootstrap(sample, resamples=100)
    path = plot_wpc_envelope(envelope, ours, intervals, tmp_path / "figs" / "wpc.png")
    assert path == tmp_path / "figs" / "wpc.png"
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_plot_effort_table_writes_png(tmp_path: Path) -> None:
    rows = issue_effort(_effort_sample())
    path = plot_effort_table(rows, tmp_path / "effort.png")
    assert path.stat().st_size > 0
    assert path.read_bytes().startswith(PNG_MAGIC)
    empty = plot_effort_table([], tmp_path / "empty.png")
    assert empty.read_bytes().startswith(PNG_MAGIC)
