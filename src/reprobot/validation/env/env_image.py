"""Environment images: a base image plus one repository's dependencies, tagged by content hash.

Built once from a trusted tree (never a fork's head), with network and the host's index
settings; every later run on a tree whose manifests are unchanged reuses it offline.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import docker
import structlog

from reprobot.progress import SILENT, Progress
from reprobot.settings import Settings
from reprobot.validation.env.base_image import (
    VENV_PATH,
    ensure_base_image,
    file_lock,
    image_exists,
)
from reprobot.validation.env.build_log import failure_cause
from reprobot.validation.env.detect.scm_version import VERSION_VARIABLES, GitVersion, git_version
from reprobot.validation.env.envspec import (
    EnvSpec,
    compiled_fingerprint,
    environment_key,
    manifests_fingerprint,
)
from reprobot.validation.env.image_cache import ENV_REPOSITORY_PREFIX, mark_used, prune
from reprobot.validation.env.pipconf import host_index_settings
from reprobot.validation.env.resolution_date import AsOf, parse_moment, resolution_moment
from reprobot.validation.errors import ImageBuildError
from reprobot.validation.sandbox.container import ContainerSpec, run_container
from reprobot.validation.sandbox.scripts import script_text
from reprobot.validation.sandbox.tarstream import small_tar
from reprobot.validation.source.snapshot import RepoSnapshot

log = structlog.get_logger(__name__)

_CA_PATH = "/run/reprobot/ca.pem"
_RESULT_MARK = b"REPROBOT-RESULT "
# What resolves a bounded build: pip, through a local index hiding later uploads
# (``scripts/dated_index.py``). A change to how that index bounds is a new name, so new images.
DATED_RESOLVER = "pip via dated-index/1"


@dataclass(frozen=True)
class EnvImage:
    """A built environment image and what it was built from."""

    tag: str
    spec: EnvSpec
    manifests: str
    editable: bool
    source_sha: str
    skipped: tuple[str, ...] = ()
    relaxed: tuple[str, ...] = ()
    # The compiled sources the image's editable install built ("" when none, or unknown).
    compiled: str = ""
    # The moment its packages resolved at (ISO 8601, "" when not bounded) and why then.
    as_of: str = ""
    as_of_why: str = ""
    # What the build installed (``pip freeze``); empty for images built before it was recorded.
    packages: tuple[str, ...] = ()
    # For each part of the spec, what decided it (``detect.Detection.sources``); empty for a
    # spec given whole (a benchmark's table, ``--spec``).
    sources: Mapping[str, str] = field(default_factory=dict)
    # The version given to a project whose version comes from git (``detect.scm_version``).
    version: str = ""
    # When the build finished (ISO 8601, "" for images built before it was recorded): a
    # resolution moment later than this (a commit of today, plus its day of grace) never was.
    built_at: str = ""

    @classmethod
    def of_image(cls, tag: str, image: Any) -> EnvImage:
        """The environment of the Docker image ``image`` (tagged ``tag``): its labels, and the
        engine's creation time for an image built before its build's end was labelled."""
        env = cls.from_labels(tag, image.labels)
        if env.built_at:
            return env
        created = parse_moment(str(image.attrs.get("Created") or "")[:19] + "Z")
        if created is None:
            return env
        return replace(env, built_at=created.strftime("%Y-%m-%dT%H:%M:%SZ"))

    @classmethod
    def from_labels(cls, tag: str, labels: dict[str, str]) -> EnvImage:
        return cls(
            tag=tag,
            spec=EnvSpec.model_validate_json(labels["reprobot.env.spec"]),
            manifests=labels["reprobot.env.manifests"],
            editable=labels.get("reprobot.env.editable") == "1",
            source_sha=labels.get("reprobot.env.source", ""),
            skipped=tuple(json.loads(labels.get("reprobot.env.skipped", "[]"))),
            relaxed=tuple(json.loads(labels.get("reprobot.env.relaxed", "[]"))),
            compiled=labels.get("reprobot.env.compiled", ""),
            as_of=labels.get("reprobot.env.as-of", ""),
            as_of_why=labels.get("reprobot.env.as-of-why", ""),
            packages=tuple(json.loads(labels.get("reprobot.env.packages", "[]"))),
            sources=json.loads(labels.get("reprobot.env.sources", "{}")),
            version=labels.get("reprobot.env.version", ""),
            built_at=labels.get("reprobot.env.built-at", ""),
        )


def conda_names() -> dict[str, str]:
    """Conda package names whose PyPI name differs (``conda_names.json``), lower-cased."""
    data = json.loads(Path(__file__).with_name("conda_names.json").read_text(encoding="utf-8"))
    return {str(k).lower(): str(v) for k, v in data["names"].items()}


def repo_slug(repo: str) -> str:
    """A Docker-repository-safe form of ``owner/name``."""
    slug = re.sub(r"[^a-z0-9]+", "-", repo.lower()).strip("-")
    return slug[:60] or "repo"


def ensure_environment(
    client: docker.DockerClient,
    spec: EnvSpec,
    snapshot: RepoSnapshot,
    settings: Settings,
    progress: Progress = SILENT,
    on: EnvImage | None = None,
    sources: Mapping[str, str] | None = None,
) -> EnvImage:
    """Return the environment image for ``spec`` and ``snapshot``'s manifests, building it once;
    ``progress`` hears of the builds, and of nothing when the images exist already.

    With ``on`` (an image of the same spec built from another trusted commit), a tree whose
    manifests differ from ``on``'s is installed on top of it, as a layer of its own: the
    difference (a requirement added or changed since) comes in with network, and ``on`` is
    returned unchanged when the manifests are the same. ``snapshot`` must be trusted.

    Packages resolve as the index stood at ``snapshot``'s commit (``resolution_date``); the
    image serves every later tree with the same manifests, as a lock file made that day would.
    ``sources`` (what decided each part of ``spec``) is kept in the image's labels."""
    fingerprint = manifests_fingerprint(snapshot, spec)
    as_of = resolution_moment(snapshot.commit_time(), spec.python, settings.env_as_of_commit)
    keyed = _content_key(spec, fingerprint, as_of)
    if on is not None and on.spec != spec:
        raise ValueError("an environment layer must keep the spec of the image below it")
    if on is not None:
        # A layer also builds compiled sources that differ from those ``on`` built, so that
        # every run on this trusted tree need not compile them again, offline.
        compiled = compiled_fingerprint(snapshot)
        if on.manifests == fingerprint and on.compiled in ("", compiled):
            return on
        keyed = f"{keyed}\0{compiled}"
        parent = on.tag
    else:
        parent = ensure_base_image(client, spec.python, settings, progress)
    parent_id = client.images.get(parent).id or parent
    key = environment_key(spec, keyed, parent_id)
    tag = f"{ENV_REPOSITORY_PREFIX}{repo_slug(snapshot.repo)}:{key}"
    mark_used(settings, tag)
    if image_exists(client, tag):
        return EnvImage.of_image(tag, client.images.get(tag))
    with file_lock(settings, f"env-{key}"):
        if not image_exists(client, tag):
            what = (
                f"building the environment of {snapshot.repo} @ {snapshot.sha[:12]} "
                f"(Python {spec.python}; done once per dependency change)"
                if on is None
                else f"installing what {snapshot.repo} @ {snapshot.sha[:12]} adds to its "
                f"environment (its manifests differ from {on.source_sha[:12]}'s)"
            )
            with progress.step(what, kind="environment"):
                build = _Build(parent, tag, spec, snapshot, fingerprint, dict(sources or {}))
                try:
                    _build(client, build, settings, as_of)
                except ImageBuildError as exc:
                    later = later_moment(as_of, exc)
                    if later is None:
                        raise
                    log.info("env_image.rebuild_as_of_later", tag=tag, as_of=later.label())
                    _build(client, build, settings, later)
            if settings.env_cache_gb > 0:
                prune(client, settings, int(settings.env_cache_gb * 1024**3))
    return EnvImage.of_image(tag, client.images.get(tag))


def later_moment(as_of: AsOf, failure: ImageBuildError) -> AsOf | None:
    """The moment to build again at when a build as of ``as_of`` failed after taking releases
    uploaded after it: a release pinned exactly (a pin list made later than the commit, as the
    benchmark's are) or the first one with a wheel for this Python may need later releases of
    their own requirements too. None when the build took no such release."""
    later = parse_moment(failure.released_later)
    if as_of.moment is None or later is None or later <= as_of.moment:
        return None
    why = (
        f"the newest release the build took although it came out later: as of {as_of.label()} "
        f"({as_of.why}) the build failed"
    )
    return AsOf(later, as_of.commit, why)


def _content_key(spec: EnvSpec, fingerprint: str, as_of: AsOf) -> str:
    """What, besides the spec and the image below, decides what a build installs."""
    keyed = fingerprint
    if spec.binary_requirements:
        # The conda-name table decides what such a build installs: a change to it is a new image.
        table = json.dumps(conda_names(), sort_keys=True)
        keyed = hashlib.sha256(f"{fingerprint}\0{table}".encode()).hexdigest()
    if as_of.moment is not None:
        # Bounded and unbounded builds of the same manifests differ; the moment itself is not
        # part of the key, so that a later commit with the same manifests reuses the image.
        keyed = f"{keyed}\0{DATED_RESOLVER}"
    return keyed


def environment_tag(
    client: docker.DockerClient, spec: EnvSpec, snapshot: RepoSnapshot, settings: Settings
) -> str:
    """The tag ``ensure_environment`` gives the environment of ``spec`` built from ``snapshot``
    (not a layer), built or not; the base image is made when missing."""
    as_of = resolution_moment(snapshot.commit_time(), spec.python, settings.env_as_of_commit)
    keyed = _content_key(spec, manifests_fingerprint(snapshot, spec), as_of)
    base = ensure_base_image(client, spec.python, settings)
    key = environment_key(spec, keyed, client.images.get(base).id or base)
    return f"{ENV_REPOSITORY_PREFIX}{repo_slug(snapshot.repo)}:{key}"


def parse_build_result(output: bytes) -> dict[str, Any] | None:
    """The JSON of the last ``REPROBOT-RESULT`` line of a build log, if any."""
    for line in reversed(output.splitlines()):
        if line.startswith(_RESULT_MARK):
            try:
                value = json.loads(line[len(_RESULT_MARK) :])
            except ValueError:
                return None
            return value if isinstance(value, dict) else None
    return None


@dataclass(frozen=True)
class _Build:
    """What one build of an environment image starts from."""

    base: str
    tag: str
    spec: EnvSpec
    snapshot: RepoSnapshot
    fingerprint: str
    sources: dict[str, str]


def build_version(spec: EnvSpec, snapshot: RepoSnapshot) -> GitVersion | None:
    """The version a build gives a project whose version comes from git, unless the spec sets
    one itself (a benchmark's table knows each instance's release)."""
    if any(name in spec.env for name in VERSION_VARIABLES):
        return None
    return git_version(snapshot)


def _build(client: docker.DockerClient, build: _Build, settings: Settings, as_of: AsOf) -> None:
    base, tag, spec, snapshot = build.base, build.tag, build.spec, build.snapshot
    fingerprint = build.fingerprint
    version = build_version(spec, snapshot)
    # In the build container's environment, so that the committed image keeps it: a run that
    # installs the project again (offline) gives the same version.
    version_env = version.environment() if version else {}
    index = host_index_settings(settings)
    job = {
        "requirements": list(spec.requirements),
        "pip_packages": list(spec.pip_packages),
        "test_requirements": list(spec.test_requirements),
        "prepare": list(spec.prepare),
        "constraints": list(spec.constraints),
        "pre_install": list(spec.pre_install),
        "system_packages": list(spec.system_packages),
        "binary_requirements": list(spec.binary_requirements),
        "conda_names": conda_names(),
        "install": spec.install,
        "warm": list(spec.warm),
        "python_compat": list(spec.python_compat),
        "env": {**version_env, **spec.env},
        # Index settings travel in the job file on a tmpfs, not in the container's environment:
        # a committed image keeps its build container's environment, and must not keep these.
        "pip_env": index.environment(_CA_PATH),
        "as_of": as_of.label(),
    }
    payload = {
        "run/reprobot/build.json": json.dumps(job).encode(),
        "run/reprobot/env_build.py": script_text("env_build.py"),
        "run/reprobot/dated_index.py": script_text("dated_index.py"),
    }
    if index.ca_bundle:
        payload["run/reprobot/ca.pem"] = index.ca_bundle
    environment = {**version_env, **spec.env, "PATH": VENV_PATH}
    container_spec = ContainerSpec(
        image=base,
        # -i: the tree's tar and the payload's tar arrive back to back on stdin.
        command=[
            "/bin/sh",
            "-c",
            "tar -x -i -f - -C / && exec python /run/reprobot/env_build.py",
        ],
        purpose="build-env",
        user="0",
        environment=environment,
        working_dir="/work/repo",
        network="host",
        read_only=False,
        tmpfs={"/run": "rw,exec,size=256m"},
        drop_capabilities=False,
    )
    log_path = settings.logs_dir / f"env-{tag.rsplit('/', 1)[-1].replace(':', '-')}.log"
    log_path.parent.mkdir(parents=True, exist_ok=True)
    build_result: dict[str, Any] = {}
    repository, _, image_tag = tag.partition(":")
    started = time.monotonic()

    def commit(container: Any) -> None:
        labels = {
            "reprobot.env.spec": spec.canonical_json(),
            "reprobot.env.manifests": fingerprint,
            "reprobot.env.editable": "1" if build_result.get("editable") else "0",
            "reprobot.env.source": snapshot.sha,
            "reprobot.env.skipped": json.dumps(build_result.get("skipped", [])),
            "reprobot.env.relaxed": json.dumps(build_result.get("relaxed", [])),
            "reprobot.env.compiled": compiled_fingerprint(snapshot),
            "reprobot.env.as-of": as_of.label(),
            "reprobot.env.as-of-why": as_of.why,
            "reprobot.env.commit-date": as_of.commit.isoformat() if as_of.commit else "",
            "reprobot.env.resolver": DATED_RESOLVER if as_of.moment else "pip (newest releases)",
            "reprobot.env.resolution": json.dumps(build_result.get("resolution", {})),
            "reprobot.env.build-seconds": f"{time.monotonic() - started:.1f}",
            "reprobot.env.warm": json.dumps(build_result.get("warm", [])),
            "reprobot.env.packages": json.dumps(build_result.get("freeze", [])),
            "reprobot.env.sources": json.dumps(build.sources, sort_keys=True),
            "reprobot.env.version": version.label() if version else "",
            "reprobot.env.built-at": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        }
        changes = [f"LABEL {k}={json.dumps(v)}" for k, v in labels.items()]
        container.commit(repository=repository, tag=image_tag, changes=[*changes, "WORKDIR /work"])

    with open(log_path, "w+b") as sink:

        def finalize(container: Any) -> None:
            sink.flush()
            sink.seek(0)
            build_result.update(parse_build_result(sink.read()) or {})
            if build_result.get("ok"):
                commit(container)

        def stream() -> Any:
            yield from snapshot.iter_tar("work/repo/")
            yield small_tar(payload)

        result = run_container(
            client,
            container_spec,
            stream(),
            timeout_s=settings.build_timeout_s,
            output_cap_bytes=512 * 1024 * 1024,
            sink=sink,
            finalize=finalize,
        )
    if result.timed_out:
        raise ImageBuildError(f"building {tag} timed out", log_path)
    if not image_exists(client, tag):
        reason = build_result.get("error") or f"the build exited with {result.exit_code}"
        cause = failure_cause(log_path.read_bytes()) if log_path.exists() else ""
        reason = f"{reason}; {cause}" if cause else reason
        resolution = build_result.get("resolution") or {}
        taken = {**(resolution.get("pinned_later") or {}), **(resolution.get("admitted_at") or {})}
        latest = max((str(t) for t in taken.values()), default="")
        raise ImageBuildError(
            f"building {tag} failed: {reason}", log_path, released_later=latest, cause=cause
        )
    log.info("env_image.built", tag=tag, seconds=round(result.duration_s, 1), log=str(log_path))
