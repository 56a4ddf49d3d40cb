"""The weighted-probability classifier baseline, against hand-computed values."""

from __future__ import annotations

import math

import pytest

from reprobot.bench.pod.classification import METRIC_NAMES
from reprobot.bench.pod.wpc import WPC_GRID, wpc_confusion, wpc_envelope, wpc_equivalent_p


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
