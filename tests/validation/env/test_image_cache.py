"""Environment images as a cache: least recently used first, pruned down to a size."""

from __future__ import annotations

import contextlib
import os
import time
import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.env.image_cache import (
    CachedImage,
    cached_images,
    prune,
    prune_plan,
    unique_bytes,
)
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import TINY_MODULE, TINY_PYPROJECT, make_repo

MB = 1024**2


def image(tag: str, own_mb: int, used: float, parent: str = "base") -> CachedImage:
    return CachedImage(
        tag=f"reprobot/env-x:{tag}",
        image_id=tag,
        parent_id=parent,
        own_bytes=own_mb * MB,
        last_used=used,
        created="",
    )


def test_the_least_recently_used_go_first_until_the_rest_fit() -> None:
    now = 10_000.0
    images = [image("a", 300, 100), image("b", 200, 200), image("c", 100, 300)]
    assert unique_bytes(images) == 600 * MB
    plan = prune_plan(images, 350 * MB, now, spare_s=60)
    assert [c.image_id for c in plan] == ["a"]
    plan = prune_plan(images, 0, now, spare_s=60)
    assert [c.image_id for c in plan] == ["a", "b", "c"]
    assert prune_plan(images, 600 * MB, now, spare_s=60) == []


def test_recently_used_images_and_parents_of_kept_layers_stay() -> None:
    now = 10_000.0
    shared = image("shared", 500, 100)
    layer = image("layer", 10, now - 5, parent="shared")
    old = image("old", 100, 50)
    plan = prune_plan([shared, layer, old], 0, now, spare_s=60)
    # The layer was used a moment ago, so it stays, and so does the image below it.
    assert [c.image_id for c in plan] == ["old"]
    # Once the layer may go, it goes before its parent.
    later = prune_plan([shared, layer, old], 0, now + 3600, spare_s=60)
    assert [c.image_id for c in later] == ["old", "layer", "shared"]


@pytest.mark.docker
def test_prune_removes_what_was_used_longest_ago(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "cached", {"pyproject.toml": TINY_PYPROJECT, "tiny/__init__.py": TINY_MODULE}
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", f"test/cache-{uuid.uuid4().hex[:8]}")
    scope = "reprobot/env-" + snapshot.repo.replace("/", "-")
    first = ensure_environment(
        docker_client, EnvSpec(python="3.11", env={"N": "1"}), snapshot, settings
    )
    second = ensure_environment(
        docker_client, EnvSpec(python="3.11", env={"N": "2"}), snapshot, settings
    )
    try:
        listed = cached_images(docker_client, settings, scope)
        assert {c.tag for c in listed} == {first.tag, second.tag}
        # The first was last used a day ago; the second just now.
        stamp = settings.cache_dir / "env-used" / first.tag.rsplit(":", 1)[-1]
        day_ago = time.time() - 86400
        os.utime(stamp, (day_ago, day_ago))
        assert cached_images(docker_client, settings, scope)[0].tag == first.tag
        result = prune(docker_client, settings, max_bytes=0, spare_s=3600, scope=scope)
        assert result.removed == (first.tag,)
        assert [c.tag for c in cached_images(docker_client, settings, scope)] == [second.tag]
    finally:
        for tag in (first.tag, second.tag):
            with contextlib.suppress(docker.errors.ImageNotFound):
                docker_client.images.remove(tag, force=True)
