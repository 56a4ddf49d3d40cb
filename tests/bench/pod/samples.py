"""Filter calls shared by the fix-filter tests: hand-made ones, and random ones from a seed."""

from __future__ import annotations

import random

from reprobot.bench.pod.classification import FilterCall


def filter_calls(cluster: str, issue: str, pairs: list[tuple[bool, bool]]) -> list[FilterCall]:
    """Filter calls from (predicted, actual) pairs."""
    return [FilterCall(cluster, issue, predicted, actual) for predicted, actual in pairs]


def effort_sample() -> list[FilterCall]:
    b_issue = [(True, True), (True, True), (True, False)]  # accepted 3, 2 correct
    b_issue += [(False, True)] * 3 + [(False, False)] * 3  # rejected 6, 3 correct
    a_issue = [(True, False)] * 3 + [(False, True)] + [(False, False)] * 4  # 8 patches, 1 correct
    c_issue = [(True, False), (False, False)]  # no correct patch
    # Issues listed out of order, split over two systems each, to check grouping and sorting.
    return (
        filter_calls("sys1|b", "b", b_issue[:4])
        + filter_calls("sys1|c", "c", c_issue)
        + filter_calls("sys1|a", "a", a_issue[:5])
        + filter_calls("sys2|b", "b", b_issue[4:])
        + filter_calls("sys2|a", "a", a_issue[5:])
    )


def bootstrap_sample() -> list[FilterCall]:
    rng = random.Random(42)
    filter_calls: list[FilterCall] = []
    for system in range(4):
        for issue in range(8):
            name = f"issue-{issue}"
            for _ in range(rng.randint(1, 4)):
                actual = rng.random() < 0.4
                # A filter that is right about 75 % of the time.
                predicted = actual if rng.random() < 0.75 else not actual
                filter_calls.append(FilterCall(f"sys{system}|{name}", name, predicted, actual))
    return filter_calls
