"""Nothing of the host's secrets or paths is visible in a sandbox, nor in an environment build."""

from __future__ import annotations

import base64
import http.server
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import ClassVar

import docker
import docker.errors
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.sandbox.limits import RunLimits
from tests.support.repos import git
from tests.support.sandbox_attack import Snap, assert_all_passed, attack

# 7. secrets -----------------------------------------------------------------------------------

SECRETS_TEST = """\
import base64
import os
import subprocess
import sys

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
    # pytest's own process is not dumpable, so its /proc/self/environ is closed even to itself:
    # a program it starts reads its own, which it inherited.
    own = "import sys; sys.stdout.buffer.write(open('/proc/self/environ', 'rb').read())"
    child = subprocess.run([sys.executable, "-c", own], capture_output=True)
    yield "/proc/self/environ", child.stdout.decode("utf-8", "replace")
    for path in ("/proc/1/environ", "/proc/1/cmdline", "/proc/mounts",
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
    assert "/proc/self/environ" in searched and "/work/repo/tests/test_secrets.py" in searched
    # Init's and the runner's environments are not even readable: they are root's processes.
    for pid in (1, os.getppid()):
        try:
            open("/proc/%d/environ" % pid, "rb").close()
        except PermissionError:
            continue
        raise AssertionError("the environment of process %d is readable" % pid)


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
    host_paths = [
        str(tiny_repo.resolve()),
        str(Path(__file__).resolve().parent),
        str(tiny_repo.parent),
    ]
    needles = [*secrets.values(), git_token, *host_paths]
    encoded = [base64.b64encode(n.encode()).decode() for n in needles]
    git(tiny_repo, "remote", "add", "origin", remote)
    try:
        assert git_token in (tiny_repo / ".git" / "config").read_text()
        source = SECRETS_TEST.format(needles=encoded, count=len(encoded))
        snapshot = tiny_snapshot({"tests/test_secrets.py": source})
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
    snapshot = tiny_snapshot({"tests/test_secrets.py": source})
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
