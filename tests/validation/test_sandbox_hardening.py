"""The sandbox holds: each test attacks it from inside a sandboxed test run and checks it held.

Every attack is a pytest test committed to the tiny project and run with ``run_tests``, exactly
as a drafted reproduction test would be. Where the attack failing is observable from inside,
the sandboxed test asserts it failed (so its outcome is "passed"); where the sandbox can only
stop it by killing it, the host checks which limit was hit. Every sandboxed run announces its
container (its hostname, the short container id) so that the host can check that this very
container carried Reprobot's labels and is gone afterwards, even while other runs share the
engine.
"""

from __future__ import annotations

import base64
import contextlib
import http.server
import ipaddress
import os
import re
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import ClassVar

import docker
import docker.errors
import pytest
import requests.exceptions

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results import testrun
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.sandbox.container import (
    LABEL,
    LABEL_DEADLINE,
    LABEL_PURPOSE,
    ContainerSpec,
    reap,
    run_container,
)
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.sandbox.run import SANDBOX_USER, run_tests
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git

# A sandbox that fails to stop an attack tends to hang the run: fail in minutes instead.
pytestmark = [pytest.mark.docker, pytest.mark.timeout(240)]

Snap = Callable[[dict[str, str]], RepoSnapshot]

MARK = "REPROBOT-HARDENING-CONTAINER"
MIB = 1 << 20

# Announces the container on its stderr (what the host keeps when the run dies) and in pytest's
# log (what the host keeps when the run finishes), at the start and at the very end of pytest.
SANDBOX_CONFTEST = f'''\
import os
import socket


def _announce():
    line = ("{MARK} %s\\n" % socket.gethostname()).encode()
    for path in ("/proc/1/fd/2", "/work/out/pytest.log"):
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND)
        except OSError:
            continue
        try:
            os.write(fd, line)
        finally:
            os.close(fd)


def pytest_configure(config):
    _announce()


def pytest_unconfigure(config):
    _announce()
'''


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
    hosts = set(re.findall(MARK + r" ([0-9a-f]{12})\b", run.log_excerpt))
    assert len(hosts) == 1, f"the run did not announce its container:\n{run.log_excerpt[-3000:]}"
    (host,) = hosts
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


def with_conftest(files: dict[str, str]) -> dict[str, str]:
    return {"tests/conftest.py": SANDBOX_CONFTEST, **files}


# 1. network -----------------------------------------------------------------------------------


class Listener:
    """A real server on the host that records every connection it accepts."""

    def __init__(self, sock: socket.socket) -> None:
        self.sock = sock
        sock.listen(16)
        sock.settimeout(0.1)
        self.peers: list[object] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._accept, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self.sock.getsockname()[1])

    def _accept(self) -> None:
        while not self._stop.is_set():
            try:
                conn, peer = self.sock.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self.peers.append(peer or "unnamed")
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join()
        self.sock.close()


@pytest.fixture
def tcp_listener() -> Iterator[Listener]:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("0.0.0.0", 0))
    listener = Listener(sock)
    yield listener
    listener.close()


@pytest.fixture
def abstract_listener() -> Iterator[tuple[Listener, str]]:
    name = f"reprobot-hardening-{uuid.uuid4().hex}"
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.bind("\0" + name)
    listener = Listener(sock)
    yield listener, name
    listener.close()


def bridge_gateway(client: docker.DockerClient) -> str:
    """The host's address on Docker's default bridge, where containers on it reach the host."""
    attrs = client.networks.get("bridge").attrs
    for config in attrs.get("IPAM", {}).get("Config") or []:
        if config.get("Gateway"):
            return str(config["Gateway"]).split("/")[0]
        subnet = ipaddress.ip_network(config.get("Subnet", "::/128"), strict=False)
        if subnet.version == 4:
            return str(next(subnet.hosts()))
    raise AssertionError(f"no IPv4 gateway on the bridge network: {attrs.get('IPAM')}")


def host_addresses() -> list[str]:
    """This host's own non-loopback IPv4 addresses."""
    out = subprocess.run(
        ["ip", "-4", "-o", "addr", "show"], capture_output=True, text=True, check=False
    )
    found = re.findall(r"\binet (\d+\.\d+\.\d+\.\d+)/", out.stdout)
    return [a for a in found if not a.startswith("127.")]


NETWORK_TEST = """\
import errno
import os
import socket
import time

import pytest

PORT = {port}
TARGETS = {targets!r}
ABSTRACT = {abstract!r}


def test_only_loopback_interface():
    assert sorted(os.listdir("/sys/class/net")) == ["lo"]


@pytest.mark.parametrize("host", TARGETS)
def test_tcp_refused(host):
    start = time.monotonic()
    with pytest.raises(OSError) as info:
        socket.create_connection((host, PORT), timeout=3).close()
    assert time.monotonic() - start < 4
    # The sandbox has no route anywhere; no packet ever left it.
    assert info.value.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH), info.value


def test_loopback_is_the_sandbox_own():
    # The port is open on the host's loopback; the sandbox's loopback is its own.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", PORT), timeout=3).close()


def test_ipv6_loopback_refused():
    with pytest.raises(OSError) as info:
        socket.create_connection(("::1", PORT), timeout=3).close()
    refusals = (errno.ECONNREFUSED, errno.EADDRNOTAVAIL, errno.ENETUNREACH)
    assert info.value.errno in refusals, info.value


@pytest.mark.parametrize("port", [53, 80, 443])
def test_public_address_refused(port):
    with pytest.raises(OSError) as info:
        socket.create_connection(("1.1.1.1", port), timeout=3).close()
    assert info.value.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH), info.value


@pytest.mark.parametrize("name", ["example.com", "github.com", "host.docker.internal", "docs.io"])
def test_dns_fails(name):
    with pytest.raises(socket.gaierror):
        socket.getaddrinfo(name, 443)


def test_udp_to_resolver_refused():
    with open("/etc/resolv.conf") as fh:
        servers = [l.split()[1] for l in fh if l.startswith("nameserver")] or ["8.8.8.8"]
    for server in servers + ["8.8.8.8", "1.1.1.1"]:
        family = socket.AF_INET6 if ":" in server else socket.AF_INET
        sock = socket.socket(family, socket.SOCK_DGRAM)
        with pytest.raises(OSError) as info:
            sock.sendto(b"\\0" * 12, (server, 53))
        sock.close()
        assert info.value.errno in (errno.ENETUNREACH, errno.EHOSTUNREACH), (server, info.value)


def test_raw_socket_refused():
    with pytest.raises(PermissionError):
        socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP)


def test_host_abstract_socket_unreachable():
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    with pytest.raises(ConnectionRefusedError):
        sock.connect("\\0" + ABSTRACT)
    sock.close()
"""

CONNECT = """\
import socket, sys
socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=5).close()
"""


def test_network_access_refused(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Snap,
    tcp_listener: Listener,
    abstract_listener: tuple[Listener, str],
) -> None:
    gateway = bridge_gateway(docker_client)
    unix_listener, abstract_name = abstract_listener
    # The control: a container that has a network reaches the server at the gateway address,
    # so a refusal inside the sandbox is the sandbox's doing.
    control = run_container(
        docker_client,
        ContainerSpec(
            image=tiny_env.tag,
            command=["python", "-c", CONNECT, gateway, str(tcp_listener.port)],
            purpose="hardening-control",
            user=SANDBOX_USER,
            network="bridge",
        ),
        [],
        timeout_s=60,
        output_cap_bytes=MIB,
    )
    assert control.exit_code == 0, control.stderr.decode(errors="replace")
    deadline = time.monotonic() + 5
    while not tcp_listener.peers and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(tcp_listener.peers) == 1
    tcp_listener.peers.clear()

    targets = sorted({gateway, *host_addresses()})
    source = NETWORK_TEST.format(port=tcp_listener.port, targets=targets, abstract=abstract_name)
    snapshot = tiny_snapshot(with_conftest({"tests/test_net.py": source}))
    result = attack(
        docker_client,
        tiny_env,
        snapshot,
        ["tests/test_net.py"],
        RunLimits(timeout_s=120, memory_mb=512, pids=64),
    )
    run = result.run
    assert run.error is None, run.log_excerpt
    expected = 1 + len(targets) + 2 + 3 + 4 + 3
    assert len(run.outcomes) == expected, run.outcomes
    assert_all_passed(run)
    # Nothing reached the host's servers, on any address.
    time.sleep(0.3)
    assert tcp_listener.peers == []
    assert unix_listener.peers == []


# 2. fork bomb ---------------------------------------------------------------------------------

FORK_BOMB_TEST = """\
import os
import time

BOMB_S = 6.0


def _bomb(end):
    # Every process, the first and all its descendants, forks until the end of the bomb.
    while time.monotonic() < end:
        try:
            os.fork()
        except OSError:
            time.sleep(0.001)


def test_fork_bomb():
    with open("/sys/fs/cgroup/pids/pids.max") as fh:
        assert fh.read().strip() == "64"
    end = time.monotonic() + BOMB_S
    root = os.fork()
    if root == 0:
        try:
            _bomb(end)
        finally:
            os._exit(0)
    refused = 0
    while time.monotonic() < end:
        try:
            pid = os.fork()
        except BlockingIOError:
            refused += 1
            time.sleep(0.05)
            continue
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        time.sleep(0.05)
    os.waitpid(root, 0)
    # The pids limit refused the bomb ...
    assert refused > 0
    # ... and once the bomb is over (its orphans reaped by the init), forking works again.
    give_up = time.monotonic() + 15
    while True:
        try:
            pid = os.fork()
        except BlockingIOError:
            assert time.monotonic() < give_up, "fork still refused long after the bomb"
            time.sleep(0.1)
            continue
        if pid == 0:
            os._exit(0)
        os.waitpid(pid, 0)
        break
"""


def test_fork_bomb_stopped_by_pids_limit(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_fork.py": FORK_BOMB_TEST}))
    test_id = "tests/test_fork.py::test_fork_bomb"
    limits = RunLimits(timeout_s=45, pids=64, memory_mb=512, cpus=1.0)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    run = result.run
    # The run ended on its own: the bomb was refused forks, the test saw it and saw forking
    # work again afterwards; no deadline was needed.
    assert run.outcomes[test_id] is Outcome.PASSED, (run.failures, run.limits_hit)
    assert run.limits_hit == frozenset()
    assert result.elapsed_s < limits.timeout_s
    # The host kept starting processes and the engine kept answering throughout.
    assert result.probe.slowest_spawn < 3.0
    assert result.probe.slowest_ping < 3.0


# 3. memory bomb -------------------------------------------------------------------------------

MEMORY_BOMB_TEST = """\
def test_memory_limit_is_set():
    with open("/sys/fs/cgroup/memory/memory.limit_in_bytes") as fh:
        assert int(fh.read()) == 256 * 1024 * 1024


def test_memory_bomb():
    hoard = []
    for _ in range(64):  # 64 x 64 MiB: 4 GiB, touched, far beyond the limit
        hoard.append(b"\\x01" * (64 << 20))
    raise AssertionError("allocated 4 GiB under a 256 MiB limit")
"""


def test_memory_bomb_killed(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_mem.py": MEMORY_BOMB_TEST}))
    bomb = "tests/test_mem.py::test_memory_bomb"
    limits = RunLimits(timeout_s=60, memory_mb=256, pids=64)
    result = attack(
        docker_client,
        tiny_env,
        snapshot,
        ["tests/test_mem.py::test_memory_limit_is_set", bomb],
        limits,
    )
    run = result.run
    assert "memory" in run.limits_hit, (run.limits_hit, run.outcomes, run.log_excerpt[-2000:])
    # It was the memory limit, not the clock, that stopped the run.
    assert "timeout" not in run.limits_hit, run.limits_hit
    assert run.outcomes[bomb] is not Outcome.PASSED
    assert result.elapsed_s < 40
    # The host never saw the allocation.
    assert result.probe.rss_growth < 64 * MIB


# 4. sleep forever -----------------------------------------------------------------------------

SLEEP_TEST = """\
import os
import signal
import time


def test_sleep_forever():
    time.sleep(1e9)


def test_sleep_with_the_watchdog_frozen():
    # Freeze the in-container runner, whose own timeout would otherwise stop pytest first:
    # only the host's deadline is left.
    parent = os.getppid()
    with open("/proc/%d/cmdline" % parent, "rb") as fh:
        assert b"runner.py" in fh.read()
    os.kill(parent, signal.SIGSTOP)
    time.sleep(1e9)
"""


@pytest.mark.parametrize(
    ("test_name", "host_deadline"),
    [("test_sleep_forever", False), ("test_sleep_with_the_watchdog_frozen", True)],
)
def test_sleep_killed_at_deadline(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Snap,
    test_name: str,
    host_deadline: bool,
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_sleep.py": SLEEP_TEST}))
    test_id = f"tests/test_sleep.py::{test_name}"
    limits = RunLimits(timeout_s=20, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    run = result.run
    assert run.limits_hit == frozenset({"timeout"}), run.limits_hit
    assert run.outcomes[test_id] is Outcome.MISSING
    assert result.elapsed_s < 1.5 * limits.timeout_s
    if host_deadline:
        # The host killed the container at its deadline: no result came back.
        assert result.elapsed_s >= limits.timeout_s - 1
        assert run.error is not None
        assert "no result" in run.error
    else:
        # The runner stopped pytest before the host's deadline and still reported.
        assert result.elapsed_s < limits.timeout_s
        assert run.error is None
        assert run.pytest_exit == -9


# 5. writes outside the work dir, identity, capabilities ----------------------------------------

FILESYSTEM_TEST = """\
import errno
import os
import sysconfig

import pytest

SITE = sysconfig.get_paths()["purelib"]


@pytest.mark.parametrize("path", [
    "/etc/reprobot-probe",
    "/usr/reprobot-probe",
    "/usr/bin/reprobot-probe",
    "/opt/reprobot/reprobot-probe",
    os.path.join(SITE, "reprobot_probe.py"),
    os.path.join(SITE, "sitecustomize.py"),
    "/reprobot-probe",
    "/var/tmp/reprobot-probe",
    "/home/reprobot-probe",
])
def test_create_refused(path):
    assert SITE.startswith("/opt/reprobot/venv/")
    with pytest.raises(OSError) as info:
        with open(path, "w") as fh:
            fh.write("x")
    assert info.value.errno == errno.EROFS, info.value
    assert not os.path.exists(path)


def test_overwrite_refused():
    import pytest as victim

    # Root's files: the permission check refuses before the read-only mount would.
    for path in (victim.__file__, os.__file__, "/etc/passwd", "/bin/sh"):
        with pytest.raises(OSError) as info:
            open(path, "ab").close()
        assert info.value.errno in (errno.EACCES, errno.EROFS), (path, info.value)


def test_docker_managed_files_not_writable():
    # Docker bind-mounts these read-write even on a read-only root; they belong to root.
    for path in ("/etc/hosts", "/etc/hostname", "/etc/resolv.conf"):
        with pytest.raises(PermissionError):
            open(path, "ab").close()


def test_mkdir_refused():
    for path in ("/reprobot-dir", "/etc/reprobot-dir", os.path.join(SITE, "reprobot_pkg")):
        with pytest.raises(OSError) as info:
            os.mkdir(path)
        assert info.value.errno == errno.EROFS, (path, info.value)


@pytest.mark.parametrize("directory", ["/work", "/work/repo", "/tmp", os.environ["HOME"]])
def test_work_dirs_writable(directory):
    os.makedirs(directory, exist_ok=True)
    path = os.path.join(directory, "reprobot-probe")
    with open(path, "w") as fh:
        fh.write("ok")
    with open(path) as fh:
        assert fh.read() == "ok"
    os.remove(path)


def test_work_dirs_bounded_and_nosuid():
    mounts = {}
    with open("/proc/mounts") as fh:
        for line in fh:
            device, point, fstype, options = line.split()[:4]
            mounts[point] = (fstype, set(options.split(",")))
    for point in ("/work", "/tmp"):
        fstype, options = mounts[point]
        assert fstype == "tmpfs"
        assert {"nosuid", "nodev"} <= options
    assert "ro" in mounts["/"][1]
    # The work dir's tmpfs is 64 MiB: writing past it fails instead of filling the host's disk.
    path = "/work/reprobot-big"
    with pytest.raises(OSError) as info:
        with open(path, "wb") as fh:
            for _ in range(100):
                fh.write(b"\\0" * (1 << 20))
    assert info.value.errno == errno.ENOSPC
    os.remove(path)


def test_not_root():
    assert os.getuid() == 1000 and os.geteuid() == 1000
    assert os.getgid() == 1000 and os.getegid() == 1000
    assert 0 not in os.getgroups()
    with pytest.raises(PermissionError):
        os.setuid(0)


def test_no_capabilities_and_no_new_privileges():
    status = {}
    with open("/proc/self/status") as fh:
        for line in fh:
            key, _, value = line.partition(":")
            status[key] = value.strip()
    for key in ("CapInh", "CapPrm", "CapEff", "CapBnd", "CapAmb"):
        assert int(status[key], 16) == 0, (key, status[key])
    assert status["NoNewPrivs"] == "1"
"""


def test_writes_outside_work_dir_refused(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_fs.py": FILESYSTEM_TEST}))
    limits = RunLimits(timeout_s=120, memory_mb=512, pids=64, workdir_mb=64, tmp_mb=32)
    result = attack(docker_client, tiny_env, snapshot, ["tests/test_fs.py"], limits)
    run = result.run
    assert run.error is None, run.log_excerpt
    assert len(run.outcomes) == 9 + 1 + 1 + 1 + 4 + 1 + 1 + 1, run.outcomes
    assert_all_passed(run)


# 6. output ------------------------------------------------------------------------------------

FLOOD_TEST = """\
def test_flood_container_stdout():
    chunk = b"A" * (1 << 20)
    # pid 1 is docker-init; its stdout is the container's attached stdout.
    with open("/proc/1/fd/1", "wb", buffering=0) as out:
        for _ in range(2048):  # 2 GiB
            out.write(chunk)
    raise AssertionError("2 GiB went out on the container's stdout unstopped")
"""


def test_output_flood_capped(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_flood.py": FLOOD_TEST}))
    test_id = "tests/test_flood.py::test_flood_container_stdout"
    limits = RunLimits(timeout_s=60, memory_mb=256, pids=64, output_cap_bytes=MIB)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    run = result.run
    assert run.limits_hit == frozenset({"output"}), run.limits_hit
    assert run.outcomes[test_id] is Outcome.MISSING
    assert run.error is not None
    assert "no result" in run.error
    # Killed as soon as the cap was passed, well before the deadline.
    assert result.elapsed_s < 30
    assert result.probe.rss_growth < 64 * MIB, result.probe.rss_growth


PRINT_TEST = """\
import errno
import sys

CHUNK = "B" * (1 << 20)


def test_print_gigabytes():
    written = 0
    with_error = None
    try:
        for _ in range(4096):  # 4 GiB
            print(CHUNK, end="")
            written += len(CHUNK)
    except OSError as exc:
        with_error = exc
    # pytest captures into a file on /tmp; that tmpfs (32 MiB here) ran out, nothing else.
    assert with_error is not None and with_error.errno == errno.ENOSPC, with_error
    assert written <= 32 << 20


def test_print_then_fail():
    # A failing test's captured output goes into pytest's log on the bounded work dir.
    for _ in range(16):
        print(CHUNK)
    sys.stderr.write(CHUNK)
    raise AssertionError("failing after printing 17 MiB")
"""


def test_printing_gigabytes_stays_in_the_sandbox(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_print.py": PRINT_TEST}))
    printer = "tests/test_print.py::test_print_gigabytes"
    failer = "tests/test_print.py::test_print_then_fail"
    limits = RunLimits(
        timeout_s=120, memory_mb=1024, pids=64, output_cap_bytes=MIB, workdir_mb=96, tmp_mb=32
    )
    result = attack(docker_client, tiny_env, snapshot, [printer, failer], limits)
    run = result.run
    assert run.error is None, run.log_excerpt[-3000:]
    assert run.outcomes == {printer: Outcome.PASSED, failer: Outcome.FAILED}, run.failures
    assert "failing after printing 17 MiB" in run.failures[failer]
    # The whole result came back under a 1 MiB cap: the log was trimmed in the sandbox.
    assert run.limits_hit == frozenset()
    assert len(run.log_excerpt) <= 20000
    assert result.probe.rss_growth < 64 * MIB, result.probe.rss_growth


# 7. secrets -----------------------------------------------------------------------------------

SECRETS_TEST = """\
import base64
import os

# Encoded, so that this file itself does not hold what it looks for.
NEEDLES = [base64.b64decode(n).decode() for n in {needles!r}]


def _read(path):
    try:
        with open(path, "rb") as fh:
            return fh.read(64 << 20).decode("utf-8", "replace")
    except OSError:
        return None


def _haystacks():
    yield "os.environ", "\\n".join("%s=%s" % kv for kv in os.environ.items())
    for path in ("/proc/1/environ", "/proc/self/environ", "/proc/1/cmdline", "/proc/mounts",
                 "/proc/self/mountinfo", "/etc/hosts", "/etc/hostname", "/etc/resolv.conf"):
        text = _read(path)
        if text is not None:
            yield path, text
    for top in ("/work", "/tmp", "/dev/shm"):
        for root, dirs, files in os.walk(top):
            for name in files:
                path = os.path.join(root, name)
                if os.path.isfile(path) and not os.path.islink(path):
                    text = _read(path)
                    if text is not None:
                        yield path, text


def test_needles_are_real():
    assert len(NEEDLES) == {count} and all(len(n) >= 8 for n in NEEDLES)


def test_no_secret_or_host_path_visible():
    searched = []
    for where, text in _haystacks():
        searched.append(where)
        for needle in NEEDLES:
            assert needle not in text, "host secret or path visible in %s" % where
    assert "/proc/1/environ" in searched and "/work/repo/tests/test_secrets.py" in searched


def test_no_token_like_variables():
    words = ("TOKEN", "SECRET", "PASSWORD", "KEY", "CREDENTIAL")
    names = [k for k in os.environ if any(w in k.upper() for w in words)]
    assert names == []
    assert not any(k.startswith("DOCKER") for k in os.environ)


def test_git_configs_hold_no_credentials():
    configs = [os.path.join(r, "config") for r, d, f in os.walk("/work")
               if r.endswith(".git") and "config" in f]
    for path in configs:
        assert "x-access-token" not in _read(path)


def test_no_docker_socket():
    for path in ("/var/run/docker.sock", "/run/docker.sock", "/tmp/docker.sock"):
        assert not os.path.exists(path)
    assert "DOCKER_HOST" not in os.environ


def test_no_host_path_mounted():
    # Docker's own per-container files are the only files from the host's disk; everything else
    # is the image's overlay or a kernel file system.
    virtual = {{"overlay", "tmpfs", "proc", "sysfs", "devpts", "mqueue", "cgroup", "cgroup2"}}
    docker_files = {{"/etc/resolv.conf", "/etc/hostname", "/etc/hosts", "/usr/sbin/docker-init"}}
    with open("/proc/mounts") as fh:
        for line in fh:
            device, point, fstype = line.split()[:3]
            assert fstype in virtual or point in docker_files, line
            assert "docker.sock" not in point, line
"""


def test_no_host_secret_visible(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Snap,
    tiny_repo: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    secrets = {
        name: f"hardening-{name.lower()}-{uuid.uuid4().hex}"
        for name in (
            "GITHUB_TOKEN",
            "REPROBOT_WEBHOOK_SECRET",
            "REPROBOT_GITHUB_PRIVATE_KEY",
            "REPROBOT_LLM_API_KEY",
            "OPENAI_API_KEY",
        )
    }
    for name, value in secrets.items():
        monkeypatch.setenv(name, value)
    git_token = f"ghs_{uuid.uuid4().hex}"
    remote = f"https://x-access-token:{git_token}@example.invalid/r.git"
    host_paths = [str(tiny_repo.resolve()), str(Path.cwd().resolve()), str(tiny_repo.parent)]
    needles = [*secrets.values(), git_token, *host_paths]
    encoded = [base64.b64encode(n.encode()).decode() for n in needles]
    git(tiny_repo, "remote", "add", "origin", remote)
    try:
        assert git_token in (tiny_repo / ".git" / "config").read_text()
        source = SECRETS_TEST.format(needles=encoded, count=len(encoded))
        snapshot = tiny_snapshot(with_conftest({"tests/test_secrets.py": source}))
        limits = RunLimits(timeout_s=120, memory_mb=512, pids=64)
        result = attack(docker_client, tiny_env, snapshot, ["tests/test_secrets.py"], limits)
    finally:
        git(tiny_repo, "remote", "remove", "origin")
    assert git_token not in (tiny_repo / ".git" / "config").read_text()
    run = result.run
    assert run.error is None, run.log_excerpt
    assert len(run.outcomes) == 6, run.outcomes
    assert_all_passed(run)
    # Nor did any of it come back out in the run's log.
    for needle in needles:
        assert needle not in run.log_excerpt


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
        labels = {LABEL: "1", LABEL_PURPOSE: f"hardening-{tag}", LABEL_DEADLINE: deadline}
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
        removed = reap(docker_client)
        assert live not in removed
        # (A run elsewhere on this engine may have reaped some of them first: run_tests reaps.)
        for cid in (expired, garbled, blank):
            assert not _exists(docker_client, cid)
        # A run still within its deadline is left alone ...
        assert docker_client.containers.get(live).status == "running"
        # ... until its deadline has passed.
        assert live in reap(docker_client, now=now + 601)
        assert not _exists(docker_client, live)
    finally:
        for cid in created:
            with contextlib.suppress(docker.errors.NotFound):
                docker_client.api.remove_container(cid, force=True)


NORMAL_TEST = "from tiny import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


def test_normal_run_leaves_no_container(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(with_conftest({"tests/test_ok.py": NORMAL_TEST}))
    test_id = "tests/test_ok.py::test_add"
    limits = RunLimits(timeout_s=120, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    assert result.run.outcomes == {test_id: Outcome.PASSED}
    assert result.run.limits_hit == frozenset()
    # attack() checked that this run's container carried the labels and is gone.
    assert not _exists(docker_client, result.container_id)


class _IndexHandler(http.server.BaseHTTPRequestHandler):
    """A package index that has nothing, and remembers the credentials it was sent."""

    seen_auth: ClassVar[list[str]] = []

    def do_GET(self) -> None:
        self.seen_auth.append(self.headers.get("Authorization", ""))
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def credentialed_index() -> Iterator[tuple[str, str, list[str]]]:
    """A real (empty) extra index on the host, reached with a secret in its URL."""
    secret = f"idx-{uuid.uuid4().hex}"
    seen: list[str] = []

    class Handler(_IndexHandler):
        seen_auth = seen

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    url = f"http://reprobot:{secret}@127.0.0.1:{server.server_address[1]}/simple"
    yield url, secret, seen
    server.shutdown()
    server.server_close()


def test_build_index_credentials_not_visible(
    docker_client: docker.DockerClient,
    tiny_snapshot: Snap,
    settings: Settings,
    credentialed_index: tuple[str, str, list[str]],
) -> None:
    """The environment build uses the host's index settings, credentials included; the image
    it leaves behind must not hand them to the test runs."""
    url, secret, seen_auth = credentialed_index
    needles = [secret, url]
    encoded = [base64.b64encode(n.encode()).decode() for n in needles]
    source = SECRETS_TEST.format(needles=encoded, count=len(encoded))
    snapshot = tiny_snapshot(with_conftest({"tests/test_secrets.py": source}))
    build_settings = settings.model_copy(update={"pip_extra_index_urls": [url]})
    # A spec of its own, so that this build happens now, with these index settings.
    spec = EnvSpec(python="3.11", env={"REPROBOT_HARDENING_BUILD": uuid.uuid4().hex})
    env = ensure_environment(docker_client, spec, snapshot, build_settings)
    try:
        # The build really went to the index with the secret.
        token = base64.b64encode(f"reprobot:{secret}".encode()).decode()
        assert f"Basic {token}" in seen_auth
        limits = RunLimits(timeout_s=120, memory_mb=512, pids=64)
        result = attack(docker_client, env, snapshot, ["tests/test_secrets.py"], limits)
    finally:
        docker_client.images.remove(env.tag, force=True)
    run = result.run
    assert run.error is None, run.log_excerpt
    assert len(run.outcomes) == 6, run.outcomes
    assert_all_passed(run)
