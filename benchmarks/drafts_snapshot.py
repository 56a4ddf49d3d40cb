"""A snapshot of the no-LLM drafter's drafts on dev issues, and a comparison of two snapshots.

No Docker: every instance's issue is read and drafted (``draft_from_issue``) against its
repository at the base commit, at issue time and knowing a fix (pull request time), and each
draft is written down as its method, its files and its patch. Two snapshots taken at two
commits show whether a change to the code left the drafts as they were (a reorganisation must),
or which instances it changed and how.

    .venv/bin/python benchmarks/drafts_snapshot.py --instances A.jsonl [--instances B.jsonl] \\
        --repos REPOS --env-specs harness_specs.json --out SNAPSHOT.jsonl
    .venv/bin/python benchmarks/drafts_snapshot.py --compare BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import argparse
import difflib
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

from reprobot.bench.data.instances import load_instances
from reprobot.bench.envs.spec_table import default_overlay, env_spec_for, load_env_specs
from reprobot.generation.drafter.draft import draft_from_issue, tree_context
from reprobot.generation.drafter.test_style import style_for
from reprobot.generation.issue.file import read_issue
from reprobot.validation import RepoSnapshot

WHEN = (("issue time", False), ("pull request", True))


def take(instances: list[Path], repos: Path, env_specs: Path, out: Path) -> int:
    table = load_env_specs(env_specs, default_overlay())
    lines = 0
    with out.open("w", encoding="utf-8") as sink:
        for path in instances:
            for instance in load_instances(path):
                spec = env_spec_for(table, instance.repo, instance.version)
                clone = repos / instance.repo.split("/", 1)[1]
                snapshot = RepoSnapshot.from_git(clone, instance.base_commit, instance.repo)
                issue = read_issue(instance.problem_statement)
                style = style_for(spec.test_cmd)
                tree = tree_context(issue, snapshot, style)
                for when, knowing in WHEN:
                    drafted = draft_from_issue(issue, snapshot, tree, style, knowing_fix=knowing)
                    record = {
                        "instance": instance.instance_id,
                        "when": when,
                        "drafts": [
                            {
                                "method": str(draft.method),
                                "files": list(draft.test_files),
                                "alone_path": draft.alone_path,
                                "patch": draft.patch.diff,
                            }
                            for draft in drafted.drafts
                        ],
                        "wrong_values": list(drafted.wrong_values),
                        "skipped": [list(pair) for pair in drafted.skipped],
                    }
                    sink.write(json.dumps(record, sort_keys=True) + "\n")
                    lines += 1
    print(f"{lines} records ({lines // len(WHEN)} instances) written to {out}")
    return 0


def _read(path: Path) -> dict[tuple[str, str], dict[str, Any]]:
    records: dict[tuple[str, str], dict[str, Any]] = {}
    for line in path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        records[(record["instance"], record["when"])] = record
    return records


def _digest(record: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(record, sort_keys=True).encode()).hexdigest()


def compare(before_path: Path, after_path: Path) -> int:
    before, after = _read(before_path), _read(after_path)
    keys = sorted(set(before) | set(after))
    only = [k for k in keys if (k in before) != (k in after)]
    changed = [
        k for k in keys if k in before and k in after and _digest(before[k]) != _digest(after[k])
    ]
    drafts = sum(len(r["drafts"]) for r in after.values())
    print(
        f"{len(keys)} records, {drafts} drafts after: {len(keys) - len(only) - len(changed)} "
        f"identical, {len(changed)} changed, {len(only)} in one snapshot only"
    )
    for key in only:
        print(f"  only in {'before' if key in before else 'after'}: {key[0]} ({key[1]})")
    for key in changed:
        print(f"  changed: {key[0]} ({key[1]})")
        old = json.dumps(before[key], sort_keys=True, indent=1).splitlines()
        new = json.dumps(after[key], sort_keys=True, indent=1).splitlines()
        for line in list(difflib.unified_diff(old, new, lineterm="", n=1))[2:40]:
            print(f"    {line}")
    return 1 if only or changed else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=Path, action="append")
    parser.add_argument("--repos", type=Path)
    parser.add_argument("--env-specs", type=Path)
    parser.add_argument("--out", type=Path)
    parser.add_argument("--compare", type=Path, nargs=2, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        return compare(*args.compare)
    if not (args.instances and args.repos and args.env_specs and args.out):
        parser.error("--instances, --repos, --env-specs and --out, or --compare BEFORE AFTER")
    return take(args.instances, args.repos, args.env_specs, args.out)


if __name__ == "__main__":
    sys.exit(main())
