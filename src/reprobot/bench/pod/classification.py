"""A fix filter judged as a binary classifier, after Williams et al.'s patch-overfitting study.

A *fix filter* reads candidate bug-fix patches and calls each one correct (accepted) or incorrect
(rejected). Following Williams et al., "Unveiling Practical Shortcomings of Patch Overfitting
Detection Techniques", it is judged as a binary classifier (here) and against two baselines:
random selection (``inspection``) and the weighted-probability classifier (``wpc``); its metrics
get cluster-bootstrap intervals (``bootstrap``). Everything in these modules is a pure function of
the filter calls; nothing reads or writes files.

Definitions (these are what the report cites):

- **Positive class**: the patch is correct. TP = correct patch accepted, FP = incorrect patch
  accepted, TN = incorrect patch rejected, FN = correct patch rejected. Cells are floats because
  baseline classifiers give expected counts.
- **Zero cells**: before any metric is computed, every cell that is 0 is replaced by 1e-12
  (``EPSILON``), so no metric divides by zero. Consequences: a ratio whose cells are all zero is
  1/2 (e.g. the precision of a filter that accepts nothing); the MCC is about 0 (of the order
  of √1e-12) when one row or column of the matrix is empty, but ±1/2 when a single cell is
  non-zero (+1/2 on the diagonal, e.g. only TPs; −1/2 off it).
- **Metrics**: accuracy = (TP+TN)/total; precision = TP/(TP+FP); recall = TP/(TP+FN);
  negative recall = TN/(TN+FP); balanced accuracy = (recall + negative recall)/2;
  F1 = 2·TP/(2·TP+FP+FN) (the harmonic mean of precision and recall);
  MCC = (TP·TN − FP·FN)/√((TP+FP)(TP+FN)(TN+FP)(TN+FN)).
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

# What a zero cell of a confusion matrix becomes before any metric is computed.
EPSILON = 1e-12

METRIC_NAMES: tuple[str, ...] = (
    "accuracy",
    "balanced_accuracy",
    "precision",
    "recall",
    "negative_recall",
    "f1",
    "mcc",
)


@dataclass(frozen=True)
class Confusion:
    """A confusion matrix whose positive class is "the patch is correct"; cells may be expected
    (fractional) counts."""

    tp: float
    fp: float
    tn: float
    fn: float

    def __post_init__(self) -> None:
        for name in ("tp", "fp", "tn", "fn"):
            value = getattr(self, name)
            if not math.isfinite(value) or value < 0:
                raise ValueError(f"confusion cell {name} must be finite and >= 0, got {value!r}")

    def __add__(self, other: Confusion) -> Confusion:
        return Confusion(
            self.tp + other.tp, self.fp + other.fp, self.tn + other.tn, self.fn + other.fn
        )

    def _cells(self) -> tuple[float, float, float, float]:
        """(tp, fp, tn, fn) with every zero replaced by ``EPSILON``; every metric reads these, so
        none can divide by zero."""
        tp, fp, tn, fn = (c if c != 0 else EPSILON for c in (self.tp, self.fp, self.tn, self.fn))
        return tp, fp, tn, fn

    @property
    def total(self) -> float:
        """The number of filter calls (the sum of the raw cells, without the zero replacement)."""
        return self.tp + self.fp + self.tn + self.fn

    @property
    def accuracy(self) -> float:
        tp, fp, tn, fn = self._cells()
        return (tp + tn) / (tp + fp + tn + fn)

    @property
    def precision(self) -> float:
        tp, fp, _, _ = self._cells()
        return tp / (tp + fp)

    @property
    def recall(self) -> float:
        """Recall of the positive class: TP/(TP+FN)."""
        tp, _, _, fn = self._cells()
        return tp / (tp + fn)

    @property
    def negative_recall(self) -> float:
        """Recall of the negative class (specificity): TN/(TN+FP)."""
        _, fp, tn, _ = self._cells()
        return tn / (tn + fp)

    @property
    def balanced_accuracy(self) -> float:
        """Mean of positive recall and negative recall."""
        return (self.recall + self.negative_recall) / 2

    @property
    def f1(self) -> float:
        # 2·TP/(2·TP+FP+FN) is the harmonic mean of precision and recall without the extra
        # divisions.
        tp, fp, _, fn = self._cells()
        return 2 * tp / (2 * tp + fp + fn)

    @property
    def mcc(self) -> float:
        tp, fp, tn, fn = self._cells()
        return (tp * tn - fp * fn) / math.sqrt((tp + fp) * (tp + fn) * (tn + fp) * (tn + fn))

    def metrics(self) -> dict[str, float]:
        """Every metric, keyed by the names in ``METRIC_NAMES``."""
        return {name: float(getattr(self, name)) for name in METRIC_NAMES}


@dataclass(frozen=True)
class FilterCall:
    """The filter's call on one candidate patch, next to the label."""

    cluster: str  # producing system × issue, e.g. "SWE-agent/cost_2_1|psf__requests-3362"
    issue: str
    predicted: bool  # the filter says the patch is correct
    actual: bool  # the label says the patch is correct
    # Rejected, but its tests went F->P and only show the crash or the wrong value gone.
    weak: bool = False


def confusion_of(filter_call: FilterCall) -> Confusion:
    """The confusion matrix of one filter call: one cell is 1, the others 0."""
    return Confusion(
        tp=float(filter_call.predicted and filter_call.actual),
        fp=float(filter_call.predicted and not filter_call.actual),
        tn=float(not filter_call.predicted and not filter_call.actual),
        fn=float(not filter_call.predicted and filter_call.actual),
    )


def confusion(filter_calls: Iterable[FilterCall]) -> Confusion:
    """The confusion matrix of the filter calls (all zero when there are none)."""
    total = Confusion(0.0, 0.0, 0.0, 0.0)
    for filter_call in filter_calls:
        total += confusion_of(filter_call)
    return total
