"""Simultaneous first starts on a fresh PostgreSQL: how many rounds every process starts.

Each round makes an empty database and starts ``--processes`` processes at the same instant,
each doing what ``reprobot serve`` and ``reprobot worker`` do first with the store (connect it
and migrate it to the newest schema, as ``build_context`` does); a round counts when every
process exits 0. The first migration is serialised by a database lock, so every round should.

    .venv/bin/python benchmarks/first_starts.py [--rounds 10] [--processes 3]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.support.servers import PostgresServer  # noqa: E402

# As the App's processes start: the store connected and migrated.
_START = """\
import sys
from reprobot.bot.store.engine import make_engine, migrate
engine = make_engine(sys.argv[1])
migrate(engine)
engine.dispose()
"""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--rounds", type=int, default=10)
    parser.add_argument("--processes", type=int, default=3)
    args = parser.parse_args()
    whole = 0
    with PostgresServer(Path(tempfile.mkdtemp(prefix="reprobot-starts-pg-"))) as postgres:
        for round_no in range(1, args.rounds + 1):
            url = postgres.new_database()
            starts = [
                subprocess.Popen(
                    [sys.executable, "-c", _START, url],
                    stdout=subprocess.DEVNULL,
                    stderr=subprocess.PIPE,
                )
                for _ in range(args.processes)
            ]
            errors = [p.communicate(timeout=300)[1].decode(errors="replace") for p in starts]
            lost = [
                e.strip().splitlines()[-1]
                for p, e in zip(starts, errors, strict=True)
                if p.returncode
            ]
            whole += not lost
            print(
                f"round {round_no}: {args.processes - len(lost)} of {args.processes} started"
                + (f" ({lost[0]})" if lost else "")
            )
            postgres.drop_database(url)
    print(f"{whole} of {args.rounds} rounds: every process started")
    return 0 if whole == args.rounds else 1


if __name__ == "__main__":
    sys.exit(main())
