"""Jobs per minute with 1, 2 and 3 workers on the scale-out stack, on one machine.

For each worker count: throwaway PostgreSQL and Redis, a local GitHub serving the example
project (``examples/durations``), ``reprobot serve --workers 0`` and N ``reprobot worker``
processes with the real sandbox. ``--issues`` issues are delivered at once and timed until every
one is reproduced (comment and label); then as many fix pull requests, timed until every check
run is completed. It prints reproductions and verdicts per minute for each N. The environment
image is built once beforehand, so the figures are the jobs' own work.

    .venv/bin/python benchmarks/scale_out.py [--issues 6] [--workers 1 2 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.app_harness import REPO, AppHarness, wait_for  # noqa: E402
from tests.support.example_patches import FIX  # noqa: E402
from tests.support.repos import EXAMPLE, make_repo  # noqa: E402
from tests.support.servers import PostgresServer, RedisServer, free_port  # noqa: E402

from reprobot.settings import Settings  # noqa: E402
from reprobot.validation.env.env_image import ensure_environment  # noqa: E402
from reprobot.validation.env.envspec import EnvSpec  # noqa: E402
from reprobot.validation.sandbox.container import connect  # noqa: E402
from reprobot.validation.source.snapshot import RepoSnapshot  # noqa: E402

TITLE, _, BODY = (EXAMPLE / "ISSUE.md").read_text().partition("\n")


def example_repo(root: Path) -> Path:
    dest = root / "durations"
    shutil.copytree(EXAMPLE, dest)
    make_repo(dest, {})
    return dest


def one_round(
    root: Path, source: Path, workers: int, issues: int, metrics_out: Path | None = None
) -> dict[str, Any]:
    (root / "app").mkdir(parents=True, exist_ok=True)
    pg_root = Path(tempfile.mkdtemp(prefix="reprobot-scale-pg-"))
    with PostgresServer(pg_root) as postgres, RedisServer(root / "redis") as redis_server:
        app = AppHarness(
            root / "app",
            source,
            REPROBOT_DATABASE_URL=postgres.new_database(),
            REPROBOT_QUEUE_URL=redis_server.url(),
            REPROBOT_GITHUB_MUTATION_PAUSE_S="0.05",
        )
        try:
            app.serve(workers=0)
            metrics_ports = [free_port() for _ in range(workers)]
            for port in metrics_ports:
                app.worker(metrics_port=port)
            numbers = list(range(1, issues + 1))
            payloads = {n: app.open_issue(n, TITLE, BODY) for n in numbers}
            started = time.monotonic()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda n: app.deliver("issues", payloads[n]), numbers))
            app.wait(
                "every reproduction",
                lambda: all(app.finished(n) and app.bot_comments(n) for n in numbers),
                timeout=1800,
            )
            reproduce_s = time.monotonic() - started
            pulls = [100 + n for n in numbers]
            heads = {p: app.push({f"n/{p}.md": "x\n"}, f"fix {p}", f"fix-{p}", FIX) for p in pulls}
            opened = {p: app.open_pull(p, heads[p], f"Fixes #{p - 100}") for p in pulls}
            started = time.monotonic()
            with ThreadPoolExecutor(8) as pool:
                list(pool.map(lambda p: app.deliver("pull_request", opened[p]), pulls))
            wait_for(
                "every verdict",
                lambda: all(
                    any(
                        r["status"] == "completed" and r["head_sha"] == heads[p]
                        for r in app.github.check_runs(REPO)
                    )
                    for p in pulls
                ),
                timeout=1800,
                abort=app.broken,
            )
            verify_s = time.monotonic() - started
            if metrics_out is not None:
                parts = [
                    f"# the App ({app.url}/metrics)\n"
                    + httpx.get(f"{app.url}/metrics", timeout=10).text
                ]
                for k, port in enumerate(metrics_ports, 1):
                    url = f"http://127.0.0.1:{port}/metrics"
                    parts.append(f"# worker {k} ({url})\n" + httpx.get(url, timeout=10).text)
                metrics_out.write_text("\n".join(parts))
        finally:
            app.close()
    shutil.rmtree(pg_root, ignore_errors=True)
    return {
        "workers": workers,
        "issues": issues,
        "reproduce_s": round(reproduce_s, 1),
        "reproductions_per_min": round(60 * issues / reproduce_s, 1),
        "verify_s": round(verify_s, 1),
        "verdicts_per_min": round(60 * issues / verify_s, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--issues", type=int, default=6)
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--json", action="store_true")
    parser.add_argument(
        "--metrics",
        type=Path,
        default=None,
        help="write the /metrics of the App and of each worker after the last round",
    )
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="reprobot-scale-") as tmp:
        root = Path(tmp)
        source = example_repo(root)
        # The example's environment, as AppHarness's configuration states it: built once here.
        snapshot = RepoSnapshot.from_git(source, "HEAD", REPO)
        spec = EnvSpec(python="3.11", install="python -m pip install -e '.[test]'")
        ensure_environment(connect(), spec, snapshot, Settings(cache_dir=root / "cache"))
        for i, n in enumerate(args.workers):
            last = i == len(args.workers) - 1
            metrics = args.metrics if last else None
            results.append(one_round(root / f"workers-{n}", source, n, args.issues, metrics))
    if args.json:
        print(json.dumps(results))
        return 0
    cores = os.cpu_count() or 1
    title = f"scale-out on one machine ({cores} cores): {args.issues} issues, then as many PRs"
    table = Table(title=title)
    for column in ("workers", "reproduce s", "reproductions/min", "verify s", "verdicts/min"):
        table.add_column(column)
    for r in results:
        table.add_row(
            str(r["workers"]),
            str(r["reproduce_s"]),
            str(r["reproductions_per_min"]),
            str(r["verify_s"]),
            str(r["verdicts_per_min"]),
        )
    Console(width=120).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
