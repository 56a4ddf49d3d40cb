"""Harness fidelity: does our sandbox reproduce the SWE-bench verdicts of the golden patches?

For every instance: build the environment from the instance's environment_setup_commit (the
trusted tree) with the EnvSpec converted from env_specs.json, then run the golden test patch's
tests on base_commit with the test patch applied (R) and with test patch + golden fix (R∘X). Every
FAIL_TO_PASS id must fail on R and pass on R∘X; every PASS_TO_PASS id must pass on both.

    .venv/bin/python benchmarks/fidelity.py --instances DATA/instances.jsonl \\
        --env-specs DATA/env_specs.json --repos REPOS --out OUT/fidelity
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import docker
from rich.console import Console
from rich.progress import Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from reprobot.bench.data.instances import Instance, load_instances
from reprobot.bench.data.test_ids import (
    IdMapping,
    fails,
    map_test_ids,
    patched_file_list,
    patched_sources,
)
from reprobot.bench.envs.spec_table import SpecTable, default_overlay, env_spec_for, load_env_specs
from reprobot.bench.run.sandbox_runs import write_run_log
from reprobot.errors import ReprobotError
from reprobot.logs import configure_logging
from reprobot.settings import Settings
from reprobot.validation.env.base_image import image_exists
from reprobot.validation.env.env_image import EnvImage, ensure_environment, environment_tag
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.errors import ImageBuildError
from reprobot.validation.results.testrun import Outcome, TestRun
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.container import connect
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.snapshot import RepoSnapshot


@dataclass
class Result:
    """What one instance came to."""

    instance_id: str
    verdict: str = "not run"
    env_tag: str = ""
    env_build_s: float | None = None
    env_cached: bool = False
    env_skipped: list[str] = field(default_factory=list)
    env_log: str = ""
    run_r_s: float | None = None
    run_rx_s: float | None = None
    f2p_ok: int = 0
    f2p_total: int = 0
    p2p_ok: int = 0
    p2p_total: int = 0
    unmappable: dict[str, str] = field(default_factory=dict)
    node_ids: dict[str, list[str]] = field(default_factory=dict)
    tests: dict[str, dict[str, Any]] = field(default_factory=dict)
    runs: dict[str, dict[str, Any]] = field(default_factory=dict)
    error: str | None = None


def env_log_path(settings: Settings, tag: str) -> Path:
    """Where ensure_environment writes the build log of ``tag``."""
    return settings.logs_dir / f"env-{tag.rsplit('/', 1)[-1].replace(':', '-')}.log"


def run_summary(run: TestRun) -> dict[str, Any]:
    data = run.to_json()
    data.pop("coverage", None)
    data.pop("tests", None)
    data["log_excerpt_tail"] = run.log_excerpt[-3000:]
    return data


# Failures that come from the sandbox having no network at all (by design), not from the code.
NETWORK_ERRORS = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known"
    r"|No address associated with hostname|Errno 101\b"
)


def nodes_of(mapping: IdMapping, test_id: str, run: TestRun) -> list[str]:
    """The node ids of ``run`` that instance id ``test_id`` stands for, that have details."""
    prefix = mapping.truncated.get(test_id)
    if prefix is not None:
        return [n for n in run.failures if n.startswith(prefix)]
    return [n for n in mapping.node_ids[test_id] if n in run.failures]


def judge(
    instance: Instance, mapping: IdMapping, before: TestRun, after: TestRun, result: Result
) -> None:
    """Fill in per-test outcomes, the F2P/P2P counts and the verdict."""

    for kind, ids in (("F2P", instance.fail_to_pass), ("P2P", instance.pass_to_pass)):
        for test_id in ids:
            if test_id not in mapping.node_ids:
                result.tests[test_id] = {"kind": kind, "unmappable": mapping.unmappable[test_id]}
                continue
            r = mapping.outcome(test_id, before.outcomes)
            rx = mapping.outcome(test_id, after.outcomes)
            ok = (
                (fails(r) and rx is Outcome.PASSED)
                if kind == "F2P"
                else (r is Outcome.PASSED and rx is Outcome.PASSED)
            )
            entry: dict[str, Any] = {"kind": kind, "R": r.value, "RX": rx.value, "ok": ok}
            for label, run in (("R", before), ("RX", after)):
                detail = next((run.failures[n] for n in nodes_of(mapping, test_id, run)), None)
                if detail and not ok:
                    entry[f"{label}_detail"] = detail[:1500]
                    if NETWORK_ERRORS.search(detail):
                        entry["hint"] = "needs network: the sandbox runs without any"
            result.tests[test_id] = entry
            if kind == "F2P":
                result.f2p_total += 1
                result.f2p_ok += ok
            else:
                result.p2p_total += 1
                result.p2p_ok += ok
    unmapped_f2p = [t for t in instance.fail_to_pass if t in mapping.unmappable]
    if not (before.patches_applied and after.patches_applied):
        result.verdict = "patch did not apply"
    elif before.error or after.error:
        result.verdict = "run error"
    elif unmapped_f2p or result.f2p_total == 0:
        result.verdict = "F2P unmappable"
    elif result.f2p_ok == result.f2p_total and result.p2p_ok == result.p2p_total:
        result.verdict = "ok"
    else:
        result.verdict = "mismatch"


def run_instance(
    client: docker.DockerClient,
    instance: Instance,
    repos: Path,
    table: SpecTable,
    settings: Settings,
    limits: RunLimits,
    logs: Path,
    build_times: dict[str, float],
) -> Result:
    result = Result(instance.instance_id)
    path = repos / instance.repo.split("/", 1)[1]
    trusted = RepoSnapshot.from_git(path, instance.environment_setup_commit, instance.repo)
    base = RepoSnapshot.from_git(path, instance.base_commit, instance.repo)
    spec = env_spec_for(table, instance.repo, instance.version)

    test_patch = instance.golden_test_patch
    sources = patched_sources(base, test_patch, instance.test_files)
    mapping = map_test_ids(
        [*instance.fail_to_pass, *instance.pass_to_pass],
        sources,
        patched_file_list(base, test_patch),
    )
    result.unmappable = dict(mapping.unmappable)
    result.node_ids = {k: list(v) for k, v in mapping.node_ids.items()}

    started = time.monotonic()
    try:
        env = _environment(client, spec, trusted, settings, result)
    except ImageBuildError as exc:
        result.verdict = "env build failed"
        result.error = str(exc)
        result.env_log = str(exc.log_path or "")
        return result
    if result.env_cached:
        # The time an earlier build of the same image took (in this run or a recorded one).
        result.env_build_s = build_times.get(env.tag)
    else:
        result.env_build_s = build_times[env.tag] = round(time.monotonic() - started, 1)

    selection = mapping.selection
    before = run_tests(client, env, base, [test_patch], selection, limits=limits)
    after = run_tests(
        client, env, base, [test_patch, instance.golden_patch], selection, limits=limits
    )
    result.run_r_s, result.run_rx_s = round(before.duration_s, 1), round(after.duration_s, 1)
    write_run_log(logs / f"{instance.instance_id}.R.log", before)
    write_run_log(logs / f"{instance.instance_id}.RX.log", after)
    result.runs = {"R": run_summary(before), "RX": run_summary(after)}
    judge(instance, mapping, before, after, result)
    return result


def _environment(
    client: docker.DockerClient,
    spec: EnvSpec,
    trusted: RepoSnapshot,
    settings: Settings,
    result: Result,
) -> EnvImage:
    # The tag ensure_environment will use, to tell a fresh build from a cached image.
    tag = environment_tag(client, spec, trusted, settings)
    result.env_cached = image_exists(client, tag)
    result.env_log = str(env_log_path(settings, tag))
    env = ensure_environment(client, spec, trusted, settings)
    result.env_tag = env.tag
    result.env_skipped = list(env.skipped)
    return env


def _fmt(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def render(results: list[Result], console: Console) -> None:
    table = Table(title="Harness fidelity (golden patches)")
    for column in (
        "instance",
        "env build s",
        "R s",
        "R∘X s",
        "F2P ok",
        "P2P ok",
        "unmappable",
        "verdict",
    ):
        table.add_column(column, justify="left" if column in ("instance", "verdict") else "right")
    for r in results:
        build = _fmt(r.env_build_s) + (" (cached)" if r.env_cached else "")
        style = "green" if r.verdict == "ok" else "red"
        table.add_row(
            r.instance_id,
            build,
            _fmt(r.run_r_s),
            _fmt(r.run_rx_s),
            f"{r.f2p_ok}/{r.f2p_total}",
            f"{r.p2p_ok}/{r.p2p_total}",
            str(len(r.unmappable)),
            f"[{style}]{r.verdict}[/]",
        )
    console.print(table)
    ok = sum(r.verdict == "ok" for r in results)
    console.print(f"{ok}/{len(results)} instances reproduce the harness's verdict")
    for r in results:
        for test_id, reason in r.unmappable.items():
            console.print(f"  {r.instance_id}: unmappable id {test_id!r}: {reason}", markup=False)
        for test_id, entry in r.tests.items():
            if entry.get("ok") is False:
                console.print(
                    f"  {r.instance_id}: {entry['kind']} {test_id}:"
                    f" R={entry['R']} R∘X={entry['RX']}"
                    + (f" ({entry['hint']})" if "hint" in entry else ""),
                    markup=False,
                )
        if r.error:
            console.print(f"  {r.instance_id}: {r.error}", markup=False)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument(
        "--repos", type=Path, required=True, help="folder of clones named by repository"
    )
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--instances", type=Path, required=True, help="instances JSON-lines file")
    parser.add_argument("--env-specs", type=Path, required=True, help="environment table (JSON)")
    parser.add_argument("--overrides", type=Path, default=default_overlay())
    parser.add_argument("--only", action="append", default=[], help="instance id (repeatable)")
    args = parser.parse_args(argv)
    configure_logging(level=30)

    settings = Settings()
    limits = RunLimits.from_settings(settings)
    client = connect()
    table = load_env_specs(args.env_specs, args.overrides if args.overrides.exists() else None)
    instances = [
        i for i in load_instances(args.instances) if not args.only or i.instance_id in args.only
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    logs = args.out / "logs"
    logs.mkdir(exist_ok=True)
    out_json = args.out / "fidelity.json"
    previous: dict[str, Any] = {}
    if out_json.exists():
        previous = {
            r["instance_id"]: r for r in json.loads(out_json.read_text()).get("instances", [])
        }

    # Wide enough for the table when the output goes to a file.
    build_times: dict[str, float] = {
        r["env_tag"]: r["env_build_s"]
        for r in previous.values()
        if r.get("env_tag") and r.get("env_build_s") is not None
    }
    console = Console(width=None if sys.stdout.isatty() else 150)
    results: list[Result] = []
    with Progress(
        SpinnerColumn(), TextColumn("{task.description}"), TimeElapsedColumn(), console=console
    ) as progress:
        task = progress.add_task("fidelity", total=len(instances))
        for instance in instances:
            progress.update(task, description=instance.instance_id)
            try:
                result = run_instance(
                    client, instance, args.repos, table, settings, limits, logs, build_times
                )
            except ReprobotError as exc:
                result = Result(instance.instance_id, verdict="error", error=str(exc))
            results.append(result)
            verdict = result.verdict if result.verdict == "ok" else f"[red]{result.verdict}[/]"
            progress.console.print(f"{instance.instance_id}: {verdict}")
            progress.advance(task)

    # Keep the other instances of an earlier run when only some were re-run.
    merged = {**previous, **{r.instance_id: r.__dict__ for r in results}}
    order = [i.instance_id for i in load_instances(args.instances)]
    out_json.write_text(
        json.dumps(
            {
                "instances": [merged[i] for i in order if i in merged],
                "ok": sum(merged[i]["verdict"] == "ok" for i in order if i in merged),
            },
            indent=1,
            default=str,
        )
    )
    render(results, console)
    console.print(f"details: {out_json}  logs: {logs}", markup=False)
    return 0 if all(r.verdict == "ok" for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
