"""Throwaway PostgreSQL and Redis servers for the tests: real servers from Debian's packages,
each with its own data directory and a free port on 127.0.0.1, stopped when the tests end.

``bash scripts/setup.sh`` installs the packages. PostgreSQL refuses to run as root, so as root
its programs run as the ``postgres`` user the package creates.
"""

from __future__ import annotations

import glob
import os
import shutil
import socket
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from types import TracebackType

import redis
import sqlalchemy

SETUP_HINT = "bash scripts/setup.sh installs Debian's postgresql and redis-server"


class ServerUnavailable(RuntimeError):
    """A server's program is not installed, or it did not start."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait(what: str, ready: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ready():
            return
        time.sleep(0.1)
    raise ServerUnavailable(f"{what} did not start within {timeout_s:.0f} s")


def _postgres_bindir() -> Path:
    found = sorted(glob.glob("/usr/lib/postgresql/*/bin/postgres"), key=_version)
    if not found:
        raise ServerUnavailable(f"PostgreSQL is not installed ({SETUP_HINT})")
    return Path(found[-1]).parent


def _version(path: str) -> int:
    part = Path(path).parts[-3]
    return int(part) if part.isdigit() else 0


class PostgresServer:
    """A PostgreSQL cluster in ``root`` on a free port, with databases made on demand."""

    def __init__(self, root: Path) -> None:
        self.bindir = _postgres_bindir()
        self.root = root
        self.data = root / "data"
        self.sockets = root / "sockets"
        self.port = free_port()
        self.user = "reprobot"
        # As root, every program of the server runs as the postgres user.
        self._as = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []

    def _run(self, *args: str) -> None:
        proc = subprocess.run(
            [*self._as, *args], capture_output=True, text=True, check=False, timeout=120
        )
        if proc.returncode != 0:
            raise ServerUnavailable(f"{Path(args[0]).name} failed: {proc.stderr[-2000:]}")

    def __enter__(self) -> PostgresServer:
        self.root.mkdir(parents=True, exist_ok=True)
        self.sockets.mkdir(exist_ok=True)
        if self._as:
            shutil.chown(self.root, "postgres")
            shutil.chown(self.sockets, "postgres")
        self._run(
            str(self.bindir / "initdb"),
            "-D",
            str(self.data),
            "-U",
            self.user,
            "-A",
            "trust",
            "--no-sync",
            "-E",
            "UTF8",
        )
        options = (
            f"-p {self.port} -c listen_addresses=127.0.0.1 -k {self.sockets} "
            "-c fsync=off -c synchronous_commit=off -c full_page_writes=off"
        )
        self._run(
            str(self.bindir / "pg_ctl"),
            "-D",
            str(self.data),
            "-o",
            options,
            "-l",
            str(self.root / "server.log"),
            "-w",
            "start",
        )
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        subprocess.run(
            [
                *self._as,
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-m",
                "immediate",
                "stop",
            ],
            capture_output=True,
            check=False,
            timeout=60,
        )

    def url(self, database: str = "postgres") -> str:
        return f"postgresql+psycopg://{self.user}@127.0.0.1:{self.port}/{database}"

    def new_database(self) -> str:
        """A fresh, empty database; its URL."""
        name = f"t_{uuid.uuid4().hex[:16]}"
        admin = sqlalchemy.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.execute(sqlalchemy.text(f'CREATE DATABASE "{name}"'))
        finally:
            admin.dispose()
        return self.url(name)

    def drop_database(self, url: str) -> None:
        name = url.rsplit("/", 1)[1]
        admin = sqlalchemy.create_engine(self.url(), isolation_level="AUTOCOMMIT")
        try:
            with admin.connect() as conn:
                conn.execute(sqlalchemy.text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        finally:
            admin.dispose()


class RedisServer:
    """A Redis server without persistence on a free port."""

    def __init__(self, root: Path) -> None:
        program = shutil.which("redis-server")
        if program is None:
            raise ServerUnavailable(f"Redis is not installed ({SETUP_HINT})")
        self.program = program
        self.root = root
        self.port = free_port()
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> RedisServer:
        self.root.mkdir(parents=True, exist_ok=True)
        log = open(self.root / "server.log", "wb")
        self._proc = subprocess.Popen(
            [
                self.program,
                "--port",
                str(self.port),
                "--bind",
                "127.0.0.1",
                "--save",
                "",
                "--appendonly",
                "no",
                "--dir",
                str(self.root),
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        _wait("redis-server", self._answers)
        return self

    def _answers(self) -> bool:
        try:
            return bool(redis.Redis(port=self.port, socket_timeout=1).ping())
        except redis.RedisError:
            return False

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._proc is not None:
            self._proc.terminate()
            try:
                self._proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self._proc.kill()
                self._proc.wait()

    def url(self, db: int = 0) -> str:
        return f"redis://127.0.0.1:{self.port}/{db}"

    def flush(self) -> None:
        redis.Redis(port=self.port).flushall()
