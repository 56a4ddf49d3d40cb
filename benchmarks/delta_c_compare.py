"""Change coverage ΔC of two ``bench swt`` runs of the same predictions, instance by instance.

Reads the unit results of two output folders (``OUT/results/*.json``: each instance's ΔC as
executable and covered lines of the golden fix) and prints, for every instance both runs
graded, ΔC before and after, the executable lines each counted, and the mean over the instances
with executable lines; ``--only FILE`` keeps the instances whose ids a JSON-lines file lists
(the dev set's ``instances.jsonl``, say).

    .venv/bin/python benchmarks/delta_c_compare.py BEFORE_OUT AFTER_OUT [--only FILE] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
from pathlib import Path
from typing import Any


def deltas(out: Path) -> dict[str, tuple[int, int]]:
    """Executable and covered lines per instance graded without an error."""
    found: dict[str, tuple[int, int]] = {}
    for path in sorted((out / "results").glob("*.json")):
        result = json.loads(path.read_text(encoding="utf-8"))
        delta = result.get("delta")
        if result.get("error") or not isinstance(delta, dict):
            continue
        found[str(result["instance_id"])] = (int(delta["executable"]), int(delta["covered"]))
    return found


def ratio(pair: tuple[int, int] | None) -> float | None:
    if pair is None or pair[0] == 0:
        return None
    return pair[1] / pair[0]


def compare(
    before: dict[str, tuple[int, int]], after: dict[str, tuple[int, int]]
) -> list[dict[str, Any]]:
    rows = []
    for instance_id in sorted(set(before) & set(after)):
        rows.append(
            {
                "instance": instance_id,
                "before": ratio(before[instance_id]),
                "after": ratio(after[instance_id]),
                "executable_before": before[instance_id][0],
                "executable_after": after[instance_id][0],
            }
        )
    return rows


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{100 * value:.1f}%"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("before", type=Path)
    parser.add_argument("after", type=Path)
    parser.add_argument("--only", type=Path, help="a JSON-lines file of the instances to keep")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = compare(deltas(args.before), deltas(args.after))
    if args.only:
        keep = {
            json.loads(line)["instance_id"]
            for line in args.only.read_text(encoding="utf-8").splitlines()
            if line.strip()
        }
        rows = [r for r in rows if r["instance"] in keep]
    means = {
        side: statistics.fmean(v) if (v := [r[side] for r in rows if r[side] is not None]) else None
        for side in ("before", "after")
    }
    if args.json:
        print(json.dumps({"rows": rows, "mean": means}, indent=1))
        return
    print("| instance | ΔC before | ΔC after | executable lines before | after |")
    print("|---|---|---|---|---|")
    for r in rows:
        print(
            f"| {r['instance']} | {_pct(r['before'])} | {_pct(r['after'])} | "
            f"{r['executable_before']} | {r['executable_after']} |"
        )
    mean = f"{_pct(means['before'])} | {_pct(means['after'])}"
    print(f"| mean ({len(rows)} instances) | {mean} | | |")


if __name__ == "__main__":
    main()
