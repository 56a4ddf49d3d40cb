"""Webhook acknowledgement: how fast ``reprobot serve`` answers deliveries, and how much memory
it holds.

``reprobot serve --workers 0`` runs as a subprocess on a free loopback port with a fresh cache
directory (the embedded default: the SQLite store ``app.sqlite3`` and the SQLite queue
``queue.sqlite3``). With no workers nothing is run and no GitHub is contacted: each delivery is
verified, recorded with its job in the ledger and enqueued, which is all the webhook does before
it answers 202.

1. After ``--idle-s`` seconds idle, the serve process's VmRSS and VmHWM (``/proc/PID/status``).
2. ``--deliveries`` distinct deliveries (GitHub's example payloads, serialised and signed with
   HMAC-SHA256 as GitHub does, all before timing): 80 % ``issues.opened`` for distinct issues
   (one reproduction job each), 20 % ``pull_request.synchronize`` with distinct head commits on
   a few pull requests (one verification job each, superseding the PR's earlier one). They go
   out over ``--concurrency`` keep-alive connections (opened before timing), one coroutine per
   connection taking the next delivery from a queue; each request is timed from send to full
   response. Every answer must be 202. By default each coroutine has an httpx client of its
   own holding its one connection; ``--shared-pool`` sends through one client whose pool holds
   them all, which at 100 connections costs the client so much per request, and serves the
   coroutines so unevenly, that the figures then measure the client rather than the server.
3. Not timed: redeliveries of sent deliveries (same delivery id; 202 with ``duplicate: true``
   and the original jobs) and deliveries signed with the wrong secret (401).
4. The ledger's jobs and the queue's pending messages, read from the SQLite files; the serve
   process's RSS after the load (after the same idle wait) and its peak.

Client and server share the machine, so the figures include the client's CPU use; the server's
own CPU time per delivery is printed to tell the two apart. With C requests always in flight
the mean latency is about C / throughput (Little's law): at high concurrency the latency
figures measure queueing as much as the work of one delivery. Any failed check makes the
script exit 1.

    .venv/bin/python benchmarks/webhook_ack.py [--deliveries 2000] [--concurrency 100] [--json]
        [--shared-pool] [--idle-s 5] [--dir /var/tmp] [--keep]
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

from reprobot.bot.queue import make_huey
from reprobot.bot.store.engine import make_engine
from reprobot.bot.store.ledger import Ledger
from reprobot.settings import Settings

# The deliveries are built by the tests' helpers, which live next to this directory.
ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support import webhooks  # noqa: E402
from tests.support.github_server import make_app_key  # noqa: E402
from tests.support.servers import free_port  # noqa: E402

SECRET = "webhook benchmark secret"
WRONG_SECRET = "not the webhook secret"
APP_ID = 4242
INSTALLATION = 77
REPO = "example/webhook-bench"
PULLS = 5  # pull requests the synchronize deliveries are spread over
PULL_SHARE = 5  # one delivery in PULL_SHARE is a pull_request.synchronize
BASE_SHA = hashlib.sha1(b"base").hexdigest()
DUPLICATES = 100
BAD_SIGNATURES = 50
START_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 20.0
SHOWN_FAILURES = 20


@dataclass(frozen=True)
class Delivery:
    """One request as GitHub would send it: body bytes and signed headers."""

    event: str
    delivery_id: str
    body: bytes
    headers: dict[str, str]


@dataclass
class Answer:
    """What the server answered to one delivery, and how long it took."""

    delivery: Delivery
    status: int
    seconds: float
    content: dict[str, Any] = field(default_factory=dict)
    error: str = ""


def signed(event: str, data: dict[str, Any], secret: str = SECRET) -> Delivery:
    body = webhooks.encode(data)
    delivery_id = str(uuid.uuid4())
    return Delivery(event, delivery_id, body, webhooks.headers(secret, event, body, delivery_id))


def issue_delivery(number: int, secret: str = SECRET) -> Delivery:
    data = webhooks.issue_opened(
        REPO, INSTALLATION, number, f"Crash number {number}", f"Steps to reproduce {number}."
    )
    return signed("issues", data, secret)


def build_deliveries(count: int) -> list[Delivery]:
    """``count`` distinct deliveries: one pull_request.synchronize in PULL_SHARE (a new head of
    one of PULLS pull requests each time), issues.opened for a new issue otherwise."""
    deliveries: list[Delivery] = []
    for i in range(count):
        if i % PULL_SHARE == PULL_SHARE - 1:
            head = hashlib.sha1(f"head {i}".encode()).hexdigest()
            data = webhooks.pull_request(
                "synchronize",
                REPO,
                INSTALLATION,
                1 + (i // PULL_SHARE) % PULLS,
                head,
                BASE_SHA,
                "Fixes a crash.",
            )
            deliveries.append(signed("pull_request", data))
        else:
            deliveries.append(issue_delivery(1000 + i))
    return deliveries


def proc_status(pid: int) -> dict[str, int]:
    """VmRSS and VmHWM of ``pid`` in kB."""
    found: dict[str, int] = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, value = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            found[key] = int(value.split()[0])
    return found


def proc_cpu_s(pid: int) -> float:
    """User plus system CPU seconds ``pid`` has used so far."""
    stat = Path(f"/proc/{pid}/stat").read_text()
    fields = stat.rsplit(")", 1)[1].split()
    # After the command: state is field 3, utime 14 and stime 15 (1-based).
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def mib(kb: int) -> float:
    return round(kb / 1024, 1)


class Server:
    """``reprobot serve --workers 0`` in its own session, logging to ``root/serve.log``."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.cache_dir = root / "cache"
        key_path = root / "app.pem"
        key_path.write_text(make_app_key()[0])
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBOT_")}
        env.update(
            REPROBOT_CACHE_DIR=str(self.cache_dir),
            REPROBOT_WEBHOOK_SECRET=SECRET,
            REPROBOT_APP_ID=str(APP_ID),
            REPROBOT_PRIVATE_KEY_PATH=str(key_path),
            # Never contacted (no workers); a closed loopback port all the same.
            REPROBOT_GITHUB_API_URL=f"http://127.0.0.1:{free_port()}/api/v3",
        )
        self.log_path = root / "serve.log"
        with open(self.log_path, "ab") as log:
            self.proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "reprobot.cli.main",
                    "serve",
                    "--host",
                    "127.0.0.1",
                    "--port",
                    str(self.port),
                    "--workers",
                    "0",
                ],
                env=env,
                # Away from any .env file the settings would read.
                cwd=root,
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )

    def wait_healthy(self) -> float:
        """Seconds until GET /healthz answered 200; SystemExit if serve dies or never answers."""
        started = time.perf_counter()
        deadline = time.monotonic() + START_TIMEOUT_S
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise SystemExit(
                    f"reprobot serve exited with {self.proc.returncode}:\n{self.tail()}"
                )
            try:
                if httpx.get(f"{self.url}/healthz", timeout=1).status_code == 200:
                    return time.perf_counter() - started
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        raise SystemExit(f"reprobot serve did not answer /healthz:\n{self.tail()}")

    def tail(self, chars: int = 4000) -> str:
        return self.log_path.read_text(errors="replace")[-chars:]

    def stop(self) -> int | None:
        """SIGTERM, then SIGKILL after STOP_TIMEOUT_S; the exit code."""
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=STOP_TIMEOUT_S)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


async def post(client: httpx.AsyncClient, url: str, delivery: Delivery) -> Answer:
    started = time.perf_counter()
    try:
        response = await client.post(url, content=delivery.body, headers=delivery.headers)
    except httpx.HTTPError as exc:
        return Answer(delivery, 0, time.perf_counter() - started, error=repr(exc))
    seconds = time.perf_counter() - started
    try:
        content = response.json()
    except ValueError:
        return Answer(delivery, response.status_code, seconds, error=response.text[:200])
    if not isinstance(content, dict):
        return Answer(delivery, response.status_code, seconds, error=response.text[:200])
    return Answer(delivery, response.status_code, seconds, content)


async def send_all(
    clients: list[httpx.AsyncClient], url: str, deliveries: list[Delivery], concurrency: int
) -> tuple[list[Answer], float]:
    """Send ``deliveries`` from ``concurrency`` coroutines, coroutine ``i`` through
    ``clients[i % len(clients)]``; the answers (in completion order) and the wall-clock seconds
    it took."""
    queue: asyncio.Queue[Delivery] = asyncio.Queue()
    for delivery in deliveries:
        queue.put_nowait(delivery)
    answers: list[Answer] = []

    async def worker(client: httpx.AsyncClient) -> None:
        while True:
            try:
                delivery = queue.get_nowait()
            except asyncio.QueueEmpty:
                return
            answers.append(await post(client, url, delivery))

    started = time.perf_counter()
    await asyncio.gather(*(worker(clients[i % len(clients)]) for i in range(concurrency)))
    return answers, time.perf_counter() - started


@dataclass
class LoadResult:
    timed: list[Answer]
    wall_s: float
    duplicates: list[Answer]
    bad_signatures: list[Answer]


async def load(
    url: str,
    deliveries: list[Delivery],
    duplicates: list[Delivery],
    bad: list[Delivery],
    concurrency: int,
    shared_pool: bool = False,
) -> LoadResult:
    """Send everything over ``concurrency`` keep-alive connections, opened before timing.

    By default each sending coroutine has a client of its own holding one connection.
    ``shared_pool``: all coroutines share one client whose pool holds ``concurrency``
    connections; httpx's pool then costs the client CPU time per request that grows with
    the number of connections, and hands out connections unevenly, so at high concurrency the
    figures measure the client more than the server.
    """
    timeout = httpx.Timeout(120.0)
    if shared_pool:
        limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
        clients = [httpx.AsyncClient(limits=limits, timeout=timeout)]
    else:
        one = httpx.Limits(max_connections=1, max_keepalive_connections=1)
        clients = [httpx.AsyncClient(limits=one, timeout=timeout) for _ in range(concurrency)]
    webhook = f"{url}/webhook"
    try:
        # Open the connections: as many health probes at once as there are connections.
        await asyncio.gather(
            *(clients[i % len(clients)].get(f"{url}/healthz") for i in range(concurrency))
        )
        timed, wall = await send_all(clients, webhook, deliveries, concurrency)
        dup, _ = await send_all(clients, webhook, duplicates, concurrency)
        unsigned, _ = await send_all(clients, webhook, bad, concurrency)
    finally:
        for client in clients:
            await client.aclose()
    return LoadResult(timed, wall, dup, unsigned)


def percentile(ordered: list[float], p: int) -> float:
    """The ``p``-th percentile (inclusive method) of a sorted list."""
    if len(ordered) == 1:
        return ordered[0]
    return statistics.quantiles(ordered, n=100, method="inclusive")[p - 1]


def check_answers(result: LoadResult) -> list[str]:
    """Every failed expectation, as a line."""
    failures: list[str] = []
    jobs_of: dict[str, Any] = {}
    for answer in result.timed:
        if answer.status != 202 or answer.content.get("duplicate") is not False:
            failures.append(
                f"delivery {answer.delivery.delivery_id} ({answer.delivery.event}): "
                f"{answer.status} {answer.content or answer.error}"
            )
        jobs = answer.content.get("jobs")
        if answer.status == 202 and (not isinstance(jobs, list) or len(jobs) != 1):
            failures.append(f"delivery {answer.delivery.delivery_id}: jobs {jobs!r}, not one job")
        jobs_of[answer.delivery.delivery_id] = jobs
    for answer in result.duplicates:
        original = jobs_of.get(answer.delivery.delivery_id)
        content = answer.content
        if (
            answer.status != 202
            or content.get("duplicate") is not True
            or content.get("jobs") != original
        ):
            failures.append(
                f"redelivery {answer.delivery.delivery_id}: {answer.status} "
                f"{content or answer.error} (first answer's jobs: {original})"
            )
    for answer in result.bad_signatures:
        if answer.status != 401:
            failures.append(
                f"badly signed {answer.delivery.delivery_id}: {answer.status} "
                f"{answer.content or answer.error}"
            )
    return failures


def read_store(cache_dir: Path) -> tuple[Counter[str], int, int]:
    """Jobs by ``kind state``, jobs never marked enqueued, and the queue's pending messages."""
    engine = make_engine(Settings(cache_dir=cache_dir).database)
    try:
        jobs = Ledger(engine).jobs()
    finally:
        engine.dispose()
    states = Counter(f"{job.kind} {job.state}" for job in jobs)
    not_enqueued = sum(1 for job in jobs if job.enqueued_at is None)
    huey = make_huey(Settings(cache_dir=cache_dir).queue)
    try:
        pending = int(huey.pending_count())
    finally:
        huey.storage.close()
    return states, not_enqueued, pending


def expected_states(deliveries: list[Delivery]) -> Counter[str]:
    pulls = sum(1 for d in deliveries if d.event == "pull_request")
    issues = len(deliveries) - pulls
    live = min(pulls, PULLS)
    expected = Counter({"reproduce queued": issues, "verify queued": live})
    if pulls > live:
        expected["verify superseded"] = pulls - live
    return +expected


def parse_args() -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--deliveries", type=int, default=2000, help="timed deliveries")
    parser.add_argument("--concurrency", type=int, default=100, help="connections in flight")
    parser.add_argument(
        "--idle-s", type=float, default=5.0, help="idle wait before each memory reading"
    )
    parser.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="where to make the temporary directory (its file system holds the SQLite files)",
    )
    parser.add_argument(
        "--shared-pool",
        action="store_true",
        help="send through one httpx client whose pool holds all the connections (see load())",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary directory")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if args.deliveries < 1 or args.concurrency < 1:
        parser.error("--deliveries and --concurrency must be at least 1")
    return args


def report_table(figures: dict[str, Any]) -> Table:
    table = Table(title="reprobot serve: webhook acknowledgement", show_header=False)
    table.add_column("figure")
    table.add_column("value", justify="right")
    lat = figures["latency_ms"]
    mem = figures["rss_mib"]
    rows = [
        ("machine CPUs", f"{figures['cpus']} ({figures['cpus_usable']} usable)"),
        ("deliveries (timed)", str(figures["deliveries"])),
        ("concurrency", str(figures["concurrency"])),
        ("client", figures["client"]),
        ("serve start (to /healthz)", f"{figures['serve_start_s']:.2f} s"),
        ("wall time", f"{figures['wall_s']:.2f} s"),
        ("throughput", f"{figures['throughput_rps']:.0f} req/s"),
        ("latency mean", f"{lat['mean']:.1f} ms"),
        ("latency p50", f"{lat['p50']:.1f} ms"),
        ("latency p90", f"{lat['p90']:.1f} ms"),
        ("latency p99", f"{lat['p99']:.1f} ms"),
        ("latency max", f"{lat['max']:.1f} ms"),
        ("server CPU per delivery", f"{figures['server_cpu_ms_per_delivery']:.2f} ms"),
        ("client CPU per delivery", f"{figures['client_cpu_ms_per_delivery']:.2f} ms"),
        ("redeliveries (202 duplicate)", f"{figures['duplicates_ok']}/{figures['duplicates']}"),
        ("bad signatures (401)", f"{figures['bad_signatures_ok']}/{figures['bad_signatures']}"),
        ("RSS idle before load", f"{mem['idle_before']} MiB"),
        ("RSS idle after load", f"{mem['idle_after']} MiB"),
        ("RSS peak (VmHWM)", f"{mem['peak']} MiB"),
        ("jobs recorded", str(figures["jobs"])),
        ("jobs by state", ", ".join(f"{k}: {v}" for k, v in sorted(figures["job_states"].items()))),
        ("jobs not marked enqueued", str(figures["jobs_not_enqueued"])),
        ("queue length (pending)", str(figures["queue_pending"])),
        ("failures", str(len(figures["failures"]))),
    ]
    for name, value in rows:
        table.add_row(name, value)
    return table


def main() -> int:
    args = parse_args()
    console = Console(stderr=args.json)
    root = Path(tempfile.mkdtemp(prefix="reprobot-webhook-ack-", dir=args.dir))
    try:
        deliveries = build_deliveries(args.deliveries)
        step = max(1, len(deliveries) // DUPLICATES)
        duplicates = deliveries[::step][:DUPLICATES]
        bad = [issue_delivery(900_000 + i, WRONG_SECRET) for i in range(BAD_SIGNATURES)]

        server = Server(root)
        try:
            start_s = server.wait_healthy()
            time.sleep(args.idle_s)
            before = proc_status(server.proc.pid)
            cpu_before = proc_cpu_s(server.proc.pid)
            client_cpu_before = time.process_time()
            result = asyncio.run(
                load(server.url, deliveries, duplicates, bad, args.concurrency, args.shared_pool)
            )
            client_cpu = time.process_time() - client_cpu_before
            server_cpu = proc_cpu_s(server.proc.pid) - cpu_before
            time.sleep(args.idle_s)
            after = proc_status(server.proc.pid)
            states, not_enqueued, pending = read_store(server.cache_dir)
        finally:
            exit_code = server.stop()

        failures = check_answers(result)
        expected = expected_states(deliveries)
        if states != expected:
            failures.append(f"jobs by state {dict(states)}, expected {dict(expected)}")
        jobs = sum(states.values())
        if not_enqueued:
            failures.append(f"{not_enqueued} job(s) not marked enqueued")
        if pending != jobs:
            failures.append(f"{pending} pending queue message(s) for {jobs} job(s)")
        if exit_code not in (0, -signal.SIGTERM):
            failures.append(f"reprobot serve exited with {exit_code} on SIGTERM")

        ordered = sorted(a.seconds * 1000 for a in result.timed)
        # Everything a timed request costs the server: the untimed ones are a few per cent.
        sent = len(result.timed) + len(result.duplicates) + len(result.bad_signatures)
        figures: dict[str, Any] = {
            "cpus": os.cpu_count(),
            "cpus_usable": len(os.sched_getaffinity(0)),
            "deliveries": len(result.timed),
            "concurrency": args.concurrency,
            "client": "shared pool" if args.shared_pool else "one client per connection",
            "serve_start_s": round(start_s, 2),
            "wall_s": round(result.wall_s, 3),
            "throughput_rps": round(len(result.timed) / result.wall_s, 1),
            "latency_ms": {
                "mean": round(statistics.fmean(ordered), 2),
                "p50": round(percentile(ordered, 50), 2),
                "p90": round(percentile(ordered, 90), 2),
                "p99": round(percentile(ordered, 99), 2),
                "max": round(ordered[-1], 2),
            },
            "server_cpu_ms_per_delivery": round(server_cpu * 1000 / sent, 3),
            "client_cpu_ms_per_delivery": round(client_cpu * 1000 / sent, 3),
            "duplicates": len(result.duplicates),
            "duplicates_ok": sum(
                1 for a in result.duplicates if a.status == 202 and a.content.get("duplicate")
            ),
            "bad_signatures": len(result.bad_signatures),
            "bad_signatures_ok": sum(1 for a in result.bad_signatures if a.status == 401),
            "rss_mib": {
                "idle_before": mib(before["VmRSS"]),
                "idle_after": mib(after["VmRSS"]),
                "peak": mib(after["VmHWM"]),
            },
            "jobs": jobs,
            "job_states": dict(states),
            "jobs_not_enqueued": not_enqueued,
            "queue_pending": pending,
            "failures": failures,
            "dir": str(root) if args.keep else None,
        }
        if args.json:
            print(json.dumps(figures))
        else:
            console.print(report_table(figures))
        for line in failures[:SHOWN_FAILURES]:
            console.print(f"[red]FAILED[/red] {line}", markup=True, highlight=False)
        if len(failures) > SHOWN_FAILURES:
            console.print(f"... and {len(failures) - SHOWN_FAILURES} more failures")
        if args.keep:
            console.print(f"kept {root} (serve.log, cache/app.sqlite3, cache/queue.sqlite3)")
        return 1 if failures else 0
    finally:
        if not args.keep:
            shutil.rmtree(root, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
