"""How many labelled fix candidates the rules of a verified change send to review.

For each candidate of a dev set whose repository has a clone under ``--repos``, the candidate is
read as ``git apply`` applies it to its instance's base commit, and checked as ``verify`` checks
a fix before any test runs: the paths a verified change may not hold (``source.allowlist``), the
files that decide how tests run (``source.harness_files``) and added lines that reach into the
test process (``source.process_hooks``). A candidate any of them flags can at best be "needs
review". Printed per dev set: how many labelled-correct and labelled-wrong candidates each rule
flags; the labelled-correct ones flagged are what the rules cost a maintainer. As in ``bench
pod``, a candidate is read without the files it leaves as the environment table's set-up steps
make them (``set_up_edits``: the agents' trees held them); the count of such candidates is
printed, and ``--with-set-up-edits`` reads the candidates whole.

    python benchmarks/allowlist_candidates.py --data ../shared/bench --repos REPOS \
        --env-specs ../shared/bench/lite/harness_specs.json
"""

from __future__ import annotations

import argparse
import json
from collections import Counter
from pathlib import Path

from reprobot.bench.envs.set_up_edits import set_up_edits, without_set_up_edits
from reprobot.bench.envs.spec_table import (
    SpecTable,
    default_overlay,
    env_spec_for,
    load_env_specs,
)
from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.allowlist import review_paths
from reprobot.validation.source.git_changes import fix_changes
from reprobot.validation.source.harness_files import harness_changes
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.process_hooks import process_hooks
from reprobot.validation.source.snapshot import RepoSnapshot


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def flags(base: RepoSnapshot, patch: Patch, files: list[str]) -> dict[str, list[str]]:
    """Each rule's findings on one candidate (empty lists: nothing found)."""
    try:
        changes = fix_changes(base, [patch])
    except SnapshotError:
        return {"does not apply as written": ["(git apply)"]}
    paths = [c.describe() for c in review_paths(changes.files, changes.content, files)]

    def new_bytes(path: str) -> bytes | None:
        blob = next((c.new_blob for c in changes.files if c.path == path), None)
        return changes.content(blob)

    def new_text(path: str) -> str | None:
        return _text(new_bytes(path))

    harness = harness_changes(
        [c.path for c in changes.files], lambda p: _text(base.read_file(p)), new_text
    )
    hooks = [h.describe() for h in process_hooks(patch, new_bytes) if h.kind != "tracing"]
    return {"allowlist": paths, "harness": list(harness), "in-process": hooks}


def run(data: Path, repos: Path, dev_set: str, table: SpecTable | None) -> None:
    instances = {}
    for line in (data / dev_set / "instances.jsonl").read_text().splitlines():
        row = json.loads(line)
        instances[row["instance_id"]] = row
    seen: Counter[str] = Counter()
    flagged: Counter[tuple[str, bool]] = Counter()
    examples: dict[str, list[str]] = {}
    files_of: dict[tuple[str, str], list[str]] = {}
    for line in (data / dev_set / "candidate_patches.jsonl").read_text().splitlines():
        cand = json.loads(line)
        inst = instances.get(cand["instance_id"])
        clone = repos / inst["repo"].split("/")[1] if inst else None
        if inst is None or clone is None or not clone.exists():
            seen["no clone"] += 1
            continue
        correct = bool(cand["resolved"])
        seen["correct" if correct else "wrong"] += 1
        try:
            base = RepoSnapshot.from_git(clone, inst["base_commit"])
        except SnapshotError:
            seen["base missing"] += 1
            continue
        key = (inst["repo"], base.sha)
        if key not in files_of:
            files_of[key] = base.list_files()
        patch = Patch(cand["model_patch"] or "")
        if table is not None:
            spec = env_spec_for(table, inst["repo"], str(inst["version"]))
            edits = set_up_edits(spec.pre_install, base.read_file)
            patch, left_out = without_set_up_edits(base, patch, edits)
            if left_out:
                seen["set-up edits left out " + ("correct" if correct else "wrong")] += 1
            if not patch.diff.strip():
                # Nothing but the set-up's edits: a candidate that changes nothing.
                seen["nothing else"] += 1
                continue
        found = flags(base, patch, files_of[key])
        any_rule = False
        for rule, items in found.items():
            if items:
                any_rule = True
                flagged[(rule, correct)] += 1
                if correct:
                    examples.setdefault(rule, []).append(f"{cand['instance_id']}: {items[0]}")
        if any_rule:
            flagged[("any", correct)] += 1
    print(f"\n## {dev_set}")
    print(
        f"candidates read: {seen['correct'] + seen['wrong']} "
        f"({seen['correct']} labelled correct, {seen['wrong']} labelled wrong); "
        f"{seen['no clone']} without a clone here, {seen['base missing']} with no base commit"
    )
    if table is not None:
        print(
            "candidates carrying the environment's own set-up edits, left out of them: "
            f"{seen['set-up edits left out correct']} labelled correct, "
            f"{seen['set-up edits left out wrong']} labelled wrong; "
            f"{seen['nothing else']} of them hold nothing else (not counted below)"
        )
    print("| rule | labelled correct flagged | labelled wrong flagged |")
    print("|---|---|---|")
    rules = ["allowlist", "harness", "in-process", "does not apply as written", "any"]
    for rule in rules:
        print(f"| {rule} | {flagged[(rule, True)]} | {flagged[(rule, False)]} |")
    for rule, items in sorted(examples.items()):
        print(f"- labelled correct, flagged by {rule}:")
        for item in items[:15]:
            print(f"  - {item}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="the benchmark data folder")
    parser.add_argument("--repos", type=Path, required=True, help="one clone per repository name")
    parser.add_argument("--sets", nargs="+", default=["lite", "verified"])
    parser.add_argument("--env-specs", type=Path, required=True, help="the environment table")
    parser.add_argument(
        "--with-set-up-edits", action="store_true", help="read each candidate whole"
    )
    args = parser.parse_args()
    table = None if args.with_set_up_edits else load_env_specs(args.env_specs, default_overlay())
    for dev_set in args.sets:
        run(args.data, args.repos, dev_set, table)


if __name__ == "__main__":
    main()
