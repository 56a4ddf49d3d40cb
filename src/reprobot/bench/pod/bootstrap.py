"""Cluster-bootstrap intervals of a fix filter's metrics (``classification``).

- **Cluster bootstrap**: filter calls are grouped into clusters (producing system × issue); each
  resample draws as many clusters as there are, uniformly with replacement, and pools their
  filter calls. The interval at level L is the percentile interval of the resampled values, with
  bounds at the (1−L)/2 and 1−(1−L)/2 quantiles, each by linear interpolation between order
  statistics (numpy's default ``"linear"`` method; see ``quantile``).
"""

from __future__ import annotations

import math
import random
from collections import defaultdict
from collections.abc import Sequence

from reprobot.bench.pod.classification import METRIC_NAMES, Confusion, FilterCall, confusion_of


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
    filter_calls: Sequence[FilterCall], resamples: int = 1000, seed: int = 0
) -> dict[str, list[float]]:
    """The metric values of ``resamples`` cluster-bootstrap resamples, keyed by metric name, in
    resample order. Deterministic for a given seed and set of filter calls (the input order does
    not matter)."""
    if not filter_calls:
        raise ValueError("cluster bootstrap of no filter calls")
    if resamples < 1:
        raise ValueError(f"resamples must be >= 1, got {resamples!r}")
    by_cluster: dict[str, Confusion] = defaultdict(lambda: Confusion(0.0, 0.0, 0.0, 0.0))
    for filter_call in filter_calls:
        by_cluster[filter_call.cluster] += confusion_of(filter_call)
    # Sorted so that the draws depend on the seed and the clusters, not on the input order.
    clusters = [by_cluster[name] for name in sorted(by_cluster)]
    rng = random.Random(seed)
    samples: dict[str, list[float]] = {name: [] for name in METRIC_NAMES}
    for _ in range(resamples):
        # Pooling the drawn clusters' filter calls is summing their confusion matrices.
        pooled = Confusion(0.0, 0.0, 0.0, 0.0)
        for drawn in rng.choices(clusters, k=len(clusters)):
            pooled += drawn
        for name, value in pooled.metrics().items():
            samples[name].append(value)
    return samples


def cluster_bootstrap(
    filter_calls: Sequence[FilterCall], resamples: int = 1000, level: float = 0.95, seed: int = 0
) -> dict[str, tuple[float, float]]:
    """The percentile interval (lower, upper) of every metric at the given level, from a cluster
    bootstrap (see the module docstring; quantiles as in ``quantile``)."""
    if not 0 < level < 1:
        raise ValueError(f"level must be in (0, 1), got {level!r}")
    tail = (1 - level) / 2
    samples = cluster_bootstrap_samples(filter_calls, resamples=resamples, seed=seed)
    return {
        name: (quantile(values, tail), quantile(values, 1 - tail))
        for name, values in samples.items()
    }
