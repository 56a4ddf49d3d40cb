"""The environment images on this engine as a cache: when each was last used, what they weigh,
and pruning the least recently used down to a size.

A use is stamped in a file per image key under the cache folder (Docker records no last use).
Pruning never removes an image used within ``spare_s`` (another process may be about to start a
container from it), nor one a container still uses, nor a layer's parent before the layer.
"""

from __future__ import annotations

import calendar
import json
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import docker
import docker.errors

from reprobot.settings import Settings

ENV_REPOSITORY_PREFIX = "reprobot/env-"


@dataclass(frozen=True)
class CachedImage:
    tag: str
    image_id: str
    parent_id: str
    own_bytes: int  # what it adds to its parent (the base image, or the image of a layer)
    last_used: float
    created: str
    # The moment its packages resolved at ("" when unbounded) and the resolver that did it.
    as_of: str = ""
    resolver: str = ""
    # How long building it took (seconds; None for an image built before this was recorded).
    build_s: float | None = None
    # What decided each part of its spec (python, install, test_command, ...), when detected.
    sources: dict[str, str] = field(default_factory=dict)


def _stamp_path(settings: Settings, tag: str) -> Path:
    return settings.cache_dir / "env-used" / tag.rsplit(":", 1)[-1]


def mark_used(settings: Settings, tag: str) -> None:
    """Stamp ``tag`` as used now."""
    path = _stamp_path(settings, tag)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.touch()


def _last_used(settings: Settings, tag: str, created: float) -> float:
    try:
        return _stamp_path(settings, tag).stat().st_mtime
    except OSError:
        return created


def created_epoch(text: str) -> float:
    """Docker's ``2026-11-23T22:39:10.791654321Z`` as seconds since the epoch (0 if unreadable)."""
    try:
        return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return 0.0


def cached_images(
    client: docker.DockerClient, settings: Settings, scope: str = ENV_REPOSITORY_PREFIX
) -> list[CachedImage]:
    """Every environment image (whose tag starts with ``scope``), least recently used first."""
    found: list[CachedImage] = []
    images = client.images.list()
    sizes = {str(i.id): int(i.attrs.get("Size") or 0) for i in images}
    for image in images:
        for tag in image.tags:
            if not tag.startswith(scope):
                continue
            attrs = image.attrs
            created = str(attrs.get("Created", ""))
            size = int(attrs.get("Size") or 0)
            parent = str(attrs.get("Parent") or "")
            labels = image.labels or {}
            found.append(
                CachedImage(
                    tag=tag,
                    image_id=str(image.id),
                    parent_id=parent,
                    own_bytes=max(0, size - sizes.get(parent, 0)),
                    last_used=_last_used(settings, tag, created_epoch(created)),
                    created=created,
                    as_of=labels.get("reprobot.env.as-of", ""),
                    resolver=labels.get("reprobot.env.resolver", ""),
                    build_s=_seconds(labels.get("reprobot.env.build-seconds")),
                    sources=_sources(labels.get("reprobot.env.sources")),
                )
            )
    return sorted(found, key=lambda c: (c.last_used, c.tag))


def _seconds(text: str | None) -> float | None:
    try:
        return float(text) if text else None
    except ValueError:
        return None


def unique_bytes(images: Sequence[CachedImage]) -> int:
    """What the images add on disk to the base images they build on, together (Docker reports
    each image's size with its parents'; an image with two tags counts once)."""
    return sum(c.own_bytes for c in {c.image_id: c for c in images}.values())


def prune_plan(
    images: Sequence[CachedImage], max_bytes: int, now: float, spare_s: float
) -> list[CachedImage]:
    """The images to remove, in order: least recently used first, until what stays fits in
    ``max_bytes``; never one used within ``spare_s``, never a parent whose layer stays."""
    remaining = list(images)
    plan: list[CachedImage] = []
    progress = True
    # A parent becomes removable once its last layer is gone: go round until nothing moves.
    while progress and unique_bytes(remaining) > max_bytes:
        progress = False
        for candidate in sorted(remaining, key=lambda c: (c.last_used, c.tag)):
            if unique_bytes(remaining) <= max_bytes:
                break
            if now - candidate.last_used < spare_s:
                continue
            if any(c.parent_id == candidate.image_id for c in remaining if c is not candidate):
                continue
            plan.append(candidate)
            remaining.remove(candidate)
            progress = True
    return plan


@dataclass(frozen=True)
class PruneResult:
    removed: tuple[str, ...]
    kept: int
    freed_bytes: int
    remaining_bytes: int
    refused: tuple[str, ...] = ()


def prune(
    client: docker.DockerClient,
    settings: Settings,
    max_bytes: int,
    spare_s: float = 3600.0,
    scope: str = ENV_REPOSITORY_PREFIX,
) -> PruneResult:
    """Remove least recently used environment images (of ``scope``, a tag prefix) until the
    rest fit in ``max_bytes``."""
    images = cached_images(client, settings, scope)
    plan = prune_plan(images, max_bytes, time.time(), spare_s)
    removed: list[str] = []
    refused: list[str] = []
    for image in plan:
        try:
            client.images.remove(image.tag)
        except docker.errors.APIError:
            # A container still uses it, or another process removed it first.
            refused.append(image.tag)
            continue
        removed.append(image.tag)
        _stamp_path(settings, image.tag).unlink(missing_ok=True)
    after = cached_images(client, settings, scope)
    before_bytes = unique_bytes(images)
    remaining = unique_bytes(after)
    return PruneResult(
        removed=tuple(removed),
        kept=len(after),
        freed_bytes=max(0, before_bytes - remaining),
        remaining_bytes=remaining,
        refused=tuple(refused),
    )


def _sources(text: str | None) -> dict[str, str]:
    try:
        value = json.loads(text or "{}")
    except ValueError:
        return {}
    return {str(k): str(v) for k, v in value.items()} if isinstance(value, dict) else {}
