"""A read-only root, bounded work dirs, no root user, no capabilities."""

from __future__ import annotations

import docker
import docker.errors

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.sandbox.limits import RunLimits
from tests.support.sandbox_attack import Snap, assert_all_passed, attack

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
    snapshot = tiny_snapshot({"tests/test_fs.py": FILESYSTEM_TEST})
    limits = RunLimits(timeout_s=120, memory_mb=512, pids=64, workdir_mb=64, tmp_mb=32)
    result = attack(docker_client, tiny_env, snapshot, ["tests/test_fs.py"], limits)
    run = result.run
    assert run.error is None, run.log_excerpt
    assert len(run.outcomes) == 9 + 1 + 1 + 1 + 4 + 1 + 1 + 1, run.outcomes
    assert_all_passed(run)
