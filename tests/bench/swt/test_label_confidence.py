"""The ``reproduced`` label at each confidence threshold, from stored drafting results and the
golden fixes' grades: precision (F→P among the labelled) and S, with and without "probably"."""

from __future__ import annotations

from reprobot.bench.run.executor import Done, Failed
from reprobot.bench.swt.drafting import DraftCandidate, Drafting, DraftResult
from reprobot.bench.swt.label_confidence import label_markdown, threshold_rows
from reprobot.bench.swt.metrics import CoverageDelta, Flags, InstanceScore

PATCH = "diff --git a/tests/test_x.py b/tests/test_x.py\n"


def drafted(key: str, reason: str, kind: str, methods: tuple[str, ...] = ()) -> Done[DraftResult]:
    chosen = {
        "method": "issue-code",
        "outcome": "reproduces",
        "reason": reason,
        "oracle": {"kind": kind},
        "test_patch": PATCH,
    }
    more = [{**chosen, "method": m, "test_patch": m} for m in methods]
    candidates = tuple(DraftCandidate.from_json(c) for c in [chosen, *more])
    return Done(DraftResult(key, PATCH, True, "issue-code", ("t",), "", candidates))


def graded(key: str, f2p: bool, excluded: bool = False) -> InstanceScore:
    # Applied, failing on R; F->P (and so successful here) when the golden fix turns it green.
    return InstanceScore(key, Flags(True, f2p, True, f2p, False), CoverageDelta(0, 0), excluded)


def test_each_threshold_counts_the_labelled_and_how_many_are_right() -> None:
    drafting: Drafting = {
        # 5: the exception, a checked result, a second reading.
        "a": drafted("a", "fails with the issue's ValueError", "expected", ("issue-session",)),
        # 4: the exception, the crash gone.
        "b": drafted("b", "fails with the issue's ValueError", "crash"),
        # 1: words of the issue only; this one is wrong (not F->P under the golden fix).
        "c": drafted("c", "its assertion about what the issue describes fails", "weak"),
        "d": Done(DraftResult("d")),  # nothing reproduced
        "e": Failed("e", "drafting crashed"),
        "f": drafted("f", "fails with the issue's ValueError", "crash"),  # excluded
    }
    scores = [
        graded("a", True),
        graded("b", True),
        graded("c", False),
        graded("d", False),
        graded("e", False),
        graded("f", True, excluded=True),
    ]
    rows = {r.threshold: r.to_json() for r in threshold_rows(drafting, scores)}

    assert rows[1] == {
        "threshold": 1,
        "labelled": 3,
        "fail_to_pass": 2,
        "precision": 2 / 3,
        "S_label": 2 / 5,
        "S_with_probably": 2 / 5,
    }
    assert (rows[4]["labelled"], rows[4]["precision"], rows[4]["S_label"]) == (2, 1.0, 2 / 5)
    assert (rows[5]["labelled"], rows[5]["precision"], rows[5]["S_label"]) == (1, 1.0, 1 / 5)
    # "Probably" keeps what the label gives up.
    assert rows[5]["S_with_probably"] == 2 / 5

    table = label_markdown(threshold_rows(drafting, scores), chosen=4)
    assert "| 4 (App) | 2 | 2 | 100.0 | 40.0 | 40.0 |" in table
    assert "| 1 | 3 | 2 | 66.7 | 40.0 | 40.0 |" in table
