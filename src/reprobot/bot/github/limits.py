"""How Reprobot paces its GitHub requests: rate-limit retries and serial mutations.

GitHub asks integrations to honour ``retry-after`` and ``x-ratelimit-reset``, to back off
exponentially on secondary limits, and to send mutating requests one at a time with a pause
between them. githubkit lets a client plug in both a retry decision and a throttler.
"""

from __future__ import annotations

import threading
import time
from collections.abc import AsyncGenerator, Callable, Generator
from contextlib import asynccontextmanager, contextmanager
from datetime import timedelta
from typing import Any

import anyio
import httpx
import structlog
from githubkit.exception import (
    GitHubException,
    PrimaryRateLimitExceeded,
    RateLimitExceeded,
    RequestFailed,
    RequestTimeout,
)
from githubkit.throttling import BaseThrottler
from githubkit.typing import RetryOption

log = structlog.get_logger(__name__)

MUTATING = frozenset({"POST", "PATCH", "PUT", "DELETE"})
# githubkit sleeps 60 s when a retry carries no delay; never hand it a zero delay.
_MIN_DELAY = timedelta(milliseconds=50)
# GitHub: a secondary rate limit answer without retry-after or x-ratelimit-reset asks for a wait
# of at least one minute.
_BARE_SECONDARY_WAIT = timedelta(seconds=60)


class RetryPolicy:
    """Which failed GitHub requests to retry, and after how long.

    - Primary rate limit (``x-ratelimit-remaining: 0``): wait until ``x-ratelimit-reset``, unless
      that is further away than ``max_wait_s`` (then the job fails and is retried later).
    - Secondary rate limit: ``retry-after`` when given, and never less than an exponential
      backoff (1, 2, 4 ... seconds, times ``backoff_s``). An answer that says it is one (429,
      or 403 with GitHub's secondary rate limit message) but carries neither ``retry-after``
      nor ``x-ratelimit-remaining: 0`` waits at least a minute, as GitHub asks.
    - 5xx answers and timeouts of reads: exponential backoff; not for requests that create
      something (a comment, a check run), which GitHub may have done before failing to answer:
      their callers look first, then ask again.
    """

    def __init__(
        self,
        max_retries: int = 5,
        max_wait_s: float = 900.0,
        backoff_s: float = 1.0,
        on_wait: Callable[[str, float], None] | None = None,
    ):
        self.max_retries = max_retries
        self.max_wait = timedelta(seconds=max_wait_s)
        self.backoff_s = backoff_s
        self.on_wait = on_wait

    def _wait(self, reason: str, wait: timedelta) -> RetryOption:
        if self.on_wait is not None:
            self.on_wait(reason, wait.total_seconds())
        return RetryOption(True, wait)

    def _backoff(self, retry_count: int) -> timedelta:
        return timedelta(seconds=self.backoff_s * (2**retry_count))

    def __call__(self, exc: GitHubException, retry_count: int) -> RetryOption:
        if retry_count >= self.max_retries:
            return RetryOption(False)
        if isinstance(exc, RateLimitExceeded):
            wait = exc.retry_after
            if isinstance(exc, PrimaryRateLimitExceeded):
                # The reset time is GitHub's clock; a second more absorbs the skew.
                wait += timedelta(seconds=1)
            else:
                wait = max(wait, self._backoff(retry_count))
            if wait > self.max_wait:
                log.warning("github.rate_limit.too_long", wait_s=wait.total_seconds())
                return RetryOption(False)
            log.info(
                "github.rate_limited",
                status=exc.response.status_code,
                wait_s=wait.total_seconds(),
                attempt=retry_count + 1,
            )
            reason = "primary" if isinstance(exc, PrimaryRateLimitExceeded) else "secondary"
            return self._wait(reason, max(wait, _MIN_DELAY))
        if isinstance(exc, RequestFailed) and _bare_secondary_limit(exc):
            # githubkit only recognises a secondary limit by its headers; GitHub also sends it
            # without them, and then asks for a wait of at least one minute.
            wait = max(_BARE_SECONDARY_WAIT, self._backoff(retry_count))
            if wait > self.max_wait:
                log.warning("github.rate_limit.too_long", wait_s=wait.total_seconds())
                return RetryOption(False)
            log.info(
                "github.rate_limited",
                status=exc.response.status_code,
                wait_s=wait.total_seconds(),
                attempt=retry_count + 1,
            )
            return self._wait("secondary", wait)
        if (
            isinstance(exc, RequestFailed)
            and exc.response.status_code >= 500
            and not creates(exc.response.raw_request)
        ):
            wait = self._backoff(retry_count)
            log.info(
                "github.server_error",
                status=exc.response.status_code,
                wait_s=wait.total_seconds(),  # .seconds would log 0 for sub-second backoffs
            )
            return self._wait("server_error", max(wait, _MIN_DELAY))
        if isinstance(exc, RequestTimeout) and exc.request.method not in MUTATING:
            return self._wait("timeout", max(self._backoff(retry_count), _MIN_DELAY))
        return RetryOption(False)


def creates(request: httpx.Request) -> bool:
    """Whether ``request`` creates a comment or a check run: sent twice, it makes two."""
    return request.method == "POST" and request.url.path.rstrip("/").endswith(
        ("/comments", "/check-runs")
    )


def _bare_secondary_limit(exc: RequestFailed) -> bool:
    """A secondary rate limit answer without the headers githubkit reads: any 429, or a 403
    whose message names the secondary rate limit."""
    status = exc.response.status_code
    if status == 429:
        return True
    if status != 403:
        return False
    try:
        data = exc.response.json()
    except ValueError:
        return False
    message = data.get("message") if isinstance(data, dict) else None
    return isinstance(message, str) and "secondary rate limit" in message.lower()


class MutationThrottler(BaseThrottler):
    """Mutating requests of the whole process go one at a time, ``pause_s`` apart; reads run
    concurrently up to ``max_reads``. One instance is shared by every client of a process."""

    def __init__(self, pause_s: float = 1.0, max_reads: int = 10) -> None:
        self.pause_s = pause_s
        self._mutation = threading.Lock()
        self._reads = threading.BoundedSemaphore(max_reads)
        self._last_end = 0.0
        self._async_mutation: anyio.Lock | None = None
        self._async_reads: anyio.Semaphore | None = None
        self._max_reads = max_reads

    def _pause(self) -> float:
        return max(0.0, self._last_end + self.pause_s - time.monotonic())

    @contextmanager
    def acquire(self, request: httpx.Request) -> Generator[None, Any, Any]:
        if request.method.upper() not in MUTATING:
            with self._reads:
                yield
            return
        with self._mutation:
            time.sleep(self._pause())
            try:
                yield
            finally:
                self._last_end = time.monotonic()

    @asynccontextmanager
    async def async_acquire(self, request: httpx.Request) -> AsyncGenerator[None, Any]:
        if self._async_mutation is None:
            self._async_mutation = anyio.Lock()
            self._async_reads = anyio.Semaphore(self._max_reads)
        assert self._async_reads is not None
        if request.method.upper() not in MUTATING:
            async with self._async_reads:
                yield
            return
        async with self._async_mutation:
            await anyio.sleep(self._pause())
            try:
                yield
            finally:
                self._last_end = time.monotonic()
