"""What the job ledger answers without changing anything: a job, all jobs, counts by state, and
the pull requests verified at a head."""

from __future__ import annotations

from sqlalchemy import Connection, Engine, func, select

from reprobot.bot.store.jobs import Job, job_from_row
from reprobot.bot.store.models import JobRow


class JobReads:
    """The ledger's reads over ``_engine`` (set by the ledger)."""

    _engine: Engine

    @staticmethod
    def _get(conn: Connection, job_id: int) -> Job | None:
        row = conn.execute(select(JobRow.__table__).where(JobRow.id == job_id)).mappings().first()
        return None if row is None else job_from_row(row)

    def get(self, job_id: int) -> Job | None:
        """The job with ``job_id``, or None."""
        with self._engine.connect() as conn:
            return self._get(conn, job_id)

    def counts(self) -> dict[tuple[str, str], int]:
        """How many jobs there are of each (kind, state)."""
        stmt = select(JobRow.kind, JobRow.state, func.count()).group_by(JobRow.kind, JobRow.state)
        with self._engine.connect() as conn:
            return {(str(k), str(s)): int(n) for k, s, n in conn.execute(stmt)}

    def jobs(self, repo: str | None = None) -> list[Job]:
        """All jobs (of ``repo`` when given), oldest first."""
        stmt = select(JobRow.__table__).order_by(JobRow.id)
        if repo is not None:
            stmt = stmt.where(JobRow.repo == repo)
        with self._engine.connect() as conn:
            return [job_from_row(row) for row in conn.execute(stmt).mappings()]

    def pulls_verified_at(self, repo: str, head_sha: str) -> list[int]:
        """The pull requests of ``repo`` with a verification job of ``head_sha``."""
        stmt = (
            select(JobRow.number)
            .where(JobRow.repo == repo, JobRow.kind == "verify", JobRow.head_sha == head_sha)
            .distinct()
            .order_by(JobRow.number)
        )
        with self._engine.connect() as conn:
            return [int(n) for n in conn.execute(stmt).scalars()]
