"""Sandbox base images, one per Python version.

``python:X.Y-slim`` where a registry answers; otherwise a Debian root filesystem bootstrapped
with debootstrap and ``docker import``. Either way ``infra/sandbox/base-setup.sh`` then adds the
sandbox user, a virtualenv, coverage.py and the overlay hook, and the result is committed under a
tag that hashes the recipe, so a changed recipe builds a new base and an unchanged one is reused.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from importlib.resources import files
from pathlib import Path
from typing import Any

import docker
import docker.errors
import structlog

from reprobot.progress import SILENT, Progress
from reprobot.settings import Settings
from reprobot.validation.env.apt_sources import host_mirror
from reprobot.validation.env.pipconf import host_index_settings
from reprobot.validation.errors import ImageBuildError
from reprobot.validation.sandbox.container import ContainerSpec, run_container
from reprobot.validation.sandbox.scripts import script_text
from reprobot.validation.sandbox.tarstream import small_tar

log = structlog.get_logger(__name__)

DEBIAN_SUITES: dict[str, str] = {"3.9": "bullseye", "3.11": "bookworm", "3.13": "trixie"}
BASE_REPOSITORY = "reprobot/base"
ROOTFS_REPOSITORY = "reprobot/rootfs"
VENV_PATH = "/opt/reprobot/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
_CA_PATH = "/run/reprobot/ca.pem"


def recipe_dir() -> Path:
    """``infra/sandbox``: packaged into the wheel, or read from the source checkout."""
    packaged = files("reprobot").joinpath("_infra", "sandbox")
    if packaged.is_dir():
        return Path(str(packaged))
    return Path(__file__).resolve().parents[4] / "infra" / "sandbox"


def recipe_hash() -> str:
    digest = hashlib.sha256()
    for name in ("base-setup.sh", "bootstrap-rootfs.sh"):
        digest.update((recipe_dir() / name).read_bytes())
    digest.update(script_text("overlay.py"))
    return digest.hexdigest()[:12]


def base_tag(python: str) -> str:
    return f"{BASE_REPOSITORY}:py{python}-{recipe_hash()}"


def image_exists(client: docker.DockerClient, tag: str) -> bool:
    try:
        client.images.get(tag)
    except docker.errors.ImageNotFound:
        return False
    return True


@contextlib.contextmanager
def file_lock(settings: Settings, name: str) -> Iterator[None]:
    """A host-wide lock, so that two processes never build the same image at once."""
    locks = settings.cache_dir / "locks"
    locks.mkdir(parents=True, exist_ok=True)
    with open(locks / f"{name}.lock", "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def ensure_base_image(
    client: docker.DockerClient, python: str, settings: Settings, progress: Progress = SILENT
) -> str:
    """Make sure the base image for ``python`` exists and return its tag; quick when it does.
    ``progress`` hears of each slow step, and of nothing when the image is there already."""
    if python not in DEBIAN_SUITES:
        raise ImageBuildError(
            f"unsupported Python version {python!r}; choose one of 3.9, 3.11, 3.13"
        )
    tag = base_tag(python)
    if image_exists(client, tag):
        return tag
    with file_lock(settings, f"base-py{python}"):
        if image_exists(client, tag):
            return tag
        log_path = settings.logs_dir / f"base-py{python}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with open(log_path, "wb") as sink:
            source = _source_image(client, python, settings, sink, log_path, progress)
            what = f"setting up the sandbox base image {tag} (log: {log_path})"
            with progress.step(what, kind="base-image"):
                _setup_base(client, source, tag, settings, sink, log_path)
        log.info("base_image.built", tag=tag, source=source, log=str(log_path))
    return tag


def _source_image(
    client: docker.DockerClient,
    python: str,
    settings: Settings,
    sink: Any,
    log_path: Path,
    progress: Progress,
) -> str:
    if settings.base_image_source in ("auto", "registry"):
        try:
            with progress.step(f"pulling python:{python}-slim", kind="pull"):
                client.images.pull("python", tag=f"{python}-slim")
            return f"python:{python}-slim"
        except docker.errors.DockerException as exc:
            sink.write(f"registry pull of python:{python}-slim failed: {exc}\n".encode())
            if settings.base_image_source == "registry":
                raise ImageBuildError(f"cannot pull python:{python}-slim: {exc}", log_path) from exc
    return _bootstrap_rootfs(client, DEBIAN_SUITES[python], settings, sink, log_path, progress)


def _bootstrap_rootfs(
    client: docker.DockerClient,
    suite: str,
    settings: Settings,
    sink: Any,
    log_path: Path,
    progress: Progress,
) -> str:
    tag = f"{ROOTFS_REPOSITORY}:{suite}"
    if image_exists(client, tag):
        return tag
    if shutil.which("debootstrap") is None:
        raise ImageBuildError(
            "no registry answers and debootstrap is not installed (apt-get install debootstrap)",
            log_path,
        )
    if os.geteuid() != 0:
        raise ImageBuildError("bootstrapping a root filesystem needs root", log_path)
    mirror = settings.debian_mirror or host_mirror()
    if not mirror:
        raise ImageBuildError(
            "no Debian mirror: the host's apt sources name none; set REPROBOT_DEBIAN_MIRROR",
            log_path,
        )
    script = recipe_dir() / "bootstrap-rootfs.sh"
    with tempfile.TemporaryDirectory(prefix="reprobot-rootfs-", dir="/var/tmp") as tmp:
        out = Path(tmp) / f"{suite}.tar"
        sink.write(f"+ {script} {suite} {mirror} {out}\n".encode())
        sink.flush()
        what = (
            f"bootstrapping Debian {suite} from {mirror} with debootstrap (done once; "
            f"takes a few minutes; log: {log_path})"
        )
        with progress.step(what, kind="bootstrap"):
            proc = subprocess.run(
                ["sh", str(script), suite, mirror, str(out)],
                stdout=sink,
                stderr=subprocess.STDOUT,
                check=False,
                timeout=settings.build_timeout_s,
            )
            if proc.returncode != 0:
                raise ImageBuildError(f"debootstrap of {suite} failed", log_path)
        repository, _, image_tag = tag.partition(":")
        with progress.step(f"importing the root filesystem as {tag}", kind="import"):
            client.api.import_image_from_file(str(out), repository=repository, tag=image_tag)
    return tag


def _setup_base(
    client: docker.DockerClient,
    source: str,
    tag: str,
    settings: Settings,
    sink: Any,
    log_path: Path,
) -> None:
    index = host_index_settings(settings)
    payload = {
        "reprobot/base-setup.sh": (recipe_dir() / "base-setup.sh").read_bytes(),
        "reprobot/overlay.py": script_text("overlay.py"),
    }
    if index.ca_bundle:
        payload["reprobot/ca.pem"] = index.ca_bundle
    # Index settings go in a file on the /run tmpfs, not in the container's environment, which
    # the committed image would keep.
    payload["reprobot/pip.env"] = "".join(
        f"{k}={shlex.quote(v)}\n" for k, v in index.environment(_CA_PATH).items()
    ).encode()
    spec = ContainerSpec(
        image=source,
        command=["/bin/sh", "-c", "tar -x -f - -C /run && exec sh /run/reprobot/base-setup.sh"],
        purpose="build-base",
        user="0",
        network="host",
        read_only=False,
        tmpfs={"/run": "rw,exec,size=64m"},
        drop_capabilities=False,
    )
    repository, _, image_tag = tag.partition(":")

    def commit(container: Any) -> None:
        container.commit(
            repository=repository,
            tag=image_tag,
            changes=[
                f"ENV PATH={VENV_PATH}",
                "ENV LANG=C.UTF-8",
                "WORKDIR /work",
                f"LABEL reprobot.base={tag}",
            ],
        )

    result = run_container(
        client,
        spec,
        [small_tar(payload)],
        timeout_s=settings.build_timeout_s,
        output_cap_bytes=256 * 1024 * 1024,
        sink=sink,
        finalize=commit,
    )
    if result.exit_code != 0 or not image_exists(client, tag):
        raise ImageBuildError(f"setting up {tag} from {source} failed", log_path)
