"""What the project's linter says of the chosen tests of finished ``bench swt --predictions
reprobot`` runs, as they were chosen and as ``drafter.tidy`` leaves them today (no sandbox runs:
the tidied text is not run here; in ``reproduce`` it is kept only when it reproduces too).

Printed per run: the chosen test modules checked, how many pass the project's flake8 or Ruff
settings as chosen and tidied, how many belong to projects with no linter settings, the codes of
what is left, and how many chosen modules carry no assertion message Reprobot wrote (the unittest
family's "expected X, got Y" counts: without pytest's rewriting, it is that test's report).

    .venv/bin/python benchmarks/draft_lint.py OUT [OUT ...] --instances FILE [--instances FILE]
        --repos REPOS
"""

from __future__ import annotations

import argparse
import json
import sys
from collections import Counter
from pathlib import Path

from reprobot.bench.data.instances import load_instances
from reprobot.bench.envs.environments import clone_path
from reprobot.generation.drafter.draft import tree_context
from reprobot.generation.drafter.test_writer import generated_messages
from reprobot.generation.drafter.tidy import star_names_in, tidy
from reprobot.generation.issue.file import read_issue
from reprobot.generation.repo.linter import LintError, lint, project_linter
from reprobot.validation import Patch, RepoSnapshot, patched_sources


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("runs", type=Path, nargs="+", help="output folders of bench swt")
    parser.add_argument("--instances", type=Path, action="append", required=True)
    parser.add_argument("--repos", type=Path, required=True, help="folder of git clones")
    args = parser.parse_args()
    instances = {i.instance_id: i for path in args.instances for i in load_instances(path)}
    for out in args.runs:
        counts: Counter[str] = Counter()
        left: Counter[str] = Counter()
        for line in (out / "predictions.jsonl").read_text(encoding="utf-8").splitlines():
            prediction = json.loads(line)
            patch = Patch(prediction.get("model_patch") or "")
            instance = instances.get(prediction["instance_id"])
            if not patch.diff.strip() or instance is None:
                continue
            base = RepoSnapshot.from_git(
                clone_path(args.repos, instance.repo), instance.base_commit
            )
            sources = patched_sources(base, [patch], list(patch.files))
            texts = {p: d.decode("utf-8", "replace") for p, d in sources.items() if d is not None}
            counts["modules"] += len(texts)
            counts["no message"] += sum(generated_messages(t) == 0 for t in texts.values())
            linter = project_linter(base)
            if linter is None:
                counts["no linter settings"] += 1
                continue
            tree = tree_context(read_issue(instance.problem_statement), base)
            for path, text in texts.items():
                try:
                    before = lint(linter, path, text)
                    after = lint(linter, path, tidy(text, path, linter, star_names_in(tree)))
                except LintError:
                    counts["not checked"] += 1
                    continue
                counts["checked"] += 1
                counts["pass as chosen"] += not before
                counts["pass tidied"] += not after
                left.update(f.code for f in after)
        print(
            f"{out}: {counts['checked']} chosen test module(s) checked: "
            f"{counts['pass as chosen']} pass the project's linter as chosen, "
            f"{counts['pass tidied']} tidied; {counts['no linter settings']} in projects with no "
            f"linter settings, {counts['not checked']} not checked. Left: "
            + (", ".join(f"{code} {n}" for code, n in left.most_common()) or "nothing")
            + f". Carrying no assertion message Reprobot wrote: {counts['no message']} of "
            f"{counts['modules']} chosen test module(s)."
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
