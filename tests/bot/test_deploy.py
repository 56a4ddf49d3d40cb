"""The deployable stack, as far as it can run here: infra/compose.yaml is accepted by compose,
and the App's image builds (on the bootstrapped base where no registry answers) and its
container answers /readyz against real PostgreSQL and Redis servers."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import tarfile
import time
from pathlib import Path

import docker
import docker.errors
import httpx
import pytest
from docker.models.containers import Container

from reprobot.bot.app_image import build_app_image
from reprobot.settings import Settings
from tests.support.github_server import make_app_key
from tests.support.repos import ROOT
from tests.support.servers import PostgresServer, RedisServer, free_port

COMPOSE = ROOT / "infra" / "compose.yaml"
TAG = "reprobot/app:test"

pytestmark = pytest.mark.docker


def compose(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    program = shutil.which("docker-compose")
    if program is None:
        if os.environ.get("CI"):
            pytest.fail("docker-compose is missing: bash scripts/setup.sh installs it")
        pytest.skip("docker-compose is missing: bash scripts/setup.sh installs it")
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("REPROBOT_", "POSTGRES"))}
    return subprocess.run(
        [program, "-f", str(COMPOSE), *args],
        env={**clean, **env},
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_compose_accepts_the_stack(tmp_path: Path) -> None:
    key = tmp_path / "app.pem"
    key.write_text("key")
    env = {
        "REPROBOT_APP_ID": "7",
        "REPROBOT_WEBHOOK_SECRET": "secret",
        "POSTGRES_PASSWORD": "pw",
        "REPROBOT_PRIVATE_KEY_FILE": str(key),
    }
    done = compose(env, "config", "--services")
    assert done.returncode == 0, done.stderr
    assert sorted(done.stdout.split()) == ["app", "postgres", "redis", "sandbox-engine", "worker"]
    full = compose(env, "config")
    assert "DOCKER_HOST: tcp://sandbox-engine:2375" in full.stdout
    assert "postgresql+psycopg://reprobot:pw@postgres:5432/reprobot" in full.stdout
    # The sandboxes' engine is never published on the host.
    assert "2375:2375" not in full.stdout
    # A setting without a default is refused with its reason.
    missing = compose({k: v for k, v in env.items() if k != "REPROBOT_WEBHOOK_SECRET"}, "config")
    assert missing.returncode != 0
    assert "the App's webhook secret" in missing.stderr


@pytest.fixture(scope="module")
def app_image(docker_client: docker.DockerClient, settings: Settings) -> str:
    # The image stays for the next run's layer cache.
    return build_app_image(docker_client, settings, TAG)


def test_the_app_image_keeps_no_build_settings(
    docker_client: docker.DockerClient, app_image: str
) -> None:
    image = docker_client.images.get(app_image)
    env = image.attrs["Config"]["Env"] or []
    assert not [e for e in env if e.startswith("PIP_")]
    history = " ".join(str(h.get("CreatedBy", "")) for h in image.history())
    assert "PIP_INDEX_URL=" not in history and "ca.pem" not in history
    assert image.attrs["Config"]["User"] == "reprobot"


def test_the_app_container_is_ready_against_postgresql_and_redis(
    docker_client: docker.DockerClient,
    app_image: str,
    postgres_server: PostgresServer,
    redis_server: RedisServer,
) -> None:
    database = postgres_server.new_database()
    key, _ = make_app_key()
    port = free_port()
    socket_path = "/var/run/docker.sock"
    container = docker_client.containers.create(
        app_image,
        ["serve", "--host", "127.0.0.1", "--port", str(port), "--workers", "0"],
        environment={
            "REPROBOT_APP_ID": "4242",
            "REPROBOT_WEBHOOK_SECRET": "secret",
            "REPROBOT_PRIVATE_KEY_PATH": "/home/reprobot/app.pem",
            "REPROBOT_DATABASE_URL": database,
            "REPROBOT_QUEUE_URL": redis_server.url(),
        },
        network_mode="host",
        # Here the test engine stands in for the stack's own sandbox engine.
        volumes={socket_path: {"bind": socket_path, "mode": "rw"}},
        group_add=[str(os.stat(socket_path).st_gid)],
    )
    try:
        container.put_archive("/home/reprobot", _key_archive(key))
        container.start()
        ready = _wait_ready(port, container)
        assert ready["ready"] is True, ready
        assert ready["checks"] == {"database": "ok", "queue": "ok", "docker": "ok"}
    finally:
        container.remove(force=True)
        postgres_server.drop_database(database)


def _key_archive(key: str) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        data = key.encode()
        info = tarfile.TarInfo("app.pem")
        info.size, info.mode, info.uid, info.gid = len(data), 0o600, 10001, 10001
        tar.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def _wait_ready(port: int, container: Container) -> dict[str, object]:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            answer = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2)
            return dict(answer.json())
        except httpx.HTTPError:
            container.reload()
            if container.status == "exited":
                raise AssertionError(container.logs().decode(errors="replace")[-3000:]) from None
            time.sleep(0.5)
    raise AssertionError(container.logs().decode(errors="replace")[-3000:])
