"""Finding and removing Reprobot's containers by their labels: those past their deadline that a
crashed process left behind (``reap``), and those of a process that is stopping
(``stop_sandboxes``). Containers whose labels came with their image are never touched."""

from __future__ import annotations

import time
from collections.abc import Mapping
from typing import Any

import docker

from reprobot.validation.sandbox.container import (
    LABEL,
    LABEL_DEADLINE,
    LABEL_OWNER,
    LABEL_RUN,
    process_owner,
    refuse_new_containers,
    remove,
)


def _image_run_label(client: docker.DockerClient, image: str) -> str | None:
    try:
        config = client.api.inspect_image(image).get("Config") or {}  # type: ignore[no-untyped-call]
    except docker.errors.NotFound:
        return None
    return (config.get("Labels") or {}).get(LABEL_RUN)


def _started_by_sandbox(
    client: docker.DockerClient, container: Mapping[str, Any], image_runs: dict[str, str | None]
) -> bool:
    """Whether ``run_container`` started ``container``: its labels did not come with its image
    (``image_runs`` caches each image's run label)."""
    own = container.get("Labels") or {}
    image = str(container.get("ImageID", ""))
    if image not in image_runs:
        image_runs[image] = _image_run_label(client, image)
    return own.get(LABEL_RUN) is not None and own.get(LABEL_RUN) != image_runs[image]


def reap(
    client: docker.DockerClient,
    now: float | None = None,
    only: Mapping[str, str] | None = None,
) -> list[str]:
    """Remove every Reprobot container whose deadline has passed; return their ids. ``only``
    narrows that to containers that also carry these labels (a test reaps only its own)."""
    now = time.time() if now is None else now
    removed = []
    labels = [LABEL, *(f"{key}={value}" for key, value in (only or {}).items())]
    image_runs: dict[str, str | None] = {}
    for container in client.api.containers(all=True, filters={"label": labels}):
        own = container.get("Labels") or {}
        if not _started_by_sandbox(client, container, image_runs):
            continue
        deadline = own.get(LABEL_DEADLINE, "0")
        try:
            expired = float(deadline) < now
        except ValueError:
            expired = True
        if expired:
            remove(client, container["Id"])
            removed.append(container["Id"])
    return removed


def stop_sandboxes(client: docker.DockerClient) -> list[str]:
    """For a process that is stopping, whose runs' results nobody will read: no container starts
    from now on, and every one it started is removed, whatever its deadline. Return their ids."""
    # First the flag, then the list: a container created after the list sees the flag.
    refuse_new_containers()
    return remove_own(client)


def remove_own(client: docker.DockerClient, owner: str | None = None) -> list[str]:
    """Remove every container this process (or ``owner``) started, whatever its deadline.
    Return their ids."""
    label = f"{LABEL_OWNER}={owner or process_owner()}"
    removed = []
    image_runs: dict[str, str | None] = {}
    for container in client.api.containers(all=True, filters={"label": [LABEL, label]}):
        if not _started_by_sandbox(client, container, image_runs):
            continue
        remove(client, container["Id"])
        removed.append(container["Id"])
    return removed
