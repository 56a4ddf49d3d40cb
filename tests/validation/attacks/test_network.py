"""No network from inside the sandbox: loopback only, no host, no resolver, no raw sockets."""

from __future__ import annotations

import ipaddress
import re
import socket
import subprocess
import threading
import time
import uuid
from collections.abc import Iterator

import docker
import docker.errors
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.runs.run import SANDBOX_USER
from reprobot.validation.sandbox.container import (
    ContainerSpec,
    run_container,
)
from reprobot.validation.sandbox.limits import RunLimits
from tests.support.sandbox_attack import MIB, Snap, assert_all_passed, attack

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


@pytest.mark.parametrize("family", [socket.AF_INET, socket.AF_INET6])
def test_passive_lookup_with_addrconfig_works(family):
    # As on a CI runner, a listener on "localhost" of one family (asyncio's and anyio's
    # AI_ADDRCONFIG lookup) finds an address, and binds and serves it.
    flags = socket.AI_PASSIVE | socket.AI_ADDRCONFIG
    found = socket.getaddrinfo("localhost", 0, family, socket.SOCK_STREAM, 0, flags)
    server = socket.socket(family, socket.SOCK_STREAM)
    server.bind(found[0][4])
    server.listen(1)
    socket.create_connection(server.getsockname()[:2], timeout=3).close()
    server.close()


def test_tests_cannot_change_addresses():
    import fcntl, struct
    sock = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    address = socket.inet_aton("10.9.9.9")
    request = struct.pack("16sH2s4s8s", b"lo:2", socket.AF_INET, b"", address, b"")
    with pytest.raises(PermissionError):
        fcntl.ioctl(sock.fileno(), 0x8916, request)
    sock.close()


def test_loopback_is_the_sandbox_own():
    # The port is open on the host's loopback; the sandbox's loopback is its own.
    with pytest.raises(ConnectionRefusedError):
        socket.create_connection(("127.0.0.1", PORT), timeout=3).close()


def test_ipv6_loopback_serves_the_sandbox_itself():
    # As on a CI runner, a test suite's own server on ::1 ("localhost" in /etc/hosts) works.
    server = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
    server.bind(("::1", 0))
    server.listen(1)
    socket.create_connection(("::1", server.getsockname()[1]), timeout=3).close()
    server.close()


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
    snapshot = tiny_snapshot({"tests/test_net.py": source})
    result = attack(
        docker_client,
        tiny_env,
        snapshot,
        ["tests/test_net.py"],
        RunLimits(timeout_s=120, memory_mb=512, pids=64),
    )
    run = result.run
    assert run.error is None, run.log_excerpt
    # interface, targets, addrconfig (2) and addresses, loopback (3), public, DNS, the rest.
    expected = 1 + len(targets) + 3 + 3 + 3 + 4 + 3
    assert len(run.outcomes) == expected, run.outcomes
    assert_all_passed(run)
    # Nothing reached the host's servers, on any address.
    time.sleep(0.3)
    assert tcp_listener.peers == []
    assert unix_listener.peers == []
