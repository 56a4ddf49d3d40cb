"""Whether a failed job is tried again: the worker's rule, which the verification job also reads
to know whether the check run it owns stays open for the next attempt."""

from __future__ import annotations

from reprobot.bot.errors import GitHubError
from reprobot.bot.store.jobs import Job
from reprobot.errors import ReprobotError
from reprobot.validation import DockerUnavailableError


def retryable(exc: ReprobotError) -> bool:
    """Passing trouble that another attempt may not meet."""
    if isinstance(exc, DockerUnavailableError):
        return True
    if isinstance(exc, GitHubError):
        # No status: the network or git; 5xx and rate limits: GitHub itself. A 4xx other than
        # a rate limit will not change by trying again.
        return exc.status is None or exc.status >= 500 or exc.status in (403, 429)
    return False


def tries_again(exc: BaseException, job: Job, max_attempts: int) -> bool:
    """Whether the worker will give ``job`` another attempt after ``exc``."""
    return isinstance(exc, ReprobotError) and retryable(exc) and job.attempts < max_attempts
