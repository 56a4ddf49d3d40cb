"""Sandbox overhead: one test file run in the sandbox vs. the same pytest command on the host.

The environment is warm (its image exists or is built first, not timed). The host side is a
virtualenv under ``--out`` installed from the image's own pins (the ``pip freeze`` its build
recorded) plus the project, editable, from the same tree. Both sides run the same pytest
command line (the runner's options included), five times each; medians are compared.

    .venv/bin/python benchmarks/overhead.py --instances DATA/instances.jsonl \\
        --env-specs DATA/env_specs.json --repos REPOS --out OUT
"""

from __future__ import annotations

import argparse
import io
import json
import shutil
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

from reprobot.bench.data.instances import load_instances
from reprobot.bench.envs.spec_table import (
    default_overlay,
    env_spec_for,
    load_env_specs,
    split_env_words,
)
from reprobot.logs import configure_logging
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment, parse_build_result
from reprobot.validation.env.envspec import manifests_fingerprint
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.container import connect
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.snapshot import RepoSnapshot

# What runner.py appends to the project's pytest command (its JUnit report and robustness options).
RUNNER_OPTIONS = [
    "-o",
    "junit_family=xunit1",
    "--tb=short",
    "-p",
    "no:cacheprovider",
    "--continue-on-collection-errors",
]


def image_pins(env: EnvImage, settings: Settings) -> list[str]:
    """The ``pip freeze`` lines the environment's build recorded, without editable installs."""
    log = settings.logs_dir / f"env-{env.tag.rsplit('/', 1)[-1].replace(':', '-')}.log"
    result = parse_build_result(log.read_bytes()) if log.exists() else None
    if not result or "freeze" not in result:
        raise SystemExit(f"no pip freeze recorded in {log}; rebuild the environment")
    return [
        line
        for line in result["freeze"]
        if line.strip() and not line.startswith(("-e ", "#")) and " @ file://" not in line
    ]


def host_venv(out: Path, pins: list[str], tree: Path, python: str) -> Path:
    """A virtualenv with ``pins`` and the project at ``tree`` (editable); reused when present."""
    venv = out / "hostvenv"
    marker = venv / "pins.txt"
    if marker.exists() and marker.read_text() == "\n".join(pins):
        return venv
    shutil.rmtree(venv, ignore_errors=True)
    subprocess.run([python, "-m", "venv", str(venv)], check=True)
    pip = [
        str(venv / "bin" / "python"),
        "-m",
        "pip",
        "install",
        "-q",
        "--disable-pip-version-check",
    ]
    subprocess.run([*pip, "pip<25", "setuptools<70", "wheel"], check=True)
    requirements = venv / "requirements.txt"
    requirements.write_text("\n".join(pins) + "\n")
    subprocess.run([*pip, "-r", str(requirements)], check=True)
    subprocess.run([*pip, "--no-deps", "--no-build-isolation", "-e", str(tree)], check=True)
    marker.write_text("\n".join(pins))
    return venv


def host_tree(snapshot: RepoSnapshot, out: Path) -> Path:
    """The snapshot's tree, unpacked under ``out`` (outside the project)."""
    tree = out / "hostsrc" / snapshot.repo.replace("/", "__") / snapshot.sha[:12]
    if not tree.exists():
        tree.mkdir(parents=True)
        data = b"".join(snapshot.iter_tar(""))
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(tree, filter="data")
    return tree


def time_host(
    venv: Path, tree: Path, test_cmd: str, env_vars: dict[str, str], target: str
) -> float:
    assignments, words = split_env_words(test_cmd)
    rest = words[1:] if Path(words[0]).name in ("pytest", "py.test") else words[3:]
    env = {
        "PATH": f"{venv / 'bin'}:/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(env_vars)
    env.update(dict(a.split("=", 1) for a in assignments))
    with tempfile.TemporaryDirectory(prefix="reprobot-host-") as tmp:
        env["HOME"] = tmp
        argv = [str(venv / "bin" / "python"), "-m", "pytest", *rest]
        argv += [f"--junitxml={tmp}/junit.xml", *RUNNER_OPTIONS, target]
        started = time.monotonic()
        proc = subprocess.run(argv, cwd=tree, env=env, capture_output=True, check=False)
        elapsed = time.monotonic() - started
    if proc.returncode not in (0, 1):
        tail = proc.stdout.decode("utf-8", "replace")[-2000:]
        raise SystemExit(f"host pytest exited {proc.returncode}:\n{tail}")
    return elapsed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description="sandbox vs. host time of one test file")
    parser.add_argument("--repos", type=Path, required=True)
    parser.add_argument("--instances", type=Path, required=True, help="instances JSON-lines file")
    parser.add_argument("--env-specs", type=Path, required=True, help="environment table (JSON)")
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--instance", default="pallets__flask-5063")
    parser.add_argument("--test-file", default=None, help="default: the test patch's first file")
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--host-python", default=sys.executable)
    args = parser.parse_args(argv)
    configure_logging(level=30)
    console = Console(width=None if sys.stdout.isatty() else 150)

    settings = Settings()
    instance = next(i for i in load_instances(args.instances) if i.instance_id == args.instance)
    table = load_env_specs(args.env_specs, default_overlay())
    spec = env_spec_for(table, instance.repo, instance.version)
    path = args.repos / instance.repo.split("/", 1)[1]
    trusted = RepoSnapshot.from_git(path, instance.environment_setup_commit, instance.repo)
    snapshot = RepoSnapshot.from_git(path, instance.base_commit, instance.repo)
    client = connect()
    env = ensure_environment(client, spec, trusted, settings)
    target = args.test_file or instance.test_files[0]
    reinstall = (not env.editable) or manifests_fingerprint(snapshot, spec) != env.manifests

    host_python = subprocess.run(
        [args.host_python, "-c", "import sys; print('%d.%d' % sys.version_info[:2])"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.strip()
    if host_python != spec.python:
        console.print(
            f"[yellow]host Python {host_python} differs from the image's {spec.python}[/]"
        )
    args.out.mkdir(parents=True, exist_ok=True)
    tree = host_tree(snapshot, args.out)
    venv = host_venv(args.out, image_pins(env, settings), tree, args.host_python)

    limits = RunLimits.from_settings(settings)
    sandbox: list[float] = []
    host: list[float] = []
    inner: list[float] = []
    with console.status("timing") as status:
        # One untimed run each, so that neither side pays first-touch costs (page cache, pyc).
        run_tests(client, env, snapshot, (), [target], limits=limits)
        time_host(venv, tree, spec.test_cmd, spec.env, target)
        for i in range(args.repeat):
            status.update(f"run {i + 1}/{args.repeat}")
            started = time.monotonic()
            run = run_tests(client, env, snapshot, (), [target], limits=limits)
            sandbox.append(time.monotonic() - started)
            inner.append(run.duration_s)
            if run.error or not run.outcomes:
                raise SystemExit(f"sandbox run failed: {run.error}\n{run.log_excerpt[-2000:]}")
            host.append(time_host(venv, tree, spec.test_cmd, spec.env, target))

    s_med, h_med = statistics.median(sandbox), statistics.median(host)
    budget = 1.25 * h_med + 0.5
    out: dict[str, Any] = {
        "instance": instance.instance_id,
        "test_file": target,
        "image": env.tag,
        "reinstall_per_run": reinstall,
        "tests": len(run.outcomes),
        "sandbox_s": [round(x, 3) for x in sandbox],
        "sandbox_container_s": [round(x, 3) for x in inner],
        "host_s": [round(x, 3) for x in host],
        "sandbox_median_s": round(s_med, 3),
        "host_median_s": round(h_med, 3),
        "ratio": round(s_med / h_med, 2),
        "difference_s": round(s_med - h_med, 3),
        "budget_s": round(budget, 3),
        "within_target": s_med <= budget,
    }
    report = Table(title=f"{instance.instance_id}: {target} ({len(run.outcomes)} tests)")
    report.add_column("side")
    for i in range(args.repeat):
        report.add_column(f"#{i + 1}", justify="right")
    report.add_column("median", justify="right")
    report.add_row("sandbox (wall)", *[f"{x:.2f}" for x in sandbox], f"{s_med:.2f}")
    report.add_row(
        "  in container", *[f"{x:.2f}" for x in inner], f"{statistics.median(inner):.2f}"
    )
    report.add_row("host", *[f"{x:.2f}" for x in host], f"{h_med:.2f}")
    console.print(report)
    verdict = "[green]within[/]" if out["within_target"] else "[red]over[/]"
    console.print(
        f"ratio {out['ratio']}x, difference {out['difference_s']:.2f} s; "
        f"target sandbox <= 1.25 x host + 0.5 s = {budget:.2f} s: {verdict}"
        + ("  (each sandbox run re-installs the project)" if reinstall else "")
    )
    (args.out / "overhead.json").write_text(json.dumps(out, indent=1))
    return 0 if out["within_target"] else 1


if __name__ == "__main__":
    sys.exit(main())
