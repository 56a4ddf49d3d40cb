"""Attacks on the sandbox from inside a sandboxed test run, and the host-side checks every
attack shares: the run announced its container, the container carried Reprobot's labels, and it
is gone afterwards; the host stayed responsive meanwhile."""

from __future__ import annotations

import contextlib
import os
import re
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from types import TracebackType

import docker
import docker.errors
import pytest
import requests.exceptions

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results import testrun
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.container import (
    LABEL,
    LABEL_DEADLINE,
    LABEL_PURPOSE,
)
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.snapshot import RepoSnapshot

Snap = Callable[[dict[str, str]], RepoSnapshot]

MIB = 1 << 20


_DOCKER_ERRORS = (docker.errors.DockerException, requests.exceptions.RequestException)


class ContainerWatch:
    """Records the labels of every Reprobot container that exists while a run is under way."""

    def __init__(self, client: docker.DockerClient) -> None:
        self.client = client
        self.seen: dict[str, dict[str, str]] = {}
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._poll, daemon=True)

    def _poll(self) -> None:
        while True:
            with contextlib.suppress(*_DOCKER_ERRORS):
                for item in self.client.api.containers(all=True, filters={"label": LABEL}):
                    self.seen.setdefault(item["Id"], dict(item.get("Labels") or {}))
            if self._stop.wait(0.1):
                return

    def __enter__(self) -> ContainerWatch:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()


def _rss_bytes() -> int:
    with open("/proc/self/statm") as fh:
        return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


class HostProbe:
    """Samples, while a run is under way, this process's resident memory and how long the host
    takes to start a process and to get an answer from the Docker engine."""

    def __init__(self, client: docker.DockerClient, interval: float = 0.25) -> None:
        self.client, self.interval = client, interval
        self.rss_before = _rss_bytes()
        self.rss_max = self.rss_before
        self.slowest_spawn = 0.0
        self.slowest_ping = 0.0
        self.samples = 0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, daemon=True)

    def _sample(self) -> None:
        while True:
            self.rss_max = max(self.rss_max, _rss_bytes())
            t0 = time.monotonic()
            subprocess.run(["true"], check=True, timeout=30)
            t1 = time.monotonic()
            self.client.ping()
            t2 = time.monotonic()
            self.slowest_spawn = max(self.slowest_spawn, t1 - t0)
            self.slowest_ping = max(self.slowest_ping, t2 - t1)
            self.samples += 1
            if self._stop.wait(self.interval):
                return

    def __enter__(self) -> HostProbe:
        self._thread.start()
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self._stop.set()
        self._thread.join()
        self.rss_max = max(self.rss_max, _rss_bytes())

    @property
    def rss_growth(self) -> int:
        return self.rss_max - self.rss_before


@dataclass(frozen=True)
class Attack:
    run: testrun.TestRun
    elapsed_s: float
    container_id: str
    probe: HostProbe


def attack(
    client: docker.DockerClient,
    env: EnvImage,
    snapshot: RepoSnapshot,
    selection: list[str],
    limits: RunLimits,
) -> Attack:
    """Run ``selection`` in the sandbox; check the run's container was labelled and is gone."""
    started = time.time()
    with ContainerWatch(client) as watch, HostProbe(client) as probe:
        t0 = time.monotonic()
        run = run_tests(client, env, snapshot, selection=selection, limits=limits)
        elapsed = time.monotonic() - t0
    host = run.sandbox_id
    assert re.fullmatch("[0-9a-f]{12}", host), f"the run did not name its sandbox: {host!r}"
    ours = [cid for cid in watch.seen if cid.startswith(host)]
    assert len(ours) == 1, (host, sorted(watch.seen))
    cid = ours[0]
    labels = watch.seen[cid]
    assert labels[LABEL] == "1"
    assert labels[LABEL_PURPOSE] == "test-run"
    assert (
        started + limits.timeout_s
        <= float(labels[LABEL_DEADLINE])
        <= (time.time() + limits.timeout_s + 61)
    )
    # Removed before run_tests returned, on whatever path the run took.
    with pytest.raises(docker.errors.NotFound):
        client.containers.get(cid)
    remaining = client.containers.list(all=True, filters={"label": LABEL})
    assert cid not in {c.id for c in remaining}
    assert probe.samples > 0
    return Attack(run, elapsed, cid, probe)


def assert_all_passed(run: testrun.TestRun) -> None:
    failed = {k: run.failures.get(k, v.value) for k, v in run.outcomes.items() if not v.is_pass}
    assert not failed, failed
