"""The check run each verification job created, and whether Reprobot has completed it.

A check run left "in progress" spins on the pull request for good: GitHub never ends it. The
record lets a retry of the job reuse the check run it created (GitHub cannot reopen a completed
one, and a second run of the same name would stand beside the first), and lets the reaper
complete one whose job ended without completing it (its worker died, or GitHub was unreachable
at that moment).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import Engine, RowMapping, insert, select, update

from reprobot.bot.store.jobs import FINISHED_STATES
from reprobot.bot.store.models import CheckRunRow, JobRow, utc


@dataclass(frozen=True)
class StoredCheckRun:
    job_id: int
    repo: str
    installation_id: int
    head_sha: str
    check_run_id: int
    completed: bool
    updated_at: datetime


@dataclass(frozen=True)
class LeftCheckRun:
    """An open check run whose job has finished: what the reaper completes, and why."""

    check_run: StoredCheckRun
    job_state: str
    job_error: str | None


def _row(row: RowMapping) -> StoredCheckRun:
    return StoredCheckRun(
        job_id=row["job_id"],
        repo=row["repo"],
        installation_id=row["installation_id"],
        head_sha=row["head_sha"],
        check_run_id=row["check_run_id"],
        completed=bool(row["completed"]),
        updated_at=utc(row["updated_at"]),
    )


class CheckRuns:
    """The check run records over ``engine``; ``clock`` returns the current time."""

    def __init__(
        self, engine: Engine, clock: Callable[[], datetime] = lambda: datetime.now(UTC)
    ) -> None:
        self._engine = engine
        self._clock = clock

    def get(self, job_id: int) -> StoredCheckRun | None:
        with self._engine.connect() as conn:
            row = (
                conn.execute(select(CheckRunRow.__table__).where(CheckRunRow.job_id == job_id))
                .mappings()
                .first()
            )
        return None if row is None else _row(row)

    def created(
        self, job_id: int, repo: str, installation_id: int, head_sha: str, check_run_id: int
    ) -> None:
        """Job ``job_id`` created check run ``check_run_id`` (in progress); it replaces the
        job's earlier, completed one (a re-run of the job)."""
        values = {
            "repo": repo,
            "installation_id": installation_id,
            "head_sha": head_sha,
            "check_run_id": check_run_id,
            "completed": False,
            "updated_at": self._clock(),
        }
        with self._engine.begin() as conn:
            replaced = conn.execute(
                update(CheckRunRow).where(CheckRunRow.job_id == job_id).values(**values)
            )
            if replaced.rowcount == 0:
                conn.execute(insert(CheckRunRow).values(job_id=job_id, **values))

    def completed(self, job_id: int, check_run_id: int) -> None:
        """The job's check run ``check_run_id`` was completed on GitHub."""
        with self._engine.begin() as conn:
            conn.execute(
                update(CheckRunRow)
                .where(CheckRunRow.job_id == job_id, CheckRunRow.check_run_id == check_run_id)
                .values(completed=True, updated_at=self._clock())
            )

    def left_behind(self, limit: int = 100) -> list[LeftCheckRun]:
        """Check runs still in progress whose job has finished (done, failed or superseded):
        nobody will complete them but the reaper. A queued or running job's check run is its
        own to reuse and complete."""
        query = (
            select(CheckRunRow.__table__, JobRow.state, JobRow.error)
            .join(JobRow, JobRow.id == CheckRunRow.job_id)
            .where(CheckRunRow.completed.is_(False), JobRow.state.in_(FINISHED_STATES))
            .order_by(CheckRunRow.job_id)
            .limit(limit)
        )
        with self._engine.connect() as conn:
            rows = conn.execute(query).mappings().all()
        return [LeftCheckRun(_row(r), str(r["state"]), r["error"]) for r in rows]
