"""The sandbox's limits hold: processes, memory, time and output."""

from __future__ import annotations

import time

import docker
import docker.errors

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.sandbox.container import ContainerSpec, run_container
from reprobot.validation.sandbox.limits import RunLimits
from tests.support.sandbox_attack import MIB, Snap, attack

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
    snapshot = tiny_snapshot({"tests/test_fork.py": FORK_BOMB_TEST})
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
    snapshot = tiny_snapshot({"tests/test_mem.py": MEMORY_BOMB_TEST})
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


# 4. sleep forever, and the runner out of the tests' reach --------------------------------------

SLEEP_TEST = """\
import time


def test_sleep_forever():
    time.sleep(1e9)
"""


def test_sleep_stopped_by_the_runner_which_still_reports(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot({"tests/test_sleep.py": SLEEP_TEST})
    test_id = "tests/test_sleep.py::test_sleep_forever"
    limits = RunLimits(timeout_s=20, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    run = result.run
    assert run.limits_hit == frozenset({"timeout"}), run.limits_hit
    assert run.outcomes[test_id] is Outcome.MISSING
    # The runner stopped pytest before the host's deadline and still reported.
    assert result.elapsed_s < limits.timeout_s
    assert run.error is None
    assert run.pytest_exit == -9


# The project's own set-up hangs while the runner re-installs it (the manifests changed), under
# a time limit of the runner's that is longer than the host's deadline: only the host stops it.
HANGING_SETUP = "import time\ntime.sleep(1e9)\n"


def test_the_host_deadline_stops_what_the_runner_cannot(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot(
        {"setup.py": HANGING_SETUP, "tests/test_ok.py": "def test_ok():\n    pass\n"}
    )
    test_id = "tests/test_ok.py::test_ok"
    limits = RunLimits(timeout_s=20, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, [test_id], limits)
    run = result.run
    assert run.limits_hit == frozenset({"timeout"}), run.limits_hit
    assert run.outcomes[test_id] is Outcome.MISSING
    assert limits.timeout_s - 1 <= result.elapsed_s < 1.5 * limits.timeout_s
    assert run.error is not None
    assert "the run passed its deadline" in run.error
    # What the host kept of the dead run names the step it was in: the re-install.
    assert "reprobot-runner:" in run.log_excerpt
    last = [ln for ln in run.log_excerpt.splitlines() if ln.startswith("reprobot-runner:")][-1]
    assert "pip install" in last, run.log_excerpt


# The runner and init run as root, the tests as the sandbox user with no capability: the tests
# can neither stop, kill, trace nor read them, nor write to the container's output stream.
OUT_OF_REACH_TEST = """\
import ctypes
import os
import signal

import pytest

PTRACE_ATTACH = 16


def _runner():
    return os.getppid()


@pytest.mark.parametrize("pid", [1, "runner"])
@pytest.mark.parametrize("sig", [signal.SIGSTOP, signal.SIGKILL, signal.SIGTERM])
def test_cannot_signal(pid, sig):
    target = _runner() if pid == "runner" else pid
    with pytest.raises(PermissionError):
        os.kill(target, sig)


@pytest.mark.parametrize("fd", [0, 1, 2])
@pytest.mark.parametrize("pid", [1, "runner"])
def test_cannot_open_their_streams(pid, fd):
    target = _runner() if pid == "runner" else pid
    with pytest.raises(PermissionError):
        open("/proc/%d/fd/%d" % (target, fd), "wb")


@pytest.mark.parametrize("pid", [1, "runner"])
def test_cannot_trace(pid):
    target = _runner() if pid == "runner" else pid
    libc = ctypes.CDLL(None, use_errno=True)
    assert libc.ptrace(PTRACE_ATTACH, target, None, None) == -1
    assert ctypes.get_errno() == 1  # EPERM


def test_cannot_reach_the_runners_folder():
    with pytest.raises(PermissionError):
        os.listdir("/work/.result")
    with pytest.raises(PermissionError):
        open("/work/.result/report.jsonl", "ab")
    plugins = [n for n in os.listdir("/work/.runner/plugin") if n.startswith("reprobot_report_")]
    assert len(plugins) == 1
    with pytest.raises(PermissionError):
        open("/work/.runner/plugin/" + plugins[0], "ab")


# pytest's own process: what it starts can neither trace it nor read its memory or environment.
REACH_PARENT = (
    "import ctypes, os\\n"
    "pid = os.getppid()\\n"
    "found = []\\n"
    "for name in ('mem', 'environ'):\\n"
    "    try:\\n"
    "        open('/proc/%d/%s' % (pid, name), 'rb').close()\\n"
    "        found.append(name)\\n"
    "    except OSError:\\n"
    "        pass\\n"
    "if ctypes.CDLL(None, use_errno=True).ptrace(PTRACE_ATTACH, pid, None, None) != -1:\\n"
    "    found.append('ptrace')\\n"
)


def test_pytest_is_out_of_reach_of_a_program_it_starts():
    import subprocess, sys
    code = "PTRACE_ATTACH = 16\\n" + REACH_PARENT + "raise SystemExit(' '.join(found) or None)\\n"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr


def test_pytest_is_out_of_reach_of_a_fork():
    pid = os.fork()
    if pid == 0:
        scope = {"PTRACE_ATTACH": PTRACE_ATTACH, "found": ["unfinished"]}
        try:
            exec(REACH_PARENT, scope)
        finally:
            os._exit(len(scope["found"]))
    _, status = os.waitpid(pid, 0)
    assert os.WEXITSTATUS(status) == 0
"""


def test_the_runner_is_out_of_the_tests_reach(
    docker_client: docker.DockerClient, tiny_env: EnvImage, tiny_snapshot: Snap
) -> None:
    snapshot = tiny_snapshot({"tests/test_reach.py": OUT_OF_REACH_TEST})
    limits = RunLimits(timeout_s=120, memory_mb=256, pids=64)
    result = attack(docker_client, tiny_env, snapshot, ["tests/test_reach.py"], limits)
    run = result.run
    assert run.error is None, run.log_excerpt[-3000:]
    assert len(run.outcomes) == 6 + 6 + 2 + 1 + 2
    failed = {k: run.failures.get(k, v.value) for k, v in run.outcomes.items() if not v.is_pass}
    assert not failed, failed


def test_output_flood_capped_by_the_host(
    docker_client: docker.DockerClient, tiny_env: EnvImage
) -> None:
    # Only the runner writes to a sandbox's standard output; the host's cap still holds for any
    # container that floods it, and the container is killed as soon as it passes the cap.
    spec = ContainerSpec(
        image=tiny_env.tag,
        command=["sh", "-c", "yes AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA"],
        purpose="test-run",
        user="1000:1000",
        memory_mb=256,
        pids=64,
    )
    started = time.monotonic()
    result = run_container(docker_client, spec, [], timeout_s=60, output_cap_bytes=MIB)
    assert result.output_capped
    assert len(result.stdout) <= MIB
    assert time.monotonic() - started < 30


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
    snapshot = tiny_snapshot({"tests/test_print.py": PRINT_TEST})
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
