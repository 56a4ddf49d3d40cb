"""The ``reproduced`` label at each confidence threshold, read from finished ``bench swt
--predictions reprobot`` runs (no sandbox runs): each run's stored drafts (``results/draft-*.json``)
and per-instance grades (``instances.csv``), one table per run, so that the threshold is chosen
on each dev set apart (``label_min_confidence``).

    .venv/bin/python benchmarks/label_thresholds.py OUT [OUT ...]
"""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from reprobot.bench.run.executor import Done
from reprobot.bench.swt.drafting import Drafting, DraftResult
from reprobot.bench.swt.label_confidence import label_markdown, threshold_rows
from reprobot.bench.swt.metrics import CoverageDelta, Flags, InstanceScore
from reprobot.settings import Settings


def read_run(out: Path) -> tuple[Drafting, list[InstanceScore]]:
    """The stored drafts and the grades of one finished run in ``out``."""
    drafting: dict[str, Done[DraftResult]] = {}
    for path in sorted((out / "results").glob("draft-*.json")):
        data = json.loads(path.read_text())
        record = DraftResult.from_json(data.get("record", data))
        drafting[record.instance_id] = Done(record)
    scores = []
    with open(out / "instances.csv", newline="") as handle:
        for row in csv.DictReader(handle):
            yes = {k: row[k] == "True" for k in ("W", "S", "F->x", "F->P", "P->P", "excluded")}
            flags = Flags(yes["W"], yes["S"], yes["F->x"], yes["F->P"], yes["P->P"])
            key = row["instance_id"]
            scores.append(
                InstanceScore(
                    key, flags, CoverageDelta(0, 0), yes["excluded"], row["error"] or None
                )
            )
    return drafting, scores


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("runs", type=Path, nargs="+", help="output folders of bench swt")
    args = parser.parse_args()
    chosen = Settings(_env_file=None).label_min_confidence
    for out in args.runs:
        drafting, scores = read_run(out)
        print(f"\n# {out} ({len(scores)} instances, {len(drafting)} drafted)\n")
        print(label_markdown(threshold_rows(drafting, scores), chosen))
    return 0


if __name__ == "__main__":
    sys.exit(main())
