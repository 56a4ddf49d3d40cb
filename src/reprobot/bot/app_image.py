"""The App's own container image (``reprobot app image``), for ``infra/compose.yaml``.

It is built from the repository's ``Dockerfile`` on ``python:3.11-slim`` where a registry
answers, otherwise on the sandbox base image bootstrapped from Debian's packages. The build
uses the host's package-index settings as the environment builds do; they reach only the
Dockerfile's build stage, so the image keeps none of them.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import docker
import docker.errors
import structlog

from reprobot import __version__
from reprobot.progress import SILENT, Progress
from reprobot.settings import Settings
from reprobot.validation import ImageBuildError, ensure_base_image, host_index_settings

log = structlog.get_logger(__name__)

DEFAULT_TAG = f"reprobot/app:{__version__}"
REGISTRY_BASE = "python:3.11-slim"
# What of the source tree the image needs.
_CONTEXT = ("Dockerfile", "pyproject.toml", "README.md", "src", "infra")


def source_root() -> Path:
    """The checkout this module runs from (the image is built from source, not from a wheel)."""
    root = Path(__file__).resolve().parents[3]
    if not (root / "Dockerfile").is_file():
        raise ImageBuildError(f"no Dockerfile next to {root}: build from a source checkout")
    return root


def choose_base(client: docker.DockerClient, settings: Settings, progress: Progress) -> str:
    """``python:3.11-slim`` when it can be had, else the bootstrapped sandbox base image (quick
    when it exists; ``progress`` hears of its bootstrap otherwise)."""
    if settings.base_image_source in ("auto", "registry"):
        try:
            client.images.get(REGISTRY_BASE)
            return REGISTRY_BASE
        except docker.errors.ImageNotFound:
            pass
        try:
            client.images.pull(REGISTRY_BASE)
            return REGISTRY_BASE
        except docker.errors.DockerException as exc:
            if settings.base_image_source == "registry":
                raise ImageBuildError(f"cannot pull {REGISTRY_BASE}: {exc}") from exc
    return ensure_base_image(client, "3.11", settings, progress)


def build_app_image(
    client: docker.DockerClient,
    settings: Settings,
    tag: str = DEFAULT_TAG,
    progress: Progress = SILENT,
) -> str:
    """Build the App's image as ``tag``; return the tag."""
    root = source_root()
    base = choose_base(client, settings, progress)
    index = host_index_settings(settings)
    args = {
        key: value
        for key, value in index.environment("/build/ca.pem").items()
        if key in ("PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_TRUSTED_HOST")
    }
    with tempfile.TemporaryDirectory(prefix="reprobot-app-image-") as tmp:
        context = Path(tmp)
        for name in _CONTEXT:
            source = root / name
            if source.is_dir():
                shutil.copytree(
                    source, context / name, ignore=shutil.ignore_patterns("__pycache__")
                )
            else:
                shutil.copy2(source, context / name)
        (context / "build").mkdir()
        if index.ca_bundle:
            (context / "build" / "ca.pem").write_bytes(index.ca_bundle)
        log_path = settings.logs_dir / "app-image.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with (
            progress.step(f"building the App's image {tag} on {base}", kind="app-image"),
            open(log_path, "w", encoding="utf-8") as sink,
        ):
            try:
                for chunk in client.api.build(
                    path=str(context),
                    tag=tag,
                    buildargs={"BASE": base, **args},
                    network_mode="host",
                    rm=True,
                    forcerm=True,
                    decode=True,
                    labels={"reprobot.app": __version__},
                ):
                    if "stream" in chunk:
                        sink.write(str(chunk["stream"]))
                    if "error" in chunk:
                        raise ImageBuildError(
                            f"building {tag} failed: {str(chunk['error']).strip()}", log_path
                        )
            except docker.errors.DockerException as exc:
                raise ImageBuildError(f"building {tag} failed: {exc}", log_path) from exc
    log.info("app_image.built", tag=tag, base=base)
    return tag
