"""``reprobot bench repos``: first contact with each repository of a list. Detect its
environment (no table, no overrides), build the image, run its tests once, and report per
repository what decided the setup, what the build cost and whether the suite works."""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import docker
import docker.errors

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.envs.environments import clone_path
from reprobot.bench.repos.repo_list import RepoEntry, load_repo_list
from reprobot.bench.repos.report import write_repos_report
from reprobot.bench.repos.row import Build, Row, build_cause, failed_row, make_row
from reprobot.bench.repos.selection import choose_tests, file_sizes
from reprobot.bench.run.executor import (
    Failed,
    Store,
    Unit,
    UnitResult,
    default_workers,
    interrupt_on_sigterm,
    run_units,
    safe_key,
)
from reprobot.bench.run.provenance import code_sha256, fingerprint, provenance
from reprobot.bench.run.sandbox_runs import write_run_log
from reprobot.console import console
from reprobot.errors import ReprobotError
from reprobot.settings import Settings
from reprobot.validation import (
    Detection,
    EnvImage,
    ImageBuildError,
    RepoSnapshot,
    RunLimits,
    TestRun,
    connect,
    created_epoch,
    detect_environment,
    ensure_environment,
    run_tests,
    stop_sandboxes,
)

# Bumped when a stored row changes meaning, so that rows of an older evaluation are not reused.
EVALUATION_VERSION = "1"
DEFAULT_MAX_TESTS = 200
_MB = 1024**2


def find_clone(repos: Path, repo: str) -> Path:
    """The clone of ``owner/name`` under ``repos``: ``owner+name`` (as mirrors are named), else
    where ``bench swt`` looks (``name``, ``owner__name``)."""
    plus = repos / repo.replace("/", "+")
    if plus.is_dir():
        return plus
    try:
        return clone_path(repos, repo)
    except DatasetError:
        raise DatasetError(
            f"no clone of {repo} under {repos} (looked for {plus.name}, "
            f"{repo.replace('/', '__')} and {repo.split('/', 1)[-1]})"
        ) from None


# What ``bench repos`` detects with: the detection the App and the command line share.
Detector = Callable[[RepoSnapshot], Detection]


def detector_name(detector: Detector) -> str:
    module = getattr(detector, "__module__", "") or ""
    return f"{module}.{getattr(detector, '__qualname__', type(detector).__name__)}"


def run_repos(
    args: argparse.Namespace, settings: Settings, detector: Detector = detect_environment
) -> int:
    started = time.monotonic()
    out = Path(args.out)
    entries = load_repo_list(Path(args.list))
    if args.only:
        unknown = set(args.only) - {e.repo for e in entries}
        if unknown:
            raise DatasetError(f"not in {args.list}: {', '.join(sorted(unknown))}")
        entries = [e for e in entries if e.repo in args.only]
    limits = RunLimits.from_settings(settings)
    client = connect()
    store = Store(out)
    workers = args.workers or default_workers(limits.memory_mb)
    messages = console(stderr=True)
    # Told to stop, the benchmark removes the sandboxes it started instead of leaving them.
    interrupt_on_sigterm()
    keys = {safe_key(e.repo.replace("/", "__")): e for e in entries}
    snapshots: dict[str, RepoSnapshot] = {}
    early: dict[str, Row] = {}
    for key, entry in keys.items():
        try:
            path = find_clone(Path(args.repos), entry.repo)
            snapshots[key] = RepoSnapshot.from_git(path, entry.commit, entry.repo, absent_ok=True)
        except ReprobotError as exc:
            early[key] = failed_row(entry.repo, entry.commit, str(exc))
    name = detector_name(detector)
    units = [
        Unit(
            key=key,
            fingerprint=fingerprint(
                EVALUATION_VERSION, code_sha256(), snap.repo, snap.sha, args.max_tests, name
            ),
            label=snap.repo,
        )
        for key, snap in snapshots.items()
    ]

    def work(unit: Unit) -> Row:
        return first_contact(
            client,
            snapshots[unit.key],
            settings,
            limits,
            args.max_tests,
            store.log_dir(unit.key),
            detector,
        )

    results = run_units(
        units,
        work,
        Row.from_json,
        store,
        workers,
        messages,
        "bench repos",
        on_stop=lambda: stop_sandboxes(client),
    )
    rows = [
        early[key] if key in early else row_from_result(entry, snapshots[key], results[key])
        for key, entry in keys.items()
    ]
    header = provenance(
        {"list": Path(args.list)},
        ["reprobot", *sys.argv[1:]],
        {
            "repos": str(args.repos),
            "detector": name,
            "workers": workers,
            "limits": limits.__dict__,
        },
    )
    timing = store.record_run("repos", time.monotonic() - started)
    written = write_repos_report(out, header, rows, timing, args.max_tests)
    print(written.markdown)
    messages.print(f"reports: {', '.join(str(p) for p in written.paths.values())}")
    return 0 if not any(isinstance(r, Failed) for r in results.values()) else 1


def row_from_result(entry: RepoEntry, snapshot: RepoSnapshot, result: UnitResult[Row]) -> Row:
    """A unit's result as a row; a unit that raised (a bug, Docker failing) is a row that says
    so."""
    if isinstance(result, Failed):
        return failed_row(entry.repo, snapshot.sha, f"error: {result.error}")
    return result.record


def first_contact(
    client: docker.DockerClient,
    snapshot: RepoSnapshot,
    settings: Settings,
    limits: RunLimits,
    max_tests: int,
    logs: Path,
    detector: Detector = detect_environment,
) -> Row:
    """Detect, build and run one repository; every step's output goes into ``logs``."""
    try:
        detected = detector(snapshot)
    except (ReprobotError, ValueError, TypeError) as exc:
        (logs / "detection.log").write_text(f"{type(exc).__name__}: {exc}\n", encoding="utf-8")
        return failed_row(snapshot.repo, snapshot.sha, f"detection failed: {exc}")
    _write_detection(logs / "detection.json", snapshot, detected)
    build, env = build_environment(client, detected, snapshot, settings, logs)
    if env is None:
        return make_row(snapshot.repo, snapshot.sha, detected, build)
    selection = choose_tests(file_sizes(snapshot), max_tests)
    run = run_tests(client, env, snapshot, (), selection.files, False, limits)
    _write_run(logs, run, selection.files)
    return make_row(snapshot.repo, snapshot.sha, detected, build, selection, run)


def build_environment(
    client: docker.DockerClient,
    detected: Detection,
    snapshot: RepoSnapshot,
    settings: Settings,
    logs: Path,
) -> tuple[Build, EnvImage | None]:
    """The environment image as ``reprobot env build`` makes it, timed; a build that fails is a
    ``Build`` with its cause, its log copied into ``logs``."""
    since = time.time()
    clock = time.monotonic()
    try:
        env = ensure_environment(
            client, detected.spec, snapshot, settings, sources=detected.sources
        )
    except ImageBuildError as exc:
        wall = round(time.monotonic() - clock, 1)
        _copy(exc.log_path, logs / "build.log")
        return Build(ok=False, cause=build_cause(str(exc)), wall_s=wall), None
    wall = round(time.monotonic() - clock, 1)
    image = client.images.get(env.tag)
    # Docker's creation time has whole seconds: an image made in this run is not older than it.
    built_now = created_epoch(str(image.attrs.get("Created", ""))) >= int(since)
    recorded = (image.labels or {}).get("reprobot.env.build-seconds")
    build_s = _seconds(recorded) if recorded else (wall if built_now else None)
    size = int(image.attrs.get("Size") or 0)
    # Where ``ensure_environment`` wrote the build's log (a failed build names it instead).
    _copy(
        settings.logs_dir / f"env-{env.tag.rsplit('/', 1)[-1].replace(':', '-')}.log",
        logs / "build.log",
    )
    return (
        Build(
            ok=True,
            image=env.tag,
            build_s=build_s,
            wall_s=wall,
            built_now=built_now,
            size_mb=round(size / _MB, 1),
            added_mb=_added_mb(client, image.attrs, size),
        ),
        env,
    )


def _seconds(text: str) -> float | None:
    try:
        return float(text)
    except ValueError:
        return None


def _added_mb(client: docker.DockerClient, attrs: Mapping[str, Any], size: int) -> float | None:
    """What the image adds to the image it was made from, in MB (None when that is unknown);
    ``attrs`` is the image's JSON as Docker gives it."""
    parent = str(attrs.get("Parent") or "")
    if not parent:
        return None
    try:
        below = int(client.images.get(parent).attrs.get("Size") or 0)
    except docker.errors.DockerException:
        return None
    return round(max(0, size - below) / _MB, 1)


def _copy(source: Path | None, target: Path) -> None:
    if source is not None and source.is_file():
        shutil.copyfile(source, target)


def _write_detection(path: Path, snapshot: RepoSnapshot, detected: Detection) -> None:
    record = {
        "repo": snapshot.repo,
        "commit": snapshot.sha,
        "spec": detected.spec.model_dump(mode="json"),
        "sources": dict(detected.sources),
    }
    path.write_text(json.dumps(record, indent=1), encoding="utf-8")


def _write_run(logs: Path, run: TestRun, selected: tuple[str, ...]) -> None:
    write_run_log(logs / "tests.log", run)
    record = run.to_json()
    record.pop("coverage", None)
    record["selected_files"] = list(selected)
    (logs / "outcomes.json").write_text(json.dumps(record, indent=1), encoding="utf-8")
