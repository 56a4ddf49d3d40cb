"""The weighted-probability classifier (WPC), the baseline a fix filter's metrics are read
against (``classification``).

- **Weighted-probability classifier (WPC)**: labels every patch right with probability p,
  independently. With P correct and N incorrect patches its expected confusion is TP = p·P,
  FN = (1−p)·P, TN = p·N, FP = (1−p)·N. A filter whose metric value v is first reached at p on
  the grid 0.50, 0.51, …, 1.00 is "as good as a classifier that is right with probability p".
  Note that the WPC's MCC is (2p−1)·√(PN/(PN + p(1−p)(P−N)²)): it equals 2p−1 only when P = N
  (or p ∈ {0, 1/2, 1}), so the equivalent p of a given MCC depends on the class balance.
"""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.bench.pod.classification import METRIC_NAMES, Confusion

# The WPC's p grid, 0.50 ... 1.00; built from integers so that 0.57 is the float nearest 0.57 and
# not the sum of 7 float steps.
WPC_GRID: tuple[float, ...] = tuple(round(i / 100, 2) for i in range(50, 101))


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
