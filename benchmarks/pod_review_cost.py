"""What the change concerns cost the fix filter, read from a finished ``bench pod`` run (no
sandbox runs): every candidate is judged from the run's stored results, as the report judges it,
and again without its change concerns (``CandidateResult.review``). Printed: the candidates the
concerns alone keep from being verified, labelled correct and incorrect apart, and precision,
recall, negative recall and MCC with and without the concerns (``report.review_cost``).

    .venv/bin/python benchmarks/pod_review_cost.py OUT --patches CANDIDATES.jsonl
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from reprobot.bench.pod.classification import confusion
from reprobot.bench.pod.judge import load_candidates
from reprobot.bench.pod.report import (
    candidate_calls,
    filter_calls_of,
    review_cost,
    review_cost_markdown,
)
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.executor import Done, Failed, UnitResult


def stored(
    out: Path,
) -> tuple[dict[str, UnitResult[ReferenceResult]], dict[str, UnitResult[CandidateResult]]]:
    """The run's stored reference and candidate results by unit key."""
    references: dict[str, UnitResult[ReferenceResult]] = {}
    results: dict[str, UnitResult[CandidateResult]] = {}
    for path in sorted((out / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        key = path.stem
        if "error" in data:
            failed = Failed(key, str(data["error"]))
            (references if key.startswith("reference--") else results)[key] = failed
        elif key.startswith("reference--"):
            references[key] = Done(ReferenceResult.from_json(data))
        else:
            results[key] = Done(CandidateResult.from_json(data))
    return references, results


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="output folder of a finished bench pod run")
    parser.add_argument("--patches", type=Path, required=True, help="its labelled candidates")
    args = parser.parse_args()
    references, results = stored(args.out)
    ran = {k.split("--", 1)[1] for k in references}
    candidates = [c for c in load_candidates(args.patches) if c.instance_id in ran]
    # A run with predicted tests records what each test checks; one with the golden tests, not.
    gold = all(r.record.oracles is None for r in references.values() if isinstance(r, Done))
    calls, errors = candidate_calls(candidates, references, results, gold)
    matrix = confusion(filter_calls_of(calls))
    cost = review_cost(candidates, references, results, gold, calls)
    print(
        f"# {args.out}: {len(candidates)} candidates of {len(ran)} instances, "
        f"{len(calls) - len(errors)} called, {len(errors)} without a call\n"
    )
    print(
        f"TP {matrix.tp:.0f}, FP {matrix.fp:.0f}, FN {matrix.fn:.0f}, TN {matrix.tn:.0f} "
        f"(without the concerns: TP {cost.matrix_without['tp']:.0f}, "
        f"FP {cost.matrix_without['fp']:.0f}, FN {cost.matrix_without['fn']:.0f}, "
        f"TN {cost.matrix_without['tn']:.0f})\n"
    )
    print("\n".join(review_cost_markdown(cost, matrix.metrics())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
