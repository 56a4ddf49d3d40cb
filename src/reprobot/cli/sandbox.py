"""Sandbox commands: ``sandbox build``, ``sandbox reap``, ``env build`` and ``run-tests``
(``env list`` and ``env prune`` are in ``env_cache``)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from rich.table import Table

from reprobot.cli import env_cache
from reprobot.console import console, progress_for, untrusted
from reprobot.errors import ReprobotError
from reprobot.progress import Progress
from reprobot.settings import Settings
from reprobot.validation import (
    DEBIAN_SUITES,
    Detection,
    EnvImage,
    EnvSpec,
    Outcome,
    Patch,
    RepoSnapshot,
    RunLimits,
    TestRun,
    connect,
    detect_environment,
    ensure_base_image,
    ensure_environment,
    reap,
    run_problem,
    run_tests,
)

_STYLE = {"passed": "green", "failed": "red", "error": "red", "skipped": "yellow"}


def register(sub: Any) -> None:
    sandbox = sub.add_parser("sandbox", help="sandbox base images and container clean-up")
    sandbox_sub = sandbox.add_subparsers(dest="sandbox_command", required=True)
    build = sandbox_sub.add_parser(
        "build", help="make sure the base image of a Python version exists"
    )
    build.add_argument("--python", action="append", choices=sorted(DEBIAN_SUITES), default=None)
    build.set_defaults(handler=cmd_sandbox_build)
    reaper = sandbox_sub.add_parser("reap", help="remove sandbox containers past their deadline")
    reaper.set_defaults(handler=cmd_sandbox_reap)

    env = sub.add_parser("env", help="environment images")
    env_sub = env.add_subparsers(dest="env_command", required=True)
    env_build = env_sub.add_parser(
        "build", help="build (or find) the environment image of a commit"
    )
    add_env_arguments(env_build)
    env_build.add_argument("--json", action="store_true")
    env_build.set_defaults(handler=cmd_env_build)
    env_cache.register(env_sub)

    run = sub.add_parser("run-tests", help="run a commit's tests (plus patches) in the sandbox")
    add_env_arguments(run)
    run.add_argument(
        "--patch",
        action="append",
        default=[],
        type=Path,
        help="a unified diff to apply (repeatable)",
    )
    run.add_argument(
        "--test", action="append", default=[], help="a test id or file to run (repeatable)"
    )
    run.add_argument(
        "--coverage", action="store_true", help="collect line coverage with coverage.py"
    )
    run.add_argument("--json", action="store_true", help="print one JSON object")
    run.add_argument("--timeout", type=float, default=None, help="wall-clock limit in seconds")
    run.set_defaults(handler=cmd_run_tests)


def add_env_arguments(
    parser: argparse.ArgumentParser,
    ref_flag: str = "--ref",
    repo_help: str | None = None,
) -> None:
    """Options that locate a commit and the environment to test it in. With ``repo_help``
    ``--repo`` is kept as text (it may be a URL), otherwise it is a local path."""
    if repo_help is None:
        parser.add_argument("--repo", required=True, type=Path, help="a local git repository")
    else:
        parser.add_argument("--repo", required=True, help=repo_help)
    parser.add_argument(
        ref_flag, dest="ref", default="HEAD", help="the commit to test (default HEAD)"
    )
    parser.add_argument(
        "--env-ref",
        default=None,
        help="the trusted commit to build the environment from (default --ref)",
    )
    parser.add_argument(
        "--spec", type=Path, default=None, help="an EnvSpec as JSON (default: detected)"
    )
    parser.add_argument("--python", choices=sorted(DEBIAN_SUITES), default=None)
    parser.add_argument("--install", default=None, help="install command, run in the repository")
    parser.add_argument("--test-cmd", default=None, help="pytest command line")
    parser.add_argument("--name", default=None, help="repository name (owner/name) for image tags")


def cmd_sandbox_build(args: argparse.Namespace, settings: Settings) -> int:
    client = connect()
    for python in args.python or ["3.11"]:
        print(ensure_base_image(client, python, settings, progress_for(args)))
    return 0


def cmd_sandbox_reap(args: argparse.Namespace, settings: Settings) -> int:
    removed = reap(connect())
    print(f"removed {len(removed)} container(s)")
    return 0


def resolve_spec(args: argparse.Namespace, snapshot: RepoSnapshot) -> Detection:
    """The spec of ``--spec``, else the detection the App and the benchmark share; the
    command line's options win over either, and are named as what decided their part."""
    if args.spec:
        try:
            spec = EnvSpec.model_validate_json(Path(args.spec).read_text())
        except ValueError as exc:
            raise ReprobotError(f"{args.spec} is not a valid EnvSpec: {exc}") from exc
        detected = Detection(spec, {"spec": str(args.spec)})
    else:
        detected = detect_environment(snapshot)
    overrides: dict[str, Any] = {}
    for option, field, part in (
        ("python", "python", "python"),
        ("install", "install", "install"),
        ("test_cmd", "test_cmd", "test_command"),
    ):
        value = getattr(args, option)
        if value:
            overrides[field] = value
            detected.sources[part] = f"--{option.replace('_', '-')}"
    if not overrides:
        return detected
    spec = EnvSpec.model_validate({**detected.spec.model_dump(), **overrides})
    return Detection(spec, detected.sources)


def build_environment(
    client: Any,
    args: argparse.Namespace,
    trusted: RepoSnapshot,
    settings: Settings,
    progress: Progress,
) -> EnvImage:
    """The environment image of ``trusted`` as the options and the detection say, with what
    decided each part kept in its labels."""
    detected = resolve_spec(args, trusted)
    return ensure_environment(
        client, detected.spec, trusted, settings, progress, sources=detected.sources
    )


def _environment(
    args: argparse.Namespace, settings: Settings
) -> tuple[Any, RepoSnapshot, EnvImage]:
    client = connect()
    snapshot = RepoSnapshot.from_git(args.repo, args.ref, args.name)
    trusted = (
        RepoSnapshot.from_git(args.repo, args.env_ref, args.name) if args.env_ref else snapshot
    )
    return client, snapshot, build_environment(client, args, trusted, settings, progress_for(args))


def cmd_env_build(args: argparse.Namespace, settings: Settings) -> int:
    _, _, env = _environment(args, settings)
    if args.json:
        print(
            json.dumps(
                {
                    "image": env.tag,
                    "spec": env.spec.model_dump(mode="json"),
                    "skipped": list(env.skipped),
                    "as_of": env.as_of,
                    "as_of_why": env.as_of_why,
                    "sources": dict(env.sources),
                    "version": env.version,
                }
            )
        )
    else:
        print(env.tag)
        for part, source in sorted(env.sources.items()):
            print(f"  {part}: {source}")
        if env.version:
            print(f"  version from git: {env.version}")
        if env.as_of:
            print(f"  packages as of {env.as_of} ({env.as_of_why})")
        for line in env.skipped:
            print(f"  skipped: {line}")
    return 0


def cmd_run_tests(args: argparse.Namespace, settings: Settings) -> int:
    try:
        patches = [Patch.from_file(p) for p in args.patch]
    except OSError as exc:
        raise ReprobotError(f"cannot read patch: {exc}") from exc
    client, snapshot, env = _environment(args, settings)
    limits = RunLimits.from_settings(settings)
    if args.timeout:
        limits = RunLimits(**{**limits.__dict__, "timeout_s": args.timeout})
    run = run_tests(client, env, snapshot, patches, args.test, args.coverage, limits)
    if args.json:
        print(json.dumps({"image": env.tag, "sha": snapshot.sha, **run.to_json()}))
    else:
        _print_run(run, env)
    # A run that tells nothing about the tests must not look like one that did to a script:
    # the result is printed all the same, and the cause goes to standard error (exit 2).
    problem = run_problem(run, env.spec.test_cmd)
    if problem:
        raise ReprobotError(problem)
    return 0


def _print_run(run: TestRun, env: EnvImage) -> None:
    out = console()
    for patch in run.patches:
        state = f"applied ({patch.method})" if patch.applied else "DOES NOT APPLY"
        out.print(untrusted(f"patch {patch.name}: {state}"))
        if not patch.applied:
            out.print(untrusted(patch.output))
    table = Table("test", "outcome", title=f"{len(run.outcomes)} tests in {env.tag}")
    for test_id, outcome in sorted(run.outcomes.items()):
        value = Outcome.ERROR.value if outcome is Outcome.MISSING else outcome.value
        label = f"{value} (not reported)" if outcome is Outcome.MISSING else value
        table.add_row(untrusted(test_id), f"[{_STYLE[value]}]{label}[/]")
    if run.outcomes:
        out.print(table)
    counts: dict[str, int] = {}
    for outcome in run.outcomes.values():
        counts[outcome.value] = counts.get(outcome.value, 0) + 1
    summary = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no tests ran"
    out.print(f"{summary} in {run.duration_s:.1f}s", markup=False)
    if run.unmatched:
        out.print(
            untrusted(
                f"not counted: {len(run.unmatched)} reported test(s) pytest never collected: "
                + ", ".join(run.unmatched)
            )
        )
    if run.limits_hit:
        out.print(f"limits hit: {', '.join(sorted(run.limits_hit))}", markup=False)
    if run.error:
        out.print(untrusted(f"error: {run.error}"))
        out.print(untrusted(run.log_excerpt[-3000:]))
    if run.coverage is not None:
        statements = sum(len(fc.statements) for fc in run.coverage.values())
        executed = sum(len(fc.executed) for fc in run.coverage.values())
        share = executed / statements if statements else 0.0
        out.print(f"coverage: {executed}/{statements} statements ({share:.0%})", markup=False)
