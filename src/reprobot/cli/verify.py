"""``reprobot verify``: grade a fix against a test patch, as the App does on a pull request."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from reprobot.bot import environment_view, render_page, render_verdict, verdict_page, write_page
from reprobot.cli.sandbox import add_env_arguments, build_environment
from reprobot.console import progress_for
from reprobot.errors import ReprobotError
from reprobot.settings import Settings
from reprobot.validation import Patch, RepoSnapshot, RunLimits, connect, verify


def register(sub: Any) -> None:
    parser = sub.add_parser(
        "verify", help="run a test patch before and after a fix and report the transitions"
    )
    add_env_arguments(parser, ref_flag="--base")
    fix = parser.add_mutually_exclusive_group(required=True)
    fix.add_argument("--head", help="the fixed commit (e.g. a pull request's head)")
    fix.add_argument("--fix", type=Path, help="the fix as a unified diff applied to --base")
    parser.add_argument("--tests", required=True, type=Path, help="the test patch (unified diff)")
    parser.add_argument("--test", action="append", default=None, help="grade only these test ids")
    out = parser.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="print one JSON object")
    out.add_argument("--markdown", action="store_true", help="print the comment body")
    parser.add_argument(
        "--html",
        type=Path,
        metavar="FILE",
        help="also write the report page to FILE (self-contained: it requests nothing)",
    )
    parser.set_defaults(handler=cmd_verify)


def _read_patch(path: Path) -> Patch:
    try:
        return Patch.from_file(path)
    except OSError as exc:
        raise ReprobotError(f"cannot read patch: {exc}") from exc


def cmd_verify(args: argparse.Namespace, settings: Settings) -> int:
    tests = _read_patch(args.tests)
    fix = _read_patch(args.fix) if args.fix else None
    client = connect()
    base = RepoSnapshot.from_git(args.repo, args.ref, args.name)
    head = RepoSnapshot.from_git(args.repo, args.head, args.name) if args.head else None
    # The environment comes from the trusted base (or --env-ref), never from the fix's head.
    trusted = RepoSnapshot.from_git(args.repo, args.env_ref, args.name) if args.env_ref else base
    progress = progress_for(args)
    env = build_environment(client, args, trusted, settings, progress)
    verdict = verify(
        client,
        env,
        base,
        tests,
        fix=fix,
        head=head,
        test_ids=args.test,
        limits=RunLimits.from_settings(settings),
    )
    if args.html:
        page = verdict_page(
            verdict,
            repo=base.repo,
            tests_diff=tests.diff,
            environment=environment_view(env),
        )
        write_page(args.html, render_page(page))
    if args.json:
        print(json.dumps(verdict.to_json()))
    elif args.markdown:
        print(render_verdict(verdict))
    else:
        print(render_verdict(verdict))
    return 0
