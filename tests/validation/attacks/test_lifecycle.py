"""Sandbox containers carry their labels and die at their deadline; the reaper clears what a
crashed host left."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import threading
import time
import uuid
from pathlib import Path

import docker
import docker.errors

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import SANDBOX_USER, run_tests
from reprobot.validation.sandbox.container import (
    LABEL,
    LABEL_DEADLINE,
    LABEL_OWNER,
    LABEL_PURPOSE,
    LABEL_RUN,
    ContainerSpec,
    process_owner,
    run_container,
)
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.sandbox.reaper import reap, remove_own
from tests.support.sandbox_attack import MIB, ContainerWatch, Snap, attack

# 8. labels and the reaper ---------------------------------------------------------------------


def _exists(client: docker.DockerClient, cid: str) -> bool:
    try:
        client.containers.get(cid)
    except docker.errors.NotFound:
        return False
    return True


def test_container_killed_and_removed_at_a_tiny_deadline(
    docker_client: docker.DockerClient, tiny_env: EnvImage
) -> None:
    purpose = f"hardening-{uuid.uuid4().hex[:12]}"
    spec = ContainerSpec(
        image=tiny_env.tag, command=["sleep", "600"], purpose=purpose, user=SANDBOX_USER
    )
    started = time.time()
    with ContainerWatch(docker_client) as watch:
        result = run_container(docker_client, spec, [], timeout_s=1, output_cap_bytes=MIB)
    assert result.timed_out
    assert result.exit_code is None
    assert result.duration_s < 15
    ours = [cid for cid, labels in watch.seen.items() if labels.get(LABEL_PURPOSE) == purpose]
    assert len(ours) == 1
    labels = watch.seen[ours[0]]
    assert labels[LABEL] == "1"
    assert labels[LABEL_OWNER] == process_owner()
    assert started + 1 < float(labels[LABEL_DEADLINE]) <= time.time() + 62
    assert not _exists(docker_client, ours[0])


def test_reaper_removes_what_a_crashed_host_left(
    docker_client: docker.DockerClient, tiny_env: EnvImage
) -> None:
    now = int(time.time())
    tag = uuid.uuid4().hex[:12]
    created: list[str] = []

    def leftover(deadline: str) -> str:
        # Every label is set: a container inherits its image's labels, and images committed
        # from a build container carry that container's reprobot.* labels.
        labels = {
            LABEL: "1",
            LABEL_PURPOSE: f"hardening-{tag}",
            LABEL_DEADLINE: deadline,
            LABEL_RUN: uuid.uuid4().hex,
        }
        container = docker_client.containers.run(
            tiny_env.tag,
            ["sleep", "600"],
            detach=True,
            labels=labels,
            network_mode="none",
            user=SANDBOX_USER,
            init=True,
        )
        created.append(str(container.id))
        return str(container.id)

    try:
        expired = leftover(str(now - 5))
        garbled = leftover("not-a-time")
        blank = leftover("")
        live = leftover(str(now + 600))
        assert docker_client.containers.get(live).status == "running"
        # Only this test's own containers: other runs may share the engine.
        ours = {LABEL_PURPOSE: f"hardening-{tag}"}
        removed = reap(docker_client, only=ours)
        assert live not in removed
        # (A run elsewhere on this engine may have reaped some of them first: run_tests reaps.)
        for cid in (expired, garbled, blank):
            assert not _exists(docker_client, cid)
        # A run still within its deadline is left alone ...
        assert docker_client.containers.get(live).status == "running"
        # ... until its deadline has passed.
        assert reap(docker_client, now=now + 601, only=ours) == [live]
        assert not _exists(docker_client, live)
    finally:
        for cid in created:
            with contextlib.suppress(docker.errors.NotFound):
                docker_client.api.remove_container(cid, force=True)


NORMAL_TEST = "from tiny import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def test_normal_run_leaves_no_container(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot({"tests/test_ok.py": NORMAL_TEST})
    test_id = "tests/test_ok.py::test_add"
    limits = RunLimits(timeout_s=120, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    assert result.run.outcomes == {test_id: Outcome.PASSED}
    assert result.run.limits_hit == frozenset()
    # attack() checked that this run's container carried the labels and is gone.
    assert not _exists(docker_client, result.container_id)


def test_a_sandbox_removed_by_someone_else_is_reported_as_such(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {"tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"}
    )
    run_id = "tests/test_slow.py::test_slow"
    started = time.time()
    victims: list[str] = []

    def remove_it() -> None:
        # The first test run of this image that started after this test did.
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not victims:
            for item in docker_client.api.containers(
                filters={"label": f"{LABEL_PURPOSE}=test-run", "ancestor": tiny_env.tag}
            ):
                if item["Created"] >= int(started) - 1:
                    time.sleep(2)  # let pytest get going
                    docker_client.api.remove_container(item["Id"], force=True)
                    victims.append(item["Id"])
                    return
            time.sleep(0.1)

    remover = threading.Thread(target=remove_it)
    remover.start()
    run = run_tests(
        docker_client, tiny_env, snapshot, selection=[run_id], limits=RunLimits(timeout_s=120)
    )
    remover.join()
    assert victims
    assert run.error == "the sandbox container was removed by another process before the run ended"
    assert run.limits_hit == frozenset()
    assert run.outcomes == {run_id: Outcome.MISSING}


def test_the_reaper_leaves_containers_whose_labels_came_with_their_image(
    docker_client: docker.DockerClient, tiny_env: EnvImage
) -> None:
    """An environment image is committed from its build container and keeps that container's
    labels, an expired deadline among them; a container made from it by someone else (a
    ``docker build`` step of an image built on it) inherits them and must not be reaped."""
    image_labels = docker_client.images.get(tiny_env.tag).labels
    assert image_labels.get(LABEL) == "1" and image_labels.get(LABEL_RUN)
    assert image_labels.get(LABEL_DEADLINE)
    tag = uuid.uuid4().hex[:12]
    container = docker_client.containers.run(
        tiny_env.tag,
        ["sleep", "600"],
        detach=True,
        labels={LABEL_PURPOSE: f"inherited-{tag}"},
        network_mode="none",
        user=SANDBOX_USER,
        init=True,
    )
    try:
        assert container.labels[LABEL_RUN] == image_labels[LABEL_RUN]
        # Long after any deadline it could carry, it is still not the reaper's.
        later = time.time() + 10**8
        assert reap(docker_client, now=later, only={LABEL_PURPOSE: f"inherited-{tag}"}) == []
        assert docker_client.containers.get(str(container.id)).status == "running"
    finally:
        container.remove(force=True)


def test_a_stopping_process_removes_its_own_containers_at_once(
    docker_client: docker.DockerClient, tiny_env: EnvImage
) -> None:
    purpose = f"stopping-{uuid.uuid4().hex[:12]}"
    spec = ContainerSpec(
        image=tiny_env.tag, command=["sleep", "600"], purpose=purpose, user=SANDBOX_USER
    )
    results = []
    runner = threading.Thread(
        target=lambda: results.append(
            run_container(docker_client, spec, [], timeout_s=600, output_cap_bytes=MIB)
        )
    )
    runner.start()
    ours: list[str] = []
    deadline = time.monotonic() + 60
    while not ours and time.monotonic() < deadline:
        ours = [
            c["Id"]
            for c in docker_client.api.containers(filters={"label": f"{LABEL_PURPOSE}={purpose}"})
        ]
        time.sleep(0.1)
    assert len(ours) == 1
    # Another process's containers are not this one's to remove.
    assert remove_own(docker_client, owner="elsewhere:1") == []
    assert _exists(docker_client, ours[0])
    started = time.monotonic()
    assert ours[0] in remove_own(docker_client)
    runner.join(timeout=60)
    # The run ends long before its deadline, and says its container was taken away.
    assert not runner.is_alive() and time.monotonic() - started < 60
    assert not _exists(docker_client, ours[0])
    assert results and results[0].exit_code != 0


_STOPPING_PROCESS = """
import json, sys, threading, time
from reprobot.validation.errors import SandboxError
from reprobot.validation.sandbox.container import (
    LABEL_PURPOSE, ContainerSpec, connect, run_container,
)
from reprobot.validation.sandbox.reaper import stop_sandboxes
image, purpose, user = sys.argv[1:4]
client = connect()
spec = ContainerSpec(image=image, command=["sleep", "600"], purpose=purpose, user=user)
runs = []
def run():
    runs.append(run_container(client, spec, [], timeout_s=600, output_cap_bytes=1 << 20))
thread = threading.Thread(target=run)
thread.start()
deadline = time.monotonic() + 60
while time.monotonic() < deadline and not client.api.containers(
    filters={"label": f"{LABEL_PURPOSE}={purpose}"}
):
    time.sleep(0.1)
removed = stop_sandboxes(client)
thread.join(60)
try:
    run_container(client, spec, [], timeout_s=600, output_cap_bytes=1 << 20)
    second = "started"
except SandboxError as exc:
    second = str(exc)
print(json.dumps({"removed": len(removed), "ended": not thread.is_alive(), "second": second}))
"""


def test_a_stopping_process_starts_no_sandbox_after_removing_its_own(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tmp_path: Path
) -> None:
    """A unit's thread between two runs must not start the next one once its process stops:
    in a process of its own, as the flag it sets lasts for the process's life."""
    purpose = f"stopping-{uuid.uuid4().hex[:12]}"
    script = tmp_path / "stopping.py"
    script.write_text(_STOPPING_PROCESS, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, str(script), tiny_env.tag, purpose, SANDBOX_USER],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    report = json.loads(done.stdout.strip().splitlines()[-1])
    assert report == {
        "removed": 1,
        "ended": True,
        "second": "this process is stopping: no sandbox starts any more",
    }
    # Neither the removed run's container nor the refused one is left.
    assert (
        docker_client.api.containers(all=True, filters={"label": f"{LABEL_PURPOSE}={purpose}"})
        == []
    )
