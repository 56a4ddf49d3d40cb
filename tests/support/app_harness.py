"""The App end to end: ``reprobot serve`` (and ``reprobot worker``) as real processes, talking to
a local GitHub (REST, GraphQL, git over HTTP) about a real repository, with real Docker runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import httpx

from reprobot.bot.store.engine import make_engine
from reprobot.bot.store.jobs import Job
from reprobot.bot.store.ledger import Ledger
from reprobot.settings import Settings
from tests.support import webhooks
from tests.support.github_server import GitHubServer, make_app_key, make_bare_repo
from tests.support.repos import commit_files, git
from tests.support.servers import free_port

SECRET = "e2e webhook secret"
APP_ID = 4242
INSTALLATION = 77
REPO = "example/durations"
T = TypeVar("T")

# The example's environment, as the repository's configuration states it (the same spec as the
# session's example environment, so its image is reused).
CONFIG = """\
python: "3.11"
install: python -m pip install -e '.[test]'
labels:
  reproduced: reproduced
  verified: fix-verified
"""


def wait_for(
    what: str,
    probe: Callable[[], T | None],
    timeout: float = 240.0,
    abort: Callable[[], str | None] | None = None,
) -> T:
    """Poll ``probe`` until it returns something truthy; fail with ``what`` after ``timeout``, or
    at once when ``abort`` names a reason the wait can no longer succeed."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        reason = abort() if abort is not None else None
        if reason:
            raise AssertionError(f"gave up waiting for {what}: {reason}")
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


class AppHarness:
    """A local GitHub with the example repository installed, and Reprobot's processes."""

    def __init__(
        self,
        root: Path,
        source: Path,
        *,
        repo: str = REPO,
        ref: str = "HEAD",
        config: str = CONFIG,
        **settings: str,
    ) -> None:
        """Serve ``source`` at ``ref`` (plus a commit adding ``config`` as
        ``.github/reprobot.yml``) as ``repo``'s default branch; ``settings`` are extra
        ``REPROBOT_*`` variables of the App's processes."""
        self.root = root
        self.repo = repo
        self.cache_dir = root / "cache"
        key, public = make_app_key()
        self.key_path = root / "app.pem"
        self.key_path.write_text(key)
        # The working repository the tests commit to; the server serves a bare copy of it.
        self.work = root / "work"
        git(root, "clone", "-q", "--no-checkout", str(source), str(self.work))
        git(self.work, "checkout", "-q", "-B", "main", ref)
        self.base_sha = commit_files(self.work, {".github/reprobot.yml": config}, "config")
        self.github = GitHubServer(APP_ID, public, root / "git")
        self.github.__enter__()
        self.bare = make_bare_repo(root / "git", repo, self.work)
        self.github.add_installation(INSTALLATION, repo.partition("/")[0])
        self.github.add_repo(repo, INSTALLATION)
        self.port = free_port()
        self.settings = {
            "REPROBOT_CACHE_DIR": str(self.cache_dir),
            # Check runs and comments link to the App's report pages here.
            "REPROBOT_PUBLIC_URL": f"http://127.0.0.1:{self.port}",
            "REPROBOT_WEBHOOK_SECRET": SECRET,
            "REPROBOT_APP_ID": str(APP_ID),
            "REPROBOT_PRIVATE_KEY_PATH": str(self.key_path),
            "REPROBOT_GITHUB_API_URL": self.github.api_url,
            "REPROBOT_GITHUB_MUTATION_PAUSE_S": "0.05",
            "REPROBOT_RUN_TIMEOUT_S": "300",
            **settings,
        }
        self.processes: list[subprocess.Popen[bytes]] = []
        # Processes a test stopped on purpose: their exit is no reason to give up a wait.
        self.stopped: set[int] = set()
        # The same store the App's processes use: the database they are told, or the default
        # under the cache directory they share.
        database = self.settings.get("REPROBOT_DATABASE_URL") or (
            Settings(cache_dir=self.cache_dir).database
        )
        self.ledger = Ledger(make_engine(database))

    # --- processes --------------------------------------------------------------------------

    def _spawn(self, args: list[str], log_name: str) -> subprocess.Popen[bytes]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBOT_")}
        env.update(self.settings)
        log = open(self.root / log_name, "ab")  # noqa: SIM115 - handed to the child process
        proc = subprocess.Popen(
            [sys.executable, "-m", "reprobot.cli.main", *args],
            env=env,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.processes.append(proc)
        return proc

    def serve(self, workers: int = 1) -> subprocess.Popen[bytes]:
        proc = self._spawn(
            ["serve", "--host", "127.0.0.1", "--port", str(self.port), "--workers", str(workers)],
            "serve.log",
        )
        # The store is the App's to create: until it answers, only a dead process is a reason.
        wait_for("reprobot serve to answer", self._healthy, timeout=60, abort=self.dead)
        return proc

    def kill(self, proc: subprocess.Popen[bytes]) -> None:
        """SIGKILL ``proc``'s process group, as a crash would."""
        self.stopped.add(proc.pid)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()

    def dead(self) -> str | None:
        """A process of the App that exited without a test stopping it, with the logs."""
        for proc in self.processes:
            code = proc.poll()
            if code is not None and proc.pid not in self.stopped:
                return f"process {proc.pid} exited with {code}\n{self.logs()[-4000:]}"
        return None

    def broken(self) -> str | None:
        """Why waiting on the App is pointless: a process of it died, or a job failed."""
        if reason := self.dead():
            return reason
        failed = [j for j in self.ledger.jobs(self.repo) if j.state == "failed"]
        if failed:
            return "; ".join(f"job {j.key} failed: {j.error}" for j in failed)
        return None

    def wait(self, what: str, probe: Callable[[], T | None], timeout: float = 240.0) -> T:
        """``wait_for`` that gives up as soon as the App is ``broken``."""
        return wait_for(what, probe, timeout, abort=self.broken)

    def worker(self, metrics_port: int | None = None, threads: int = 1) -> subprocess.Popen[bytes]:
        """A ``reprobot worker`` process running ``threads`` jobs at once; with
        ``metrics_port`` it serves its own metrics."""
        args = ["worker", "--threads", str(threads)]
        if metrics_port is not None:
            args += ["--metrics-port", str(metrics_port)]
        return self._spawn(args, "worker.log")

    def _healthy(self) -> bool:
        try:
            return httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200
        except httpx.HTTPError:
            return False

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        return "\n".join(
            p.read_text(errors="replace")[-20000:] for p in sorted(self.root.glob("*.log"))
        )

    def close(self) -> None:
        for proc in self.processes:
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        for proc in self.processes:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.github.__exit__(None, None, None)

    # --- GitHub's side ----------------------------------------------------------------------

    def deliver(
        self, event: str, data: Mapping[str, Any], delivery: str | None = None
    ) -> httpx.Response:
        body = webhooks.encode(dict(data))
        return httpx.post(
            f"{self.url}/webhook",
            content=body,
            headers=webhooks.headers(SECRET, event, body, delivery),
            timeout=30,
        )

    def open_issue(self, number: int, title: str, body: str) -> dict[str, Any]:
        self.github.add_issue(self.repo, number, title, body)
        return webhooks.issue_opened(self.repo, INSTALLATION, number, title, body)

    def push(
        self, files: Mapping[str, str], message: str, branch: str, patch: str | None = None
    ) -> str:
        """Commit ``patch`` and ``files`` on ``branch`` (from main when new) and push it to the
        served repository; return the new head."""
        start = branch if git(self.work, "branch", "--list", branch) else "main"
        git(self.work, "checkout", "-q", "-B", branch, start)
        if patch is not None:
            (self.root / "change.diff").write_text(patch)
            git(self.work, "apply", str(self.root / "change.diff"))
        sha = commit_files(self.work, dict(files), message)
        git(self.work, "push", "-q", "--force", str(self.bare), f"{branch}:{branch}")
        git(self.work, "checkout", "-q", "main")
        return sha

    def push_fork(self, fork: str, patch: str, message: str) -> str:
        """Commit ``patch`` on top of main into the fork ``fork``'s own bare repository (the
        base repository never sees the commit until GitHub's refs/pull/N/head points at it)."""
        git(self.work, "checkout", "-q", "-B", "fork-work", "main")
        (self.root / "fork.diff").write_text(patch)
        git(self.work, "apply", str(self.root / "fork.diff"))
        sha = commit_files(self.work, {}, message)
        owner, name = fork.split("/")
        bare = self.root / "git" / owner / f"{name}.git"
        bare.mkdir(parents=True, exist_ok=True)
        git(bare, "init", "-q", "--bare")
        git(self.work, "push", "-q", "--force", str(bare), "fork-work:main")
        git(self.work, "checkout", "-q", "main")
        return sha

    def open_pull(
        self, number: int, head_sha: str, body: str, fork: str | None = None
    ) -> dict[str, Any]:
        self.github.add_pull(
            self.repo, number, "Fix it", body, head_sha, self.base_sha, head_full_name=fork
        )
        data = webhooks.pull_request(
            "opened", self.repo, INSTALLATION, number, head_sha, self.base_sha, body
        )
        if fork is not None:
            data["pull_request"]["head"]["repo"]["full_name"] = fork
        return data

    def bot_comments(self, number: int) -> list[dict[str, Any]]:
        return [
            c
            for c in self.github.comments(self.repo, number)
            if (c.get("performed_via_github_app") or {}).get("id") == APP_ID
        ]

    def jobs(self, number: int) -> list[Job]:
        return [j for j in self.ledger.jobs(self.repo) if j.number == number]

    def finished(self, number: int) -> list[Job] | None:
        jobs = self.jobs(number)
        done = [j for j in jobs if j.state in ("done", "failed", "superseded")]
        return jobs if jobs and len(done) == len(jobs) else None
