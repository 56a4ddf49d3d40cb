"""``reprobot bench swt``, ``bench pod`` and ``bench repos``: their command-line arguments."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from reprobot.bench.pod.command import run_pod
from reprobot.bench.repos.command import DEFAULT_MAX_TESTS, run_repos
from reprobot.bench.swt.command import run_swt


def register(sub: Any) -> None:
    bench = sub.add_parser("bench", help="run the benchmark harness (SWT-Bench, patch filtering)")
    commands = bench.add_subparsers(dest="bench_command", required=True)

    swt = commands.add_parser("swt", help="SWT-Bench evaluation of test-patch predictions")
    _common(swt)
    swt.add_argument(
        "--predictions",
        required=True,
        help="a JSON-lines predictions file, 'gold' (the golden tests) or 'reprobot' (draft them)",
    )
    swt.add_argument(
        "--patch-aware",
        action="store_true",
        help="with --predictions reprobot: draft knowing the golden fix, as at pull request time",
    )
    swt.add_argument(
        "--excluded",
        type=Path,
        help="ids SWT-Bench drops (default: swtbench_excluded_lite.txt next to the instances)",
    )
    swt.add_argument(
        "--skip-empty",
        action="store_true",
        help="score an empty prediction as not applied without running the golden tests for it "
        "(much faster on drafts; ΔC then averages over the instances that ran)",
    )
    swt.set_defaults(handler=run_swt)

    pod = commands.add_parser("pod", help="Reprobot's verdicts as a filter of candidate fixes")
    _common(pod)
    pod.add_argument("--patches", type=Path, required=True, help="labelled candidate fixes")
    pod.add_argument(
        "--tests", required=True, help="'gold' or a JSON-lines file of test-patch predictions"
    )
    pod.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    pod.set_defaults(handler=run_pod)

    repos = commands.add_parser(
        "repos", help="first contact: detect, build and run each listed repository's tests"
    )
    repos.add_argument(
        "--list",
        type=Path,
        required=True,
        help="repositories: 'owner/name commit' per line ('#' comments), or JSON lines "
        '{"repo": ..., "commit": ...}',
    )
    repos.add_argument("--repos", type=Path, required=True, help="folder of git clones")
    repos.add_argument(
        "--out", type=Path, default=Path("out/bench-repos"), help="output folder (resumable)"
    )
    repos.add_argument("--workers", type=int, help="parallel units (default: cores and memory)")
    repos.add_argument(
        "--max-tests",
        type=int,
        default=DEFAULT_MAX_TESTS,
        help="run only the largest N test files of a tree that has more than N "
        f"(default {DEFAULT_MAX_TESTS}; 0: always the whole suite)",
    )
    repos.add_argument("--only", action="append", default=[], help="owner/name (repeatable)")
    repos.set_defaults(handler=run_repos)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--instances",
        required=True,
        help="instances: a JSON-lines file, or a public dataset by name, "
        "hub:OWNER/NAME[@SPLIT] (e.g. hub:princeton-nlp/SWE-bench_Lite@test; needs a network)",
    )
    parser.add_argument("--repos", type=Path, required=True, help="folder of git clones")
    parser.add_argument("--out", type=Path, required=True, help="output folder (resumable)")
    parser.add_argument(
        "--env-specs",
        type=Path,
        help="environment table: env_specs.json or the harness's harness_specs.json "
        "(default: whichever is next to the instances)",
    )
    parser.add_argument("--workers", type=int, help="parallel units (default: cores and memory)")
    parser.add_argument("--only", action="append", default=[], help="instance id (repeatable)")
