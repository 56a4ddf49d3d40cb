"""One verification job's check run, from creation to completion.

The job that creates a check run owns it: it completes it with the verdict, or, when anything
stops the job after creating it, with why ("Reprobot could not finish: ..."). An attempt that
the worker will try again leaves it in progress, saying so, and the next attempt reuses it:
GitHub cannot reopen a completed check run, and a second one of the same name would stand
beside the first. What no attempt completes (its worker died, GitHub was unreachable at the
end) the reaper completes once the job has finished (``complete_left_behind``).
"""

from __future__ import annotations

import structlog

from reprobot.bot.errors import GitHubError, JobAbandoned
from reprobot.bot.github.repo_api import Conclusion, RepoAPI
from reprobot.bot.render.markdown import inline_code
from reprobot.bot.store.check_runs import CheckRuns, LeftCheckRun
from reprobot.bot.store.jobs import Job
from reprobot.errors import ReprobotError

log = structlog.get_logger(__name__)

NOT_FINISHED = "Reprobot could not finish"
SUPERSEDED = "Superseded"


def title_for(exc: BaseException) -> str:
    """The title of a check run a job stopped on ``exc`` before its verdict."""
    return SUPERSEDED if isinstance(exc, JobAbandoned) else NOT_FINISHED


def why(exc: BaseException) -> str:
    """What stopped a job, as a check run may say it: Reprobot's own errors in their words, any
    other exception by its type only (its text may hold anything)."""
    text = str(exc) if isinstance(exc, ReprobotError | JobAbandoned) else type(exc).__name__
    return text[:500]


class CheckRunOwner:
    """The check run of verification ``job`` on ``head_sha``."""

    def __init__(self, api: RepoAPI, store: CheckRuns, job: Job, head_sha: str) -> None:
        self.api, self.store, self.job, self.head_sha = api, store, job, head_sha
        self.id: int | None = None
        self.completed = False

    def start(self, name: str, title: str, summary: str) -> None:
        """In progress with ``title``: the job's own open check run of this head when an earlier
        attempt left one, else a new one."""
        earlier = self.store.get(self.job.id)
        if earlier is not None and not earlier.completed and earlier.head_sha == self.head_sha:
            self.id = earlier.check_run_id
            self.api.update_check_run(self.id, title, summary)
            log.info("check_run.reused", check_run=self.id)
            return
        self.id = self.api.create_check_run(self.head_sha, name, title, summary)
        self.store.created(
            self.job.id, self.job.repo, self.job.installation_id, self.head_sha, self.id
        )

    def complete(
        self, conclusion: Conclusion, title: str, summary: str, text: str, url: str | None
    ) -> None:
        assert self.id is not None, "complete() before start()"
        self.api.complete_check_run(self.id, conclusion, title, summary, text, url)
        self.completed = True
        self.store.completed(self.job.id, self.id)

    def interrupted(self, exc: BaseException, again: bool, url: str | None) -> None:
        """The job stopped on ``exc`` after ``start``: say so. Left in progress when another
        attempt follows (``again``) or another worker took the job over; completed neutral
        otherwise. Never raises: the error being reported comes first."""
        if self.id is None or self.completed:
            return
        reason = why(exc)
        try:
            if again:
                self.api.update_check_run(
                    self.id,
                    "Trying again",
                    f"This attempt stopped: {inline_code(reason)}. Reprobot tries again shortly.",
                )
                return
            self.complete("neutral", title_for(exc), inline_code(reason), "", url)
        except ReprobotError as failed:
            # GitHub unreachable as well: the next attempt, or the reaper, ends it.
            log.warning("check_run.not_updated", check_run=self.id, error=str(failed))


def complete_left_behind(api: RepoAPI, store: CheckRuns, left: LeftCheckRun) -> None:
    """Complete, neutral, a check run whose job finished without completing it."""
    run = left.check_run
    if left.job_state == "superseded":
        title, summary = SUPERSEDED, "A newer push to this pull request replaced this run."
    else:
        title = NOT_FINISHED
        summary = inline_code((left.job_error or "the job stopped")[:500])
    try:
        api.complete_check_run(run.check_run_id, "neutral", title, summary, "")
    except GitHubError as exc:
        if exc.status != 404:
            raise
        # Gone with its commit or repository: nothing is left spinning.
    store.completed(run.job_id, run.check_run_id)
