"""The confusion matrix of a fix filter and its metrics, against hand-computed values (arithmetic
in the comments)."""

from __future__ import annotations

import math

import pytest

from reprobot.bench.pod.classification import METRIC_NAMES, Confusion, confusion
from tests.bench.pod.samples import filter_calls


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


def test_confusion_counts_filter_calls() -> None:
    made = filter_calls(
        "s|i", "i", [(True, True), (True, True), (True, False), (False, False), (False, True)]
    )
    assert confusion(made) == Confusion(tp=2, fp=1, tn=1, fn=1)
    assert confusion([]) == Confusion(0, 0, 0, 0)
