"""The verification job's part in its check run's life that depends on the ledger: whether a
stopped attempt's job lives on in another attempt, which will reuse the check run."""

from __future__ import annotations

from reprobot.bot.context import AppContext
from reprobot.bot.jobs.verify import _taken_over
from tests.bot.jobs.conftest import verify_job
from tests.support.widgets import Sources


def test_a_job_is_taken_over_only_when_another_attempt_holds_it(
    ctx: AppContext, sources: Sources
) -> None:
    job = verify_job(ctx, sources.main_sha)
    # Still this attempt's: a failure here is not a take-over, the check run ends now.
    assert not _taken_over(ctx, job)

    # The lease ran out and the job was queued again, then claimed by another worker.
    assert ctx.ledger.release(job.id, "w1", "lease lost")
    assert _taken_over(ctx, job)
    again = ctx.ledger.claim(job.id, "w2", 60)
    assert again is not None and _taken_over(ctx, job)

    # Superseded or finished: nobody else will complete it.
    assert ctx.ledger.finish(job.id, "w2", "done")
    assert not _taken_over(ctx, job)
