"""Job attempts lost, check runs left in progress and duplicate comments when issue and pull
request jobs arrive together and GitHub revokes the App's tokens while they run.

For each stack, the embedded one (SQLite store and queue, one ``reprobot worker``) and the
scale-out one (PostgreSQL and Redis, two workers), with two threads per worker: a local GitHub
serving the example project (``examples/durations``), ``--issues`` issues and as many fix pull
requests opened at once, every installation token revoked ``--revocations`` times during the
run. It prints the counts of ``tests/support/token_storm.py`` for each stack. ``--app-src DIR``
runs the App's processes from another checkout's ``src`` (the counts of an earlier version,
beside this one's).

    .venv/bin/python benchmarks/app_under_revocation.py [--issues 10] [--revocations 3]
        [--stacks sqlite scale-out] [--app-src OTHER/src] [--json]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.table import Table

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.app_harness import REPO, AppHarness  # noqa: E402
from tests.support.repos import EXAMPLE, make_repo  # noqa: E402
from tests.support.servers import PostgresServer, RedisServer  # noqa: E402
from tests.support.token_storm import storm  # noqa: E402

from reprobot.settings import Settings  # noqa: E402
from reprobot.validation.env.env_image import ensure_environment  # noqa: E402
from reprobot.validation.env.envspec import EnvSpec  # noqa: E402
from reprobot.validation.sandbox.container import connect  # noqa: E402
from reprobot.validation.source.snapshot import RepoSnapshot  # noqa: E402

COLUMNS = (
    ("jobs", "jobs"),
    ("lost_attempts", "attempts lost"),
    ("failed_jobs", "jobs failed"),
    ("check_runs_in_progress", "checks in progress"),
    ("duplicate_comments", "duplicate comments"),
    ("revocations", "revocations"),
    ("refused_requests", "401s"),
    ("seconds", "seconds"),
)


def one_stack(root: Path, source: Path, stack: str, args: argparse.Namespace) -> dict[str, Any]:
    issues = list(range(1, args.issues + 1))
    pulls = list(range(1001, 1001 + args.issues))
    root.mkdir(parents=True)
    settings = {"REPROBOT_JOB_HEARTBEAT_S": "1", "REPROBOT_REAPER_INTERVAL_S": "1"}
    postgres = redis_server = None
    if stack == "scale-out":
        postgres = PostgresServer(Path(tempfile.mkdtemp(prefix="reprobot-storm-pg-"))).__enter__()
        redis_server = RedisServer(root / "redis").__enter__()
        settings |= {
            "REPROBOT_DATABASE_URL": postgres.new_database(),
            "REPROBOT_QUEUE_URL": redis_server.url(),
        }
    saved = os.environ.get("PYTHONPATH")
    if args.app_src is not None:
        # The App's processes inherit this environment: they import the other checkout.
        os.environ["PYTHONPATH"] = str(args.app_src.resolve())
    (root / "app").mkdir()
    app = AppHarness(root / "app", source, **settings)
    try:
        app.serve(workers=0)
        for _ in range(1 if stack == "sqlite" else 2):
            app.worker(threads=2)
        counts = storm(app, issues, pulls, revocations=args.revocations).as_dict()
    finally:
        app.close()
        if saved is None:
            os.environ.pop("PYTHONPATH", None)
        else:
            os.environ["PYTHONPATH"] = saved
        if redis_server is not None:
            redis_server.__exit__(None, None, None)
        if postgres is not None:
            postgres.__exit__(None, None, None)
    return {"stack": stack, **counts}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--issues", type=int, default=10, help="issues, and as many pull requests")
    parser.add_argument("--revocations", type=int, default=3)
    parser.add_argument("--stacks", nargs="+", default=["sqlite", "scale-out"])
    parser.add_argument("--app-src", type=Path, default=None)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    results = []
    with tempfile.TemporaryDirectory(prefix="reprobot-storm-") as tmp:
        root = Path(tmp)
        source = root / "durations"
        shutil.copytree(EXAMPLE, source)
        make_repo(source, {})
        # The example's environment, as AppHarness's configuration states it: built once here.
        snapshot = RepoSnapshot.from_git(source, "HEAD", REPO)
        spec = EnvSpec(python="3.11", install="python -m pip install -e '.[test]'")
        ensure_environment(connect(), spec, snapshot, Settings(cache_dir=root / "cache"))
        for stack in args.stacks:
            results.append(one_stack(root / stack, source, stack, args))
    if args.json:
        print(json.dumps(results))
        return 0
    title = (
        f"{args.issues} issues and {args.issues} pull requests at once, two threads per worker, "
        f"{args.revocations} token revocations"
        + (f" (App from {args.app_src})" if args.app_src else "")
    )
    table = Table(title=title)
    table.add_column("stack")
    for _, header in COLUMNS:
        table.add_column(header)
    for r in results:
        table.add_row(r["stack"], *(str(r[key]) for key, _ in COLUMNS))
    Console(width=140).print(table)
    return 0


if __name__ == "__main__":
    sys.exit(main())
