"""One container, fed through stdin and read through its attached output, under a deadline.

Input reaches the container only as a byte stream through the Docker API (a tar on stdin), and
output leaves it only through the attached stdout/stderr: no host path is ever mounted, so the
same code works against a remote Docker host. The host, not the container, enforces the
wall-clock deadline and the output cap; the container is removed on every path out.
"""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, BinaryIO

import docker
import docker.errors
import requests.exceptions
from docker.types import LogConfig
from docker.utils.socket import frames_iter

from reprobot.validation.errors import SandboxError

# Every container Reprobot starts carries these labels, so a reaper can find and remove the ones
# a crashed process left behind.
LABEL = "reprobot.sandbox"
LABEL_DEADLINE = "reprobot.deadline"
# A fresh id per run. Images committed from build containers keep that container's labels, and
# every container made from such an image (a ``docker build`` step, say) inherits them: a run id
# equal to its image's is inherited, so that container is none of the reaper's business.
LABEL_RUN = "reprobot.run"
LABEL_PURPOSE = "reprobot.purpose"
# The process that started the container (host and pid): one that is told to stop removes its
# own containers at once rather than leave them running until their deadline.
LABEL_OWNER = "reprobot.owner"


def process_owner() -> str:
    """This process's value of ``LABEL_OWNER``."""
    return f"{socket.gethostname()}:{os.getpid()}"


# Set once this process is stopping (``reaper.stop_sandboxes``): its units' threads may still be
# between two runs, and no run may start a container any more.
_STOPPING = threading.Event()


def refuse_new_containers() -> None:
    """From now on, ``run_container`` removes what it creates and raises ``SandboxError``."""
    _STOPPING.set()


_STDOUT, _STDERR = 1, 2


@dataclass(frozen=True)
class ContainerSpec:
    """How to start one container."""

    image: str
    command: list[str]
    purpose: str
    user: str | None = None
    environment: dict[str, str] = field(default_factory=dict)
    working_dir: str = "/"
    network: str = "none"
    read_only: bool = True
    tmpfs: dict[str, str] = field(default_factory=dict)
    memory_mb: int | None = None
    cpus: float | None = None
    pids: int | None = None
    drop_capabilities: bool = True
    # Capabilities added back after dropping all (only with ``drop_capabilities``).
    capabilities: tuple[str, ...] = ()


@dataclass
class ContainerResult:
    """What came out of one container."""

    exit_code: int | None
    stdout: bytes
    stderr: bytes
    duration_s: float
    timed_out: bool = False
    output_capped: bool = False
    oom_killed: bool = False
    # Someone else removed the container while it ran (a reaper, a person); its result is lost.
    removed: bool = False


def connect(base_url: str | None = None, timeout: float = 120.0) -> docker.DockerClient:
    """A Docker client for ``base_url`` (or the DOCKER_HOST the docker library reads)."""
    try:
        client = (
            docker.DockerClient(base_url=base_url, timeout=int(timeout))
            if base_url
            else docker.from_env(timeout=int(timeout))
        )
        client.ping()
    except (docker.errors.DockerException, requests.exceptions.RequestException) as exc:
        from reprobot.validation.errors import DockerUnavailableError

        raise DockerUnavailableError(f"no Docker engine answers: {exc}") from exc
    return client


def _host_config(client: docker.DockerClient, spec: ContainerSpec) -> Any:
    kwargs: dict[str, Any] = {
        "network_mode": spec.network,
        "read_only": spec.read_only,
        "tmpfs": spec.tmpfs or None,
        # The "none" driver keeps container output off the host's disk; attach still streams it.
        "log_config": LogConfig(type="none"),
        "security_opt": ["no-new-privileges"],
        "init": True,
    }
    if spec.network == "none":
        # The sandbox's only interface is its loopback, and Docker leaves IPv6 off on it while
        # /etc/hosts names ::1 "localhost": a test suite's local server on "localhost" or ::1
        # (as on any CI runner) needs it. Nothing leaves the container either way.
        kwargs["sysctls"] = {
            "net.ipv6.conf.all.disable_ipv6": "0",
            "net.ipv6.conf.lo.disable_ipv6": "0",
        }
    if spec.drop_capabilities:
        kwargs["cap_drop"] = ["ALL"]
        if spec.capabilities:
            kwargs["cap_add"] = list(spec.capabilities)
    if spec.memory_mb:
        kwargs["mem_limit"] = f"{spec.memory_mb}m"
        kwargs["memswap_limit"] = f"{spec.memory_mb}m"
    if spec.cpus:
        kwargs["nano_cpus"] = int(spec.cpus * 1e9)
    if spec.pids:
        kwargs["pids_limit"] = spec.pids
    return client.api.create_host_config(**kwargs)


def _raw_socket(sock: Any) -> socket.socket:
    raw = getattr(sock, "_sock", sock)
    if not isinstance(raw, socket.socket):
        raise SandboxError(f"cannot write to container stdin over {type(raw).__name__}")
    return raw


class _Reader(threading.Thread):
    """Drains the multiplexed output stream, counting bytes against the cap."""

    def __init__(self, sock: Any, cap: int, sink: BinaryIO | None, on_cap: Callable[[], None]):
        super().__init__(daemon=True)
        self.sock, self.cap, self.sink, self.on_cap = sock, cap, sink, on_cap
        self.stdout = bytearray()
        self.stderr = bytearray()
        self.total = 0
        self.capped = False
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for stream, chunk in frames_iter(self.sock, tty=False):  # type: ignore[no-untyped-call]
                if self.capped:
                    # Past the cap, keep draining (and dropping) until the container is gone:
                    # while its attached client stops reading, the engine can neither kill nor
                    # remove the container, and the run would hang.
                    continue
                self.total += len(chunk)
                if self.total > self.cap:
                    self.capped = True
                    # In its own thread: the kill returns only once the output is drained.
                    threading.Thread(target=self.on_cap, daemon=True).start()
                    continue
                if self.sink is not None:
                    self.sink.write(chunk)
                elif stream == _STDOUT:
                    self.stdout += chunk
                else:
                    self.stderr += chunk
        except (OSError, docker.errors.DockerException) as exc:
            self.error = exc


class _Writer(threading.Thread):
    """Streams the input chunks into the container's stdin, then closes it."""

    def __init__(self, raw: socket.socket, chunks: Iterable[bytes]):
        super().__init__(daemon=True)
        self.raw, self.chunks = raw, chunks
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            for chunk in self.chunks:
                self.raw.sendall(chunk)
        except OSError:
            # The container stopped reading (it exited or was killed); its result says why.
            pass
        except BaseException as exc:  # noqa: BLE001 - re-raised in the caller's thread
            self.error = exc
        finally:
            with contextlib.suppress(OSError):
                self.raw.shutdown(socket.SHUT_WR)


def run_container(
    client: docker.DockerClient,
    spec: ContainerSpec,
    stdin_chunks: Iterable[bytes],
    *,
    timeout_s: float,
    output_cap_bytes: int,
    sink: BinaryIO | None = None,
    finalize: Callable[[Any], None] | None = None,
) -> ContainerResult:
    """Run ``spec`` with ``stdin_chunks`` as its standard input and return what it printed.

    With ``sink`` the output (stdout and stderr interleaved) goes there instead of into the
    result. ``finalize`` is called with the stopped container before it is removed, e.g. to
    commit it as an image. The container is killed at the deadline or when its output passes
    the cap, and removed in every case.
    """
    api = client.api
    deadline = time.time() + timeout_s
    labels = {
        LABEL: "1",
        LABEL_PURPOSE: spec.purpose,
        # A little grace beyond the deadline, so that the reaper never races a live run.
        LABEL_DEADLINE: str(int(deadline + 60)),
        LABEL_RUN: uuid.uuid4().hex,
        LABEL_OWNER: process_owner(),
    }
    try:
        config = api.create_container_config(
            spec.image,
            command=spec.command,
            user=spec.user,
            environment=spec.environment,
            working_dir=spec.working_dir,
            labels=labels,
            stdin_open=True,
            host_config=_host_config(client, spec),
        )
        # StdinOnce closes the container's stdin when the attached writer closes its side, which
        # is how the tar on stdin ends; the SDK's create_container does not expose it.
        config["StdinOnce"] = True
        created = api.create_container_from_config(config)  # type: ignore[no-untyped-call]
    except docker.errors.DockerException as exc:
        raise SandboxError(f"cannot create a container from {spec.image}: {exc}") from exc
    cid: str = created["Id"]
    if _STOPPING.is_set():
        remove(client, cid)
        raise SandboxError("this process is stopping: no sandbox starts any more")
    started = time.monotonic()
    try:
        sock = api.attach_socket(cid, params={"stdin": 1, "stdout": 1, "stderr": 1, "stream": 1})
        killed = threading.Event()

        def kill() -> None:
            killed.set()
            with contextlib.suppress(docker.errors.DockerException):
                api.kill(cid)

        reader = _Reader(sock, output_cap_bytes, sink, kill)
        writer = _Writer(_raw_socket(sock), stdin_chunks)
        api.start(cid)
        reader.start()
        writer.start()
        timed_out = False
        exit_code: int | None = None
        try:
            status = api.wait(cid, timeout=max(1, int(deadline - time.time())))
            exit_code = int(status.get("StatusCode", -1))
        except docker.errors.NotFound:
            # Removed under our feet; the inspection below reports it.
            pass
        except requests.exceptions.RequestException:
            timed_out = not killed.is_set()
            kill()
            with contextlib.suppress(requests.exceptions.RequestException):
                api.wait(cid, timeout=30)
        reader.join(timeout=30)
        writer.join(timeout=5)
        with contextlib.suppress(OSError):
            sock.close()
        if writer.error is not None:
            raise SandboxError(f"feeding the container failed: {writer.error}") from writer.error
        state = _final_state(api, cid, exit_code, killed.is_set())
        if state is None:
            return ContainerResult(
                exit_code=None,
                stdout=bytes(reader.stdout),
                stderr=bytes(reader.stderr),
                duration_s=time.monotonic() - started,
                removed=True,
            )
        if finalize is not None and exit_code == 0 and not timed_out and not reader.capped:
            finalize(client.containers.get(cid))
        return ContainerResult(
            exit_code=None if (timed_out or reader.capped) else exit_code,
            stdout=bytes(reader.stdout),
            stderr=bytes(reader.stderr),
            duration_s=time.monotonic() - started,
            timed_out=timed_out,
            output_capped=reader.capped,
            oom_killed=bool(state.get("OOMKilled")),
        )
    except docker.errors.DockerException as exc:
        raise SandboxError(f"container {cid[:12]} failed: {exc}") from exc
    finally:
        with contextlib.suppress(docker.errors.DockerException):
            api.remove_container(cid, force=True, v=True)


def _final_state(
    api: Any, cid: str, exit_code: int | None, we_killed: bool
) -> dict[str, Any] | None:
    """The stopped container's state, or None when someone else removed it. A removal kills
    first (exit 137) and removes a moment later: such an exit is watched for a little while."""
    deadline = time.monotonic() + (2.0 if exit_code == 137 and not we_killed else 0.0)
    while True:
        try:
            state: dict[str, Any] = api.inspect_container(cid).get("State", {})
        except docker.errors.NotFound:
            return None
        if state.get("Status") in ("removing", "dead"):
            return None
        if state.get("OOMKilled") or time.monotonic() >= deadline:
            return state
        time.sleep(0.1)


def remove(client: docker.DockerClient, cid: str, wait_s: float = 30.0) -> None:
    """Remove a container; when another process is already removing it, wait until it is gone."""
    try:
        client.api.remove_container(cid, force=True, v=True)
        return
    except docker.errors.NotFound:
        return
    except docker.errors.APIError as exc:
        if exc.status_code != 409:
            raise
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        try:
            client.api.inspect_container(cid)
        except docker.errors.NotFound:
            return
        time.sleep(0.2)
