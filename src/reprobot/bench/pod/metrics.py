"""Metrics and baselines for judging a fix filter, after Williams et al.'s patch-overfitting study.

A *fix filter* reads candidate bug-fix patches and calls each one correct (accepted) or incorrect
(rejected). Following Williams et al., "Unveiling Practical Shortcomings of Patch Overfitting
Detection Techniques", it is judged as a binary classifier and against two baselines. Everything
here is a pure function of the judgements; nothing reads or writes files.

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
- **Cluster bootstrap**: judgements are grouped into clusters (producing system × issue); each
  resample draws as many clusters as there are, uniformly with replacement, and pools their
  judgements. The interval at level L is the percentile interval of the resampled values, with
  bounds at the (1−L)/2 and 1−(1−L)/2 quantiles, each by linear interpolation between order
  statistics (numpy's default ``"linear"`` method; see ``quantile``).
- **Random selection (RS)**: a maintainer opens the n candidate patches of one issue in a
  uniformly random order, without replacement. With c correct patches, the probability that one
  of the first k is correct is 1 − C(n−c, k)/C(n, k). RS-85 (RS-95) is the smallest k with that
  probability ≥ 0.85 (0.95); it is undefined when c = 0. The expected number of patches opened
  up to and including the first correct one is (n+1)/(c+1).
- **Filter effort**: the maintainer opens the patches grade by grade, each grade in random
  order: the accepted (verified) ones first, then the rejected ones whose tests went F→P but
  only show the crash or the wrong value gone (weak), then the rest. The filter's 85 % (95 %)
  effort is the smallest k for which a correct patch is among the first k opened with
  probability ≥ 0.85 (0.95). Its expected effort is o + (n_j+1)/(c_j+1), where grade j is the
  first with c_j > 0 correct patches of its n_j and o counts the patches of the grades before
  it. Fewer inspections than RS at the same confidence is "better". With two grades (accepted,
  then every rejected patch) this is the study's accepted-first order.
- **Weighted-probability classifier (WPC)**: labels every patch right with probability p,
  independently. With P correct and N incorrect patches its expected confusion is TP = p·P,
  FN = (1−p)·P, TN = p·N, FP = (1−p)·N. A filter whose metric value v is first reached at p on
  the grid 0.50, 0.51, …, 1.00 is "as good as a classifier that is right with probability p".
  Note that the WPC's MCC is (2p−1)·√(PN/(PN + p(1−p)(P−N)²)): it equals 2p−1 only when P = N
  (or p ∈ {0, 1/2, 1}), so the equivalent p of a given MCC depends on the class balance.
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace
from fractions import Fraction

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

# The WPC's p grid, 0.50 ... 1.00; built from integers so that 0.57 is the float nearest 0.57 and
# not the sum of 7 float steps.
WPC_GRID: tuple[float, ...] = tuple(round(i / 100, 2) for i in range(50, 101))

# --- confusion matrix ---------------------------------------------------------------------------


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
        """The number of judgements (the sum of the raw cells, without the zero replacement)."""
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


def _confusion_of(judgement: FilterCall) -> Confusion:
    return Confusion(
        tp=float(judgement.predicted and judgement.actual),
        fp=float(judgement.predicted and not judgement.actual),
        tn=float(not judgement.predicted and not judgement.actual),
        fn=float(not judgement.predicted and judgement.actual),
    )


def confusion(judgements: Iterable[FilterCall]) -> Confusion:
    """The confusion matrix of the judgements (all zero when there are none)."""
    total = Confusion(0.0, 0.0, 0.0, 0.0)
    for judgement in judgements:
        total += _confusion_of(judgement)
    return total


# --- cluster bootstrap --------------------------------------------------------------------------


def quantile(values: Sequence[float], q: float) -> float:
    """The q-quantile of the values by linear interpolation between order statistics: with the
    values sorted as x[0] <= ... <= x[m-1] and h = (m-1)·q, it is
    x[⌊h⌋] + (h − ⌊h⌋)·(x[⌊h⌋+1] − x[⌊h⌋]). Same as numpy's default ``"linear"`` method."""
    if not values:
        raise ValueError("quantile of no values")
    if not 0 <= q <= 1:
        raise ValueError(f"quantile level must be in [0, 1], got {q!r}")
    ordered = sorted(values)
    h = (len(ordered) - 1) * q
    below = math.floor(h)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (h - below) * (ordered[above] - ordered[below])


def cluster_bootstrap_samples(
    judgements: Sequence[FilterCall], resamples: int = 1000, seed: int = 0
) -> dict[str, list[float]]:
    """The metric values of ``resamples`` cluster-bootstrap resamples, keyed by metric name, in
    resample order. Deterministic for a given seed and set of judgements (the input order does
    not matter)."""
    if not judgements:
        raise ValueError("cluster bootstrap of no judgements")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    by_cluster: dict[str, Confusion] = defaultdict(lambda: Confusion(0.0, 0.0, 0.0, 0.0))
    for judgement in judgements:
        by_cluster[judgement.cluster] += _confusion_of(judgement)
    # Sorted so that the draws depend on the seed and the clusters, not on the input order.
    clusters = [by_cluster[name] for name in sorted(by_cluster)]
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in METRIC_NAMES}
    for _ in range(resamples):
        # Pooling the drawn clusters' judgements is summing their confusion matrices.
        pooled = Confusion(0.0, 0.0, 0.0, 0.0)
        for drawn in rng.choices(clusters, k=len(clusters)):
            pooled += drawn
        for name, value in pooled.metrics().items():
            samples[name].append(value)
    return samples


def cluster_bootstrap(
    judgements: Sequence[FilterCall], resamples: int = 1000, level: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """The percentile interval (lower, upper) of every metric at the given level, from a cluster
    bootstrap (see the module docstring; quantiles as in ``quantile``)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    tail = (1 - level) / 2
    samples = cluster_bootstrap_samples(judgements, resamples=resamples, seed=seed)
    return {
        name: (quantile(values, tail), quantile(values, 1 - tail))
        for name, values in samples.items()
    }


# --- random selection and the filter's effort ---------------------------------------------------


def _check_counts(n: int, correct: int) -> None:
    if n < 0 or not 0 <= correct <= n:
        raise ValueError(f"need 0 <= correct <= n, got n={n!r}, correct={correct!r}")


def _check_confidence(confidence: float) -> None:
    if not 0 < confidence <= 1:
        raise ValueError(f"confidence must be in (0, 1], got {confidence!r}")


def _reaches(probability: Fraction, confidence: float) -> bool:
    # Exact comparison with the confidence read as the decimal it is written as (0.95 is 19/20),
    # so that a probability of exactly 0.95 (e.g. 19 of 20 patches opened) counts as reaching it.
    return probability >= Fraction(repr(confidence))


def _p_found_exact(n: int, correct: int, k: int) -> Fraction:
    _check_counts(n, correct)
    if k < 0:
        raise ValueError(f"k must be >= 0, got {k!r}")
    if correct == 0:
        return Fraction(0)
    k = min(k, n)
    return 1 - Fraction(math.comb(n - correct, k), math.comb(n, k))


def p_found_random(n: int, correct: int, k: int) -> float:
    """Probability that at least one of the first k of n patches, opened in a uniformly random
    order, is one of the ``correct`` correct ones: 1 − C(n−correct, k)/C(n, k). It is 0 when
    correct = 0 and 1 when k >= n and correct > 0."""
    return float(_p_found_exact(n, correct, k))


def rs_inspections(n: int, correct: int, confidence: float) -> int | None:
    """The smallest k in 1..n with ``p_found_random(n, correct, k) >= confidence`` (RS-85 at
    0.85, RS-95 at 0.95); None when there is no correct patch to find."""
    _check_counts(n, correct)
    _check_confidence(confidence)
    if correct == 0:
        return None
    return next(k for k in range(1, n + 1) if _reaches(_p_found_exact(n, correct, k), confidence))


def expected_first_correct(n: int, correct: int) -> float | None:
    """Expected number of patches opened, in uniformly random order, up to and including the
    first correct one: (n+1)/(correct+1); None when there is no correct patch."""
    _check_counts(n, correct)
    if correct == 0:
        return None
    return (n + 1) / (correct + 1)


# A grade of patches a maintainer opens together: (patches, correct ones among them).
Grade = tuple[int, int]


def _grades_p_found_exact(grades: Sequence[Grade], k: int) -> Fraction:
    opened = 0
    for n, correct in grades:
        _check_counts(n, correct)
        if k <= opened + n:
            # Every grade before this one was opened in vain (one with a correct patch returned).
            return _p_found_exact(n, correct, max(k - opened, 0))
        if correct > 0:
            return Fraction(1)
        opened += n
    return Fraction(0)


def grades_p_found(grades: Sequence[Grade], k: int) -> float:
    """Probability that a correct patch is among the first k opened when the grades are opened
    in order, the patches of each in uniformly random order."""
    return float(_grades_p_found_exact(grades, k))


def grades_inspections(grades: Sequence[Grade], confidence: float) -> int | None:
    """The smallest k with ``grades_p_found(grades, k) >= confidence``; None when no patch is
    correct."""
    _check_confidence(confidence)
    for n, correct in grades:
        _check_counts(n, correct)
    if not any(correct for _, correct in grades):
        return None
    total = sum(n for n, _ in grades)
    return next(
        k for k in range(1, total + 1) if _reaches(_grades_p_found_exact(grades, k), confidence)
    )


def expected_grades_inspections(grades: Sequence[Grade]) -> float | None:
    """Expected number of patches opened, grade by grade, up to and including the first correct
    one; None when no patch is correct."""
    opened = 0
    for n, correct in grades:
        _check_counts(n, correct)
        if correct > 0:
            return opened + (n + 1) / (correct + 1)
        opened += n
    return None


@dataclass(frozen=True)
class IssueEffort:
    """How many patches of one issue a maintainer opens to find a correct one, with and without
    the filter; the filter's figures open its grades in order (see ``grades``)."""

    issue: str
    patches: int
    correct: int
    accepted: int
    accepted_correct: int
    rs85: int | None
    rs95: int | None
    filter85: int | None
    filter95: int | None
    expected_random: float | None
    expected_filter: float | None
    # Rejected patches whose tests went F->P but only show the crash or the wrong value gone.
    weak: int = 0
    weak_correct: int = 0

    @property
    def rejected(self) -> int:
        return self.patches - self.accepted

    @property
    def rejected_correct(self) -> int:
        return self.correct - self.accepted_correct

    def grades(self, by_grade: bool = True) -> list[Grade]:
        """Accepted, weak, the rest; or (``by_grade`` False) accepted, then every rejected one."""
        if not by_grade:
            return [(self.accepted, self.accepted_correct), (self.rejected, self.rejected_correct)]
        return [
            (self.accepted, self.accepted_correct),
            (self.weak, self.weak_correct),
            (self.rejected - self.weak, self.rejected_correct - self.weak_correct),
        ]

    def versus_rs(self, confidence: float = 0.95, by_grade: bool = True) -> str:
        """How the filter compares with RS at this confidence: "better" when it needs fewer
        inspections to find a correct patch, "same" when as many, "worse" when more, "n/a" when
        no patch of the issue is correct."""
        ours = grades_inspections(self.grades(by_grade), confidence)
        theirs = rs_inspections(self.patches, self.correct, confidence)
        if ours is None or theirs is None:
            return "n/a"
        if ours < theirs:
            return "better"
        return "same" if ours == theirs else "worse"


def issue_effort(judgements: Sequence[FilterCall]) -> list[IssueEffort]:
    """One ``IssueEffort`` per issue (one judgement per candidate patch), sorted by issue id."""
    by_issue: dict[str, list[FilterCall]] = defaultdict(list)
    for judgement in judgements:
        by_issue[judgement.issue].append(judgement)
    rows = []
    for issue in sorted(by_issue):
        group = by_issue[issue]
        n = len(group)
        correct = sum(j.actual for j in group)
        accepted = sum(j.predicted for j in group)
        accepted_correct = sum(j.predicted and j.actual for j in group)
        weak = [j for j in group if j.weak and not j.predicted]
        row = IssueEffort(
            issue=issue,
            patches=n,
            correct=correct,
            accepted=accepted,
            accepted_correct=accepted_correct,
            rs85=rs_inspections(n, correct, 0.85),
            rs95=rs_inspections(n, correct, 0.95),
            filter85=None,
            filter95=None,
            expected_random=expected_first_correct(n, correct),
            expected_filter=None,
            weak=len(weak),
            weak_correct=sum(j.actual for j in weak),
        )
        grades = row.grades()
        rows.append(
            replace(
                row,
                filter85=grades_inspections(grades, 0.85),
                filter95=grades_inspections(grades, 0.95),
                expected_filter=expected_grades_inspections(grades),
            )
        )
    return rows


def tally_versus_rs(
    rows: Iterable[IssueEffort], confidence: float = 0.95, by_grade: bool = True
) -> dict[str, int]:
    """How many issues the filter does better / the same / worse than RS on (and "n/a")."""
    tally = {"better": 0, "same": 0, "worse": 0, "n/a": 0}
    for row in rows:
        tally[row.versus_rs(confidence, by_grade)] += 1
    return tally


# --- weighted-probability classifier ------------------------------------------------------------


def wpc_confusion(p: float, positives: float, negatives: float) -> Confusion:
    """Expected confusion of a classifier that labels each patch right with probability p."""
    if not 0 <= p <= 1:
        raise ValueError(f"p must be in [0, 1], got {p!r}")
    return Confusion(
        tp=p * positives, fp=(1 - p) * negatives, tn=p * negatives, fn=(1 - p) * positives
    )


def wpc_envelope(
    positives: float, negatives: float, ps: Sequence[float] | None = None
) -> list[tuple[float, dict[str, float]]]:
    """(p, metrics of the WPC at p) for every p of ``ps`` (default ``WPC_GRID``), in order."""
    grid = WPC_GRID if ps is None else ps
    return [(p, wpc_confusion(p, positives, negatives).metrics()) for p in grid]


def wpc_equivalent_p(
    value: float, metric: str, positives: float, negatives: float, tolerance: float = 1e-9
) -> float | None:
    """The smallest p of ``WPC_GRID`` at which the WPC's ``metric`` is >= value − tolerance;
    None when even p = 1 does not reach it. The tolerance keeps a value that equals the WPC's at
    some p (up to rounding) from being pushed to the next grid point."""
    if metric not in METRIC_NAMES:
        raise ValueError(f"unknown metric {metric!r}; expected one of {METRIC_NAMES}")
    for p, metrics in wpc_envelope(positives, negatives):
        if metrics[metric] >= value - tolerance:
            return p
    return None
