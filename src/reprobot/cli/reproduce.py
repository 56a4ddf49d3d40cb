"""``reprobot reproduce``: draft and validate a test that reproduces an issue, as the App does
when an issue is opened."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reprobot.bot import environment_view, render_page, reproduction_page, write_page
from reprobot.cli.sandbox import add_env_arguments, build_environment
from reprobot.console import console, progress_for, untrusted
from reprobot.errors import ReprobotError
from reprobot.generation import (
    MAX_CONFIDENCE,
    Reproduction,
    bind_llm_drafter,
    read_issue,
    reproduce,
)
from reprobot.settings import Settings
from reprobot.validation import RepoSnapshot, clone_url, connect, is_url

EXIT_NOT_REPRODUCED = 1


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "reproduce", help="draft tests that reproduce an issue and validate them in the sandbox"
    )
    add_env_arguments(parser, repo_help="a local git repository or a repository URL")
    parser.add_argument(
        "--issue",
        required=True,
        help="the issue: a file (markdown with the title on the first line, or GitHub's issue "
        "JSON with title and body), or - for standard input",
    )
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the report page to FILE (self-contained: it requests nothing)",
    )
    parser.set_defaults(handler=cmd_reproduce)


def _read_issue_arg(value: str) -> str:
    if value == "-":
        return sys.stdin.read()
    try:
        return Path(value).read_text(encoding="utf-8", errors="replace")
    except OSError as exc:
        raise ReprobotError(f"cannot read the issue: {exc}") from exc


def cmd_reproduce(args: argparse.Namespace, settings: Settings) -> int:
    issue = read_issue(_read_issue_arg(args.issue))
    repo = str(args.repo)
    if is_url(repo):
        path = clone_url(repo, settings.cache_dir, args.ref if args.ref != "HEAD" else None)
        name = args.name or repo.rstrip("/").removesuffix(".git").rpartition("/")[2]
    else:
        path, name = Path(repo), args.name
    client = connect()
    snapshot = RepoSnapshot.from_git(path, args.ref, name)
    trusted = RepoSnapshot.from_git(path, args.env_ref, name) if args.env_ref else snapshot
    progress = progress_for(args)
    env = build_environment(client, args, trusted, settings, progress)
    result = reproduce(
        issue,
        snapshot,
        env,
        settings,
        client=client,
        llm_drafter=bind_llm_drafter(settings),
        progress=progress,
    )
    if args.html:
        page = reproduction_page(
            result,
            repo=snapshot.repo,
            issue=None,
            test_command=env.spec.test_cmd,
            environment=environment_view(env),
            issue_title=issue.title,
        )
        write_page(args.html, render_page(page))
    if args.json:
        print(json.dumps(result.to_json()))
    else:
        print_reproduction(result, console())
    return 0 if result.reproduced else EXIT_NOT_REPRODUCED


def print_reproduction(result: Reproduction, console: Console) -> None:
    short = result.base_sha[:12]
    if result.chosen is not None:
        confidence = result.confidence
        console.print(
            f"[bold green]Reproduced[/] on {result.repo} @ {short} by {result.chosen.draft.method}"
            f" (confidence {confidence.score} of {MAX_CONFIDENCE})"
        )
        if confidence.to_check:
            console.print(untrusted("To check: " + "; ".join(confidence.to_check)), soft_wrap=True)
        # Ids, the failure and the diff are never wrapped: they are meant to be copied.
        console.print(
            untrusted("\nFailing on this commit: " + ", ".join(result.failing_tests)),
            soft_wrap=True,
        )
        console.print(untrusted(f"Failure: {result.failure_excerpt}"), soft_wrap=True)
        console.print("\nThe test (apply with `git apply`):\n")
        console.print(result.test_patch, markup=False, highlight=False, soft_wrap=True, end="")
    else:
        console.print(f"[bold yellow]Not reproduced[/] on {result.repo} @ {short}")
    table = Table(title="candidates", show_lines=False)
    for column in ("method", "outcome", "file", "why"):
        table.add_column(column)
    for candidate in result.candidates:
        chosen = result.chosen is not None and candidate.draft == result.chosen.draft
        table.add_row(
            candidate.draft.method + (" (chosen)" if chosen else ""),
            candidate.outcome.value,
            untrusted(", ".join(candidate.draft.test_files)),
            untrusted(candidate.reason),
        )
    for method, reason in result.rejected:
        table.add_row(method, "no draft", "", untrusted(reason))
    console.print(table)
    console.print(f"{result.sandbox_runs} sandbox run(s), {result.duration_s:.1f} s")
