"""The App's log lines stay whole when several processes and threads share one log file, as
``reprobot worker`` processes do under a process manager that collects their stderr."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

CHILD = """
import sys, threading
import structlog
from reprobot.logs import configure_logging

configure_logging(json_output=True)
log = structlog.get_logger()

def run(thread):
    for i in range(300):
        with structlog.contextvars.bound_contextvars(job_id=f"{sys.argv[1]}-{thread}-{i}"):
            log.info("job.started", pad="x" * 200)

threads = [threading.Thread(target=run, args=(t,)) for t in range(3)]
for t in threads:
    t.start()
for t in threads:
    t.join()
"""


def test_processes_sharing_a_log_write_whole_lines(tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    children = []
    for n in range(3):
        with log.open("ab") as sink:
            children.append(
                subprocess.Popen(
                    [sys.executable, "-c", CHILD, str(n)], stdout=sink, stderr=subprocess.STDOUT
                )
            )
    assert [child.wait(timeout=120) for child in children] == [0, 0, 0]
    lines = log.read_text().splitlines()
    job_ids = [json.loads(line)["job_id"] for line in lines]
    assert sorted(job_ids) == sorted(
        f"{n}-{t}-{i}" for n in range(3) for t in range(3) for i in range(300)
    )
