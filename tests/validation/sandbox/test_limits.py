"""The sandbox's limits hold: processes, memory, time and output."""

from __future__ import annotations

import docker
import docker.errors
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.sandbox.limits import RunLimits
from tests.support.sandbox_attack import MIB, Snap, attack, with_conftest

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
