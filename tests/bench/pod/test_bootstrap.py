"""Cluster-bootstrap intervals: quantiles as numpy's, deterministic, resampling clusters."""

from __future__ import annotations

import random

import numpy as np
import pytest

from reprobot.bench.pod.bootstrap import cluster_bootstrap, cluster_bootstrap_samples, quantile
from reprobot.bench.pod.classification import METRIC_NAMES, confusion
from tests.bench.pod.samples import bootstrap_sample, filter_calls


def test_quantile_matches_numpy_linear() -> None:
    values = [0.3, 0.1, 0.9, 0.5, 0.7, 0.2]
    for q in (0.0, 0.025, 0.25, 0.5, 0.975, 1.0):
        assert quantile(values, q) == pytest.approx(float(np.quantile(values, q)))
    # Sorted 0.1 0.2 0.3 0.5 0.7 0.9; h = 5·0.5 = 2.5 → 0.3 + 0.5·(0.5 − 0.3) = 0.4.
    assert quantile(values, 0.5) == pytest.approx(0.4)


def test_bootstrap_is_deterministic_and_order_free() -> None:
    sample = bootstrap_sample()
    first = cluster_bootstrap(sample, resamples=300, seed=7)
    assert cluster_bootstrap(sample, resamples=300, seed=7) == first
    shuffled = list(sample)
    random.Random(1).shuffle(shuffled)
    assert cluster_bootstrap(shuffled, resamples=300, seed=7) == first
    assert cluster_bootstrap(sample, resamples=300, seed=8) != first


def test_bootstrap_interval_contains_point_estimate() -> None:
    sample = bootstrap_sample()
    point = confusion(sample).metrics()
    intervals = cluster_bootstrap(sample, resamples=1000, level=0.95, seed=0)
    assert set(intervals) == set(METRIC_NAMES)
    for name, (lower, upper) in intervals.items():
        assert lower < point[name] < upper, name


def test_bootstrap_of_a_perfect_filter() -> None:
    sample = filter_calls("s1|i1", "i1", [(True, True), (False, False)])
    sample += filter_calls("s2|i2", "i2", [(True, True), (True, True), (False, False)])
    lower, upper = cluster_bootstrap(sample, resamples=200)["accuracy"]
    # Only fp = fn = 0 → ε, so accuracy is 1 − O(1e-13), not exactly 1.
    assert lower == pytest.approx(1.0, abs=1e-9)
    assert upper == pytest.approx(1.0, abs=1e-9)


def test_bootstrap_resamples_clusters_not_filter_calls() -> None:
    # Two internally homogeneous clusters: "good" right on all 3 patches, "bad" wrong on all 3.
    # Drawing 2 clusters gives good+good (accuracy 1), good+bad (1/2) or bad+bad (0). Resampling
    # the 6 filter calls one by one would give accuracies k/6 for k = 0..6 instead.
    sample = filter_calls("good|i", "i", [(True, True), (False, False), (True, True)])
    sample += filter_calls("bad|j", "j", [(True, False), (False, True), (True, False)])
    accuracies = cluster_bootstrap_samples(sample, resamples=500, seed=3)["accuracy"]
    assert len(accuracies) == 500
    assert {round(a, 9) for a in accuracies} == {0.0, 0.5, 1.0}


def test_bootstrap_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="no filter calls"):
        cluster_bootstrap([])
    with pytest.raises(ValueError, match="level"):
        cluster_bootstrap(bootstrap_sample(), level=1.0)
