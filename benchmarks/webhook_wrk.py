"""Webhook throughput with a native load generator, on each back-end of the App.

For each back-end (the embedded default, SQLite for store and queue; and scale-out, throwaway
PostgreSQL and Redis servers on loopback) this starts ``reprobot serve --workers 0`` on a free
loopback port and points Debian's ``wrk`` at it: one signed ``issues.opened`` body (the
signature covers the body only) with a fresh ``X-GitHub-Delivery`` on every request, so every
request is a new delivery of the same event: a delivery row each, one job in all. It prints
deliveries per second, the latency percentiles wrk measured, the server's own CPU time per
delivery, and checks that every 202 answered is a delivery stored (nothing lost) and that
nothing else was answered.

    apt-get install wrk    # once
    .venv/bin/python benchmarks/webhook_wrk.py [--connections 100] [--seconds 10] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table
from sqlalchemy import create_engine, text

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support import webhooks  # noqa: E402
from tests.support.github_server import make_app_key  # noqa: E402
from tests.support.servers import PostgresServer, RedisServer, free_port  # noqa: E402

SECRET = "webhook throughput secret"
# wrk gives each thread its own Lua state; the thread number keeps ids apart across threads.
LUA = """
-- thread_id is a global each thread's state gets from setup(); a local here would hide it.
local counter = 0
local threads = {}

function setup(thread)
   thread:set("thread_id", #threads)
   table.insert(threads, thread)
end

function init(args)
   wrk.method = "POST"
   wrk.body = io.open(args[1], "rb"):read("*a")
   wrk.headers["Content-Type"] = "application/json"
   wrk.headers["X-GitHub-Event"] = "issues"
   wrk.headers["X-Hub-Signature-256"] = args[2]
end

function request()
   counter = counter + 1
   wrk.headers["X-GitHub-Delivery"] = string.format("wrk-%d-%d", thread_id or 0, counter)
   return wrk.format()
end
"""


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_wrk(output: str) -> dict[str, float]:
    """Requests per second, requests done, non-2xx answers and latency percentiles (ms)."""

    def ms(value: str) -> float:
        number, unit = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value).groups()  # type: ignore[union-attr]
        return float(number) * {"us": 0.001, "ms": 1.0, "s": 1000.0, "m": 60000.0}[unit]

    figures: dict[str, float] = {}
    figures["rps"] = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))  # type: ignore[union-attr]
    figures["requests"] = float(re.search(r"(\d+) requests in", output).group(1))  # type: ignore[union-attr]
    other = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", output)
    figures["non_2xx"] = float(other.group(1)) if other else 0.0
    for pct in ("50", "90", "99"):
        found = re.search(rf"^\s+{pct}(?:\.000)?%\s+(\S+)", output, re.M)
        if found:
            figures[f"p{pct}_ms"] = ms(found.group(1))
    return figures


def run_backend(
    name: str, settings: dict[str, str], root: Path, connections: int, seconds: int
) -> dict[str, Any]:
    root.mkdir(parents=True, exist_ok=True)
    key, _ = make_app_key()
    (root / "app.pem").write_text(key)
    env = {k: v for k, v in os.environ.items() if not k.startswith("REPROBOT_")}
    env.update(
        REPROBOT_CACHE_DIR=str(root / "cache"),
        REPROBOT_WEBHOOK_SECRET=SECRET,
        REPROBOT_APP_ID="4242",
        REPROBOT_PRIVATE_KEY_PATH=str(root / "app.pem"),
        REPROBOT_GITHUB_API_URL="http://127.0.0.1:9/api/v3",
        **settings,
    )
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "reprobot.cli.main", "serve", "--port", str(port), "--workers", "0"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=open(root / "serve.log", "wb"),  # noqa: SIM115
    )
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                time.sleep(0.2)
        body = webhooks.encode(webhooks.issue_opened("example/wrk", 77, 1, "bug", "boom"))
        (root / "body.json").write_bytes(body)
        (root / "deliver.lua").write_text(LUA)
        signature = webhooks.headers(SECRET, "issues", body)["x-hub-signature-256"]
        before = cpu_seconds(server.pid)
        done = subprocess.run(
            [
                "wrk",
                "-t2",
                f"-c{connections}",
                f"-d{seconds}s",
                "--latency",
                "-s",
                str(root / "deliver.lua"),
                f"http://127.0.0.1:{port}/webhook",
                "--",
                str(root / "body.json"),
                signature,
            ],
            capture_output=True,
            text=True,
            check=True,
        )
        cpu = cpu_seconds(server.pid) - before
        figures = parse_wrk(done.stdout)
        stored = _stored(
            settings.get("REPROBOT_DATABASE_URL") or f"sqlite:///{root}/cache/app.sqlite3"
        )
        answered = figures["requests"] - figures["non_2xx"]
        return {
            "backend": name,
            **figures,
            "server_cpu_ms_per_delivery": round(1000 * cpu / max(1.0, figures["requests"]), 3),
            "deliveries_stored": stored,
            # wrk stops at its deadline with some requests in flight: they may be stored
            # without their answer counted, never the other way round.
            "lost": max(0.0, answered - stored),
        }
    finally:
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=20)
        except subprocess.TimeoutExpired:
            server.kill()


def _stored(url: str) -> int:
    engine = create_engine(url)
    try:
        with engine.connect() as conn:
            return int(conn.execute(text("SELECT count(*) FROM deliveries")).scalar_one())
    finally:
        engine.dispose()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--connections", type=int, default=100)
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    if shutil.which("wrk") is None:
        print("wrk is not installed: apt-get install wrk", file=sys.stderr)
        return 2
    results = []
    with tempfile.TemporaryDirectory(prefix="reprobot-wrk-") as tmp:
        root = Path(tmp)
        results.append(run_backend("sqlite", {}, root / "sqlite", args.connections, args.seconds))
        pg_root = Path(tempfile.mkdtemp(prefix="reprobot-wrk-pg-"))
        with PostgresServer(pg_root) as postgres, RedisServer(root / "redis") as redis_server:
            results.append(
                run_backend(
                    "postgresql + redis",
                    {
                        "REPROBOT_DATABASE_URL": postgres.new_database(),
                        "REPROBOT_QUEUE_URL": redis_server.url(),
                    },
                    root / "scale-out",
                    args.connections,
                    args.seconds,
                )
            )
        shutil.rmtree(pg_root, ignore_errors=True)
    if args.json:
        print(json.dumps(results))
    else:
        table = Table(title=f"webhook under wrk: {args.connections} connections, {args.seconds} s")
        for column in (
            "backend",
            "deliveries/s",
            "p50 ms",
            "p90 ms",
            "p99 ms",
            "server CPU ms",
            "stored",
            "lost",
        ):
            table.add_column(column)
        for r in results:
            table.add_row(
                r["backend"],
                f"{r['rps']:.0f}",
                f"{r.get('p50_ms', 0):.1f}",
                f"{r.get('p90_ms', 0):.1f}",
                f"{r.get('p99_ms', 0):.1f}",
                f"{r['server_cpu_ms_per_delivery']:.2f}",
                str(r["deliveries_stored"]),
                str(int(r["lost"])),
            )
        Console(width=140).print(table)
    return 0 if all(r["lost"] == 0 and r["non_2xx"] == 0 for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
