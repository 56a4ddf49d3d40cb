"""An instance's repository snapshots and environment image, built from its trusted commit."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import docker

from reprobot.bench.data.instances import DatasetError, Instance
from reprobot.bench.envs.spec_table import SpecTable, env_spec_for
from reprobot.settings import Settings
from reprobot.validation import EnvImage, RepoSnapshot, absent_files, ensure_environment


@dataclass(frozen=True)
class Prepared:
    """What every evaluation of an instance starts from."""

    base: RepoSnapshot
    env: EnvImage
    # Files of the base commit whose content the clone lacks (left out of every run's tree).
    absent: tuple[str, ...] = ()


def clone_path(repos: Path, repo: str) -> Path:
    """Where ``owner/name`` is cloned under ``repos``: ``repos/name``, or ``repos/owner__name``."""
    name = repo.split("/", 1)[-1]
    for candidate in (repos / name, repos / repo.replace("/", "__")):
        if candidate.is_dir():
            return candidate
    raise DatasetError(f"no clone of {repo} under {repos} (expected {repos / name})")


def prepare(
    client: docker.DockerClient,
    instance: Instance,
    repos: Path,
    table: SpecTable,
    settings: Settings,
) -> Prepared:
    """The base snapshot and the environment image of ``instance``.

    The environment is built from the instance's ``environment_setup_commit``: the trusted tree,
    never a candidate's or a prediction's; it is shared by every instance of that commit. When
    the base commit's manifests differ from it (a requirement added or renamed between the two),
    the base commit, also trusted, adds the difference as a layer of its own."""
    path = clone_path(repos, instance.repo)
    # Clones brought here with a size limit may lack their largest files' content: the runs
    # leave those files out, and the result names them.
    trusted = RepoSnapshot.from_git(
        path, instance.environment_setup_commit, instance.repo, absent_ok=True
    )
    base = RepoSnapshot.from_git(path, instance.base_commit, instance.repo, absent_ok=True)
    spec = env_spec_for(table, instance.repo, instance.version)
    shared = ensure_environment(client, spec, trusted, settings)
    return Prepared(
        base=base,
        env=ensure_environment(client, spec, base, settings, on=shared),
        absent=absent_files(path, instance.base_commit),
    )
