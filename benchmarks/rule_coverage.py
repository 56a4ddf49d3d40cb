"""On how many dev issues each reader and each variant of the no-LLM drafter fires, and in how
many repositories.

No Docker: every instance's issue is read (``READERS``) and drafted (``draft_from_issue``)
against its repository at the base commit, at issue time and knowing a fix (pull request time).
A reader fires on an issue when it finds something there, a variant when it gives it at least
one draft. One that fires on fewer than 3 issues, or in fewer than 2 repositories, is not yet a
class of issues: the tables mark it.

    .venv/bin/python benchmarks/rule_coverage.py --instances A.jsonl [--instances B.jsonl] \\
        --repos REPOS --env-specs harness_specs.json [--json OUT.json]
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections import defaultdict
from pathlib import Path

from rich.console import Console
from rich.table import Table

from reprobot.bench.data.instances import load_instances
from reprobot.bench.envs.spec_table import default_overlay, env_spec_for, load_env_specs
from reprobot.generation.drafter.draft import draft_from_issue, tree_context
from reprobot.generation.drafter.readers import READERS
from reprobot.generation.drafter.reading import Reading
from reprobot.generation.drafter.test_style import style_for
from reprobot.generation.drafter.variants import CLAIMS, VARIANTS
from reprobot.generation.issue.file import read_issue
from reprobot.validation import RepoSnapshot

MIN_ISSUES, MIN_REPOS = 3, 2


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--instances", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--env-specs", type=Path, required=True)
    parser.add_argument("--json", type=Path)
    args = parser.parse_args()
    table = load_env_specs(args.env_specs, default_overlay())
    fired: dict[str, dict[str, set[str]]] = {
        when: defaultdict(set) for when in ("issue time", "pull request")
    }
    read: dict[str, set[str]] = defaultdict(set)
    repos_of: dict[str, str] = {}
    times: list[float] = []
    sets = {path.name: [i.instance_id for i in load_instances(path)] for path in args.instances}
    for path in args.instances:
        for instance in load_instances(path):
            started = time.perf_counter()
            spec = env_spec_for(table, instance.repo, instance.version)
            clone = args.repos / instance.repo.split("/", 1)[1]
            snapshot = RepoSnapshot.from_git(clone, instance.base_commit, instance.repo)
            issue = read_issue(instance.problem_statement)
            style = style_for(spec.test_cmd)
            tree = tree_context(issue, snapshot, style)
            repos_of[instance.instance_id] = instance.repo
            reading = Reading(issue, tree)
            for reader in READERS:
                if reader.fires(reading):
                    read[reader.name].add(instance.instance_id)
            for when, knowing in (("issue time", False), ("pull request", True)):
                drafted = draft_from_issue(issue, snapshot, tree, style, knowing_fix=knowing)
                for draft in drafted.drafts:
                    fired[when][draft.method].add(instance.instance_id)
            times.append(time.perf_counter() - started)
    console = Console(width=None if sys.stdout.isatty() else 140)
    report = Table(title=f"variants over {len(repos_of)} dev issues ({', '.join(sets)})")
    for column in ("variant", "issues", "repositories", "issues (pull request)", "a class?"):
        report.add_column(column, justify="left" if column == "variant" else "right")
    rows = {}
    for variant in VARIANTS:
        ids = fired["issue time"].get(variant.name, set())
        pr = fired["pull request"].get(variant.name, set())
        counted = pr if variant.pull_request_only else ids
        repos = {repos_of[i] for i in counted}
        is_class = len(counted) >= MIN_ISSUES and len(repos) >= MIN_REPOS
        rows[variant.name] = {
            "issues": len(ids),
            "issues_pull_request": len(pr),
            "repositories": sorted(repos),
            "per_set": {name: len(counted & set(members)) for name, members in sets.items()},
            "a_class": is_class,
        }
        report.add_row(
            variant.name,
            str(len(ids)),
            str(len(repos)),
            str(len(pr)),
            "yes" if is_class else "[red]no[/]",
        )
    console.print(report)
    claims = Table(title="classes of claims (their variants together)")
    for column in ("claim", "variants", "issues", "repositories", "a class?"):
        claims.add_column(column, justify="left" if column in ("claim", "variants") else "right")
    claim_rows = {}
    for claim in CLAIMS:
        members = [v for v in VARIANTS if v.claim == claim]
        ids = set().union(
            *(
                fired["pull request" if v.pull_request_only else "issue time"].get(v.name, set())
                for v in members
            )
        )
        repos = {repos_of[i] for i in ids}
        is_class = len(ids) >= MIN_ISSUES and len(repos) >= MIN_REPOS
        claim_rows[claim] = {
            "variants": [v.name for v in members],
            "issues": len(ids),
            "repositories": sorted(repos),
            "per_set": {name: len(ids & set(members_)) for name, members_ in sets.items()},
            "a_class": is_class,
        }
        claims.add_row(
            claim,
            str(len(members)),
            str(len(ids)),
            str(len(repos)),
            "yes" if is_class else "[red]no[/]",
        )
    console.print(claims)
    readers = Table(title=f"readers over {len(repos_of)} dev issues ({', '.join(sets)})")
    for column in ("reader", "finds", "issues", "repositories", "a class?"):
        readers.add_column(column, justify="left" if column in ("reader", "finds") else "right")
    reader_rows = {}
    for reader in READERS:
        ids = read.get(reader.name, set())
        repos = {repos_of[i] for i in ids}
        is_class = len(ids) >= MIN_ISSUES and len(repos) >= MIN_REPOS
        reader_rows[reader.name] = {
            "issues": len(ids),
            "repositories": sorted(repos),
            "per_set": {name: len(ids & set(members)) for name, members in sets.items()},
            "a_class": is_class,
        }
        readers.add_row(
            reader.name,
            reader.finds,
            str(len(ids)),
            str(len(repos)),
            "yes" if is_class else "[red]no[/]",
        )
    console.print(readers)
    console.print(
        f"drafting without Docker: {sum(times):.0f} s for {len(times)} issues "
        f"(median {sorted(times)[len(times) // 2]:.2f} s)"
    )
    if args.json:
        payload = {"variants": rows, "claims": claim_rows, "readers": reader_rows}
        args.json.write_text(json.dumps(payload, indent=1), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
