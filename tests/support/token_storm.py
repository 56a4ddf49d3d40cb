"""Issue and pull request jobs arriving together while GitHub revokes the App's tokens: what a
maintainer would see go wrong, counted.

``storm`` opens issues and fix pull requests on the example repository all at once, revokes
every installation token three times while the jobs run (as GitHub does when an installation's
permissions change), waits for every job to end and counts: job attempts lost (an attempt that
ended in a retry, or a job that failed), check runs left in progress, duplicate comments, and
the requests GitHub refused with a revoked token (the revocations did bite).
"""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass
from typing import Any

from tests.support.app_harness import REPO, AppHarness, wait_for
from tests.support.example_patches import FIX
from tests.support.repos import EXAMPLE

ISSUE_TITLE, _, ISSUE_BODY = (EXAMPLE / "ISSUE.md").read_text().partition("\n")


@dataclass(frozen=True)
class StormCounts:
    jobs: int
    lost_attempts: int  # attempts that ended in a retry, plus jobs that failed
    failed_jobs: int
    check_runs: int
    check_runs_in_progress: int
    duplicate_comments: int  # comments of the App beyond one per issue or pull request
    revocations: int
    refused_requests: int  # GitHub's 401s to the App's installation tokens (API and git)
    seconds: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def storm(
    app: AppHarness,
    issues: list[int],
    pulls: list[int],
    revocations: int = 3,
    timeout: float = 1800.0,
) -> StormCounts:
    """Open ``issues`` and one fix pull request per number in ``pulls`` (each closing the issue
    of the same position) at once, revoke every token ``revocations`` times while their jobs
    run, wait for all to end, and count what went wrong. The App's processes must be running."""
    heads = {
        n: app.push({f"notes/{n}.md": f"pull {n}\n"}, f"Fix for #{issues[i]}", f"fix-{n}", FIX)
        for i, n in enumerate(pulls)
    }
    sends: list[tuple[str, dict[str, Any]]] = [
        ("issues", app.open_issue(n, ISSUE_TITLE, ISSUE_BODY)) for n in issues
    ]
    sends += [
        ("pull_request", app.open_pull(n, heads[n], f"Fixes #{issues[i]}"))
        for i, n in enumerate(pulls)
    ]
    numbers = [*issues, *pulls]
    started = time.monotonic()
    with ThreadPoolExecutor(8) as pool:
        codes = set(pool.map(lambda item: app.deliver(*item).status_code, sends))
    assert codes == {202}, codes

    ended = threading.Event()
    revoked: list[float] = []

    def finished_share() -> float:
        jobs = [j for n in numbers for j in app.jobs(n)]
        done = [j for j in jobs if j.state in ("done", "failed", "superseded")]
        return len(done) / max(len(numbers), 1)

    def revoke() -> None:
        # Spread over the run: at the first running job, then as a third and two thirds of the
        # jobs have ended, each while others still run.
        marks = [0.0, 1 / 3, 2 / 3][:revocations]
        for mark in marks:
            while not ended.is_set():
                running = any(j.state == "running" for n in numbers for j in app.jobs(n))
                if running and finished_share() >= mark:
                    break
                ended.wait(0.2)
            if ended.is_set():
                return
            app.github.expire_tokens()
            revoked.append(time.monotonic() - started)
            ended.wait(1.0)

    revoker = threading.Thread(target=revoke, name="revoker")
    revoker.start()
    try:
        # Failed jobs are counted, not a reason to stop waiting; a dead process is.
        wait_for(
            "every job to end",
            lambda: all(app.finished(n) for n in numbers),
            timeout=timeout,
            abort=app.dead,
        )
    finally:
        ended.set()
        revoker.join()
    seconds = time.monotonic() - started
    jobs = [j for n in numbers for j in app.jobs(n)]
    runs = [r for r in app.github.check_runs(REPO) if r["head_sha"] in heads.values()]
    comments = {n: len(app.bot_comments(n)) for n in numbers}
    refused = [
        c
        for c in app.github.calls
        if c.status == 401 and not c.path.endswith("/access_tokens") and c.path != "/app"
    ]
    failed = [j for j in jobs if j.state == "failed"]
    return StormCounts(
        jobs=len(jobs),
        lost_attempts=sum(max(j.attempts - 1, 0) for j in jobs) + len(failed),
        failed_jobs=len(failed),
        check_runs=len(runs),
        check_runs_in_progress=sum(r["status"] != "completed" for r in runs),
        duplicate_comments=sum(max(c - 1, 0) for c in comments.values()),
        revocations=len(revoked),
        refused_requests=len(refused),
        seconds=round(seconds, 1),
    )
