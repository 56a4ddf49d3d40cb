"""Whether a ``reproduced`` label holds beyond the one golden fix, read from a finished
``bench pod`` run whose tests are Reprobot's drafted ones (no sandbox runs).

A drafted test that reproduces an issue should pass under every right fix, not only the one
the benchmark took from the project's history. The labelled candidate fixes of a dev set are
other fixes of the same issues, each labelled right or wrong by the project's own tests. For
each instance whose drafted test failed on the original code, this prints how many candidates
labelled right make all its failing tests pass, and names each right candidate under which one
still fails (what a maintainer who merged that fix would read as a false label), with the
test's state after it.

    reprobot bench pod --instances LABELLED.jsonl --patches CANDIDATES.jsonl \
        --tests PREDICTIONS.jsonl --env-specs harness_specs.json --repos REPOS --out OUT
    .venv/bin/python benchmarks/label_against_candidates.py OUT

where ``PREDICTIONS.jsonl`` holds the lines of a ``bench swt`` run's ``predictions.jsonl`` whose
test patch is not empty (the reproduced instances), and ``LABELLED.jsonl`` those instances.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

_FAILING = ("failed", "error")


def _load(out: Path) -> tuple[dict[str, dict[str, Any]], list[dict[str, Any]]]:
    """The run's reference results by instance, and its candidate results; a unit that ended
    in an error is left out of both."""
    references: dict[str, dict[str, Any]] = {}
    candidates: list[dict[str, Any]] = []
    for path in sorted((out / "results").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        if "error" in data:
            continue
        if path.stem.startswith("reference--"):
            references[data["instance_id"]] = data
        else:
            candidates.append(data)
    return references, candidates


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("out", type=Path, help="output folder of a finished bench pod run")
    args = parser.parse_args()
    references, candidates = _load(args.out)
    failing = {
        instance: [t for t, state in ref.get("before", {}).items() if state in _FAILING]
        for instance, ref in references.items()
    }
    per_instance: dict[str, list[tuple[str, bool, dict[str, str]]]] = {}
    for result in candidates:
        tests = failing.get(result["instance_id"])
        if not tests or not result.get("resolved") or not result.get("candidate_applied"):
            continue
        after = result.get("after", {})
        holds = all(after.get(t) == "passed" for t in tests)
        per_instance.setdefault(result["instance_id"], []).append(
            (result.get("system", "?"), holds, {t: after.get(t, "not run") for t in tests})
        )
    right = sum(len(v) for v in per_instance.values())
    held = sum(h for v in per_instance.values() for _, h, _ in v)
    broken = sorted(i for i, v in per_instance.items() if not all(h for _, h, _ in v))
    print(
        f"{len(failing)} instance(s) with drafted tests, {sum(1 for v in failing.values() if v)} "
        f"failing on the original code; {len(per_instance)} of those with candidates labelled "
        f"right: {right} candidate(s)."
    )
    print(
        f"The drafted tests pass under {held} of {right} right candidate(s); instances with a "
        f"right candidate they fail under: {len(broken)} of {len(per_instance)}."
    )
    for instance in broken:
        for system, holds, states in per_instance[instance]:
            if not holds:
                shown = ", ".join(f"{t.split('::')[-1]}: {s}" for t, s in states.items())
                print(f"  {instance} under {system}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
