"""The ``reproduced`` label at each confidence threshold: how often it is right, and what it
costs in success.

An instance is labelled at threshold ``t`` when its drafted test reproduces the issue with a
confidence score (``generation.pool.confidence``) of ``t`` or more; below it the App says the
test probably reproduces the issue. Precision is the share of labelled instances whose test goes
from fail to pass under the golden fix (F→P); S of the label is the share of all instances that
are labelled and succeed; S with "probably" counts every reproduction, whatever its score.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from reprobot.bench.run.executor import Done
from reprobot.bench.swt.drafting import Drafting
from reprobot.bench.swt.metrics import InstanceScore
from reprobot.generation import MAX_CONFIDENCE, confidence_of_records


@dataclass(frozen=True)
class ThresholdRow:
    threshold: int
    labelled: int
    fail_to_pass: int
    labelled_success: int
    instances: int
    reproduced_success: int

    @property
    def precision(self) -> float | None:
        return self.fail_to_pass / self.labelled if self.labelled else None

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a row of report.json's ``label_confidence``.
        return {
            "threshold": self.threshold,
            "labelled": self.labelled,
            "fail_to_pass": self.fail_to_pass,
            "precision": self.precision,
            "S_label": self.labelled_success / self.instances if self.instances else None,
            "S_with_probably": (
                self.reproduced_success / self.instances if self.instances else None
            ),
        }


def scores_of(drafting: Drafting) -> dict[str, int]:
    """Each drafted instance's confidence score (0: nothing reproduced, or drafting failed)."""
    out: dict[str, int] = {}
    for key, entry in drafting.items():
        record = entry.record if isinstance(entry, Done) else None
        out[key] = (
            confidence_of_records(
                record.method, record.model_patch, [c.to_json() for c in record.candidates]
            ).score
            if record is not None and record.reproduced
            else 0
        )
    return out


def threshold_rows(drafting: Drafting, scores: Sequence[InstanceScore]) -> list[ThresholdRow]:
    """One row per threshold from 1 to the highest score, over the graded instances not
    excluded."""
    graded = {s.instance_id: s for s in scores if not s.excluded}
    confidence = scores_of(drafting)
    keys = list(graded)
    rows = []
    for threshold in range(1, MAX_CONFIDENCE + 1):
        labelled = [k for k in keys if confidence.get(k, 0) >= threshold]
        rows.append(
            ThresholdRow(
                threshold=threshold,
                labelled=len(labelled),
                fail_to_pass=sum(graded[k].flags.fail_to_pass for k in labelled),
                labelled_success=sum(graded[k].flags.success for k in labelled),
                instances=len(keys),
                reproduced_success=sum(
                    graded[k].flags.success for k in keys if confidence.get(k, 0) > 0
                ),
            )
        )
    return rows


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}"


def label_markdown(rows: Sequence[ThresholdRow], chosen: int) -> str:
    """The table of the label at each threshold; ``chosen`` is the App's setting."""
    lines = [
        "## The `reproduced` label by confidence",
        "",
        "An instance is labelled when its test reproduces the issue with a confidence score at "
        "or above the threshold; below it the App says the test probably reproduces the issue. "
        "Precision: labelled instances whose test goes F→P under the golden fix. S (label): "
        "labelled and successful, over all instances; S (with probably): every reproduction. "
        f"The App's threshold (`label_min_confidence`) is {chosen}.",
        "",
        "| threshold | labelled | F→P | precision | S (label) | S (with probably) |",
        "|---|---|---|---|---|---|",
    ]
    for row in rows:
        data = row.to_json()
        mark = " (App)" if row.threshold == chosen else ""
        lines.append(
            f"| {row.threshold}{mark} | {row.labelled} | {row.fail_to_pass} | "
            f"{_pct(data['precision'])} | {_pct(data['S_label'])} | "
            f"{_pct(data['S_with_probably'])} |"
        )
    return "\n".join(lines)
