"""What both benchmark commands share: their inputs resolved, and one context per run
(Docker, settings, limits, the environment table, the output store)."""

from __future__ import annotations

import argparse
from pathlib import Path

import httpx

from reprobot.bench.data.hub import download, parse_ref
from reprobot.bench.data.instances import DatasetError, Instance, load_instances
from reprobot.bench.envs.environments import Prepared, prepare
from reprobot.bench.envs.spec_table import SpecTable, default_overlay, load_env_specs
from reprobot.bench.run.executor import Store, default_workers, interrupt_on_sigterm
from reprobot.console import console
from reprobot.settings import Settings
from reprobot.validation import RunLimits, connect, stop_sandboxes

# Bumped when the evaluation of a stored unit changes meaning, so old results are not reused.
EVALUATION_VERSION = "2"


def env_specs_path(args: argparse.Namespace) -> Path:
    if args.env_specs is not None:
        return Path(args.env_specs)
    for name in ("env_specs.json", "harness_specs.json"):
        candidate = Path(args.instances).parent / name
        if candidate.is_file():
            return candidate
    raise DatasetError(
        f"no env_specs.json or harness_specs.json next to {args.instances}: pass --env-specs"
    )


def resolve_instances(args: argparse.Namespace, settings: Settings) -> None:
    """Turn ``--instances`` into a file: a dataset named ``hub:...`` is downloaded once into
    ``OUT/dataset`` and read from there (so the report hashes what was evaluated)."""
    ref = parse_ref(str(args.instances))
    if ref is None:
        args.instances = Path(args.instances)
        return
    with httpx.Client(base_url=settings.hub_url, follow_redirects=True, timeout=120) as client:
        args.instances = download(ref, client, Path(args.out) / "dataset")


def selected_instances(args: argparse.Namespace) -> list[Instance]:
    instances = load_instances(args.instances)
    if args.only:
        unknown = set(args.only) - {i.instance_id for i in instances}
        if unknown:
            raise DatasetError(f"unknown instance ids: {', '.join(sorted(unknown))}")
        instances = [i for i in instances if i.instance_id in args.only]
    return instances


class Context:
    """What every unit of one command shares: Docker, settings, limits, the spec table."""

    def __init__(self, args: argparse.Namespace, settings: Settings) -> None:
        self.settings = settings
        self.limits = RunLimits.from_settings(settings)
        self.client = connect()
        self.env_specs = env_specs_path(args)
        self.table: SpecTable = load_env_specs(self.env_specs, default_overlay())
        self.repos = Path(args.repos)
        self.store = Store(Path(args.out))
        self.workers = args.workers or default_workers(self.limits.memory_mb)
        self.console = console(stderr=True)
        # Told to stop, a benchmark removes the sandboxes it started instead of leaving them to
        # run until their deadline.
        interrupt_on_sigterm()

    def stop(self) -> None:
        """Start no container any more and remove every one this process started: its units
        are being abandoned."""
        stop_sandboxes(self.client)

    def prepare(self, instance: Instance) -> Prepared:
        return prepare(self.client, instance, self.repos, self.table, self.settings)
