"""How often the issue reader finds a runnable example and an oracle, over real issue texts.

No repository and no Docker: every ``problem_statement`` of an instances file (SWE-bench's
format) goes through the reader that drafting starts from, and each issue gets the strongest
oracle its text supports:

- ``expected value``: a value the issue states as expected (any phrasing the reader knows, a
  call stated to return it), or an exception the issue expects;
- ``exception``: the exception of its traceback, or one its words name;
- ``wrong value only``: a value the issue calls wrong (a stated outcome, a marked or contradicted
  session output, code whose comments show it) or two values it says should agree, and no
  expected value;
- ``none``.

and whether it shows a runnable example (a code block or session that parses). It prints the
shares per repository and overall, and the reading time per issue.

    .venv/bin/python benchmarks/issue_reader.py PATH/TO/instances.jsonl [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reprobot.generation.drafter.consistency import find_disagreement
from reprobot.generation.drafter.session_variants import shown_is_wrong
from reprobot.generation.drafter.snippets import (
    code_programs,
    session_programs,
    shown_value_step,
)
from reprobot.generation.issue.file import read_issue
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.issue.stated_calls import stated_outcomes, stated_returns
from reprobot.generation.pool.failure_match import mentioned_exception

ORACLES = ("expected value", "exception", "wrong value only", "none")


def read_one(text: str) -> dict[str, Any]:
    """What the reader makes of one issue text."""
    started = time.perf_counter()
    issue = read_issue(text)
    programs = [*code_programs(issue), *session_programs(issue)]
    outcomes = stated_outcomes(issue)
    expected = bool(
        stated_returns(issue)
        or any(e.expected for e in issue.expectations)
        or any(stated for _, _, stated in outcomes)
    )
    exception = issue.final_traceback is not None or mentioned_exception(issue) is not None
    wrong = bool(outcomes) or any(e.actual for e in issue.expectations) or _wrong_session(issue)
    oracle = (
        "expected value"
        if expected
        else "exception"
        if exception
        else "wrong value only"
        if wrong
        else "none"
    )
    return {
        "example": bool(programs),
        "oracle": oracle,
        "seconds": time.perf_counter() - started,
    }


def _wrong_session(issue: IssueReport) -> bool:
    """A session (or code whose comments show what it printed) shows a value the issue calls
    wrong, or two values it says should agree."""
    for program in [*code_programs(issue)[:1], *session_programs(issue)]:
        shown = shown_value_step(program)
        if shown is not None and shown_is_wrong(issue, program, shown):
            return True
        if find_disagreement(issue, program) is not None:
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("instances", type=Path, help="a SWE-bench instances file (JSON lines)")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    rows = [json.loads(line) for line in args.instances.read_text().splitlines() if line.strip()]
    by_repo: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_repo[row["repo"]].append(read_one(row["problem_statement"]))
    every = [r for results in by_repo.values() for r in results]
    seconds = [r["seconds"] for r in every]
    summary = {
        "issues": len(every),
        "example": sum(r["example"] for r in every),
        "oracles": dict(Counter(r["oracle"] for r in every)),
        "example_and_oracle": sum(r["example"] and r["oracle"] != "none" for r in every),
        "median_ms": round(1000 * statistics.median(seconds), 2) if seconds else 0.0,
        "max_ms": round(1000 * max(seconds), 2) if seconds else 0.0,
        "repositories": {
            repo: {
                "issues": len(results),
                "example": sum(r["example"] for r in results),
                "oracles": dict(Counter(r["oracle"] for r in results)),
            }
            for repo, results in sorted(by_repo.items(), key=lambda kv: -len(kv[1]))
        },
    }
    if args.json:
        print(json.dumps(summary, indent=2))
        return 0
    table = Table(title=f"issue reader on {len(every)} issue texts")
    for column in ("repository", "issues", "runnable example", *ORACLES):
        table.add_column(column, justify="left" if column == "repository" else "right")

    def share(n: int, of: int) -> str:
        return f"{n} ({n / of:.0%})" if of else "0"

    for repo, data in [*summary["repositories"].items(), ("all", summary)]:
        of = data["issues"]
        oracles = data["oracles"]
        table.add_row(
            repo,
            str(of),
            share(data["example"], of),
            *(share(oracles.get(o, 0), of) for o in ORACLES),
        )
    console = Console()
    console.print(table)
    console.print(
        f"runnable example and an oracle: {share(summary['example_and_oracle'], len(every))}; "
        f"reading time per issue: median {summary['median_ms']} ms, max {summary['max_ms']} ms"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
