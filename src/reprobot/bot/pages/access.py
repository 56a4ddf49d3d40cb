"""Whether a signed-in user can read a repository, as GitHub says, remembered for a short while.

GitHub is asked with the user's own token; its answer, either way, is reused for ``ttl_s``
(ACCESS_CACHE_S) for that session and repository, so reading a page and its earlier heads costs
one request, and a user who loses access to the repository loses its pages within that time.
The memory is per process, bounded, and forgets the oldest answers first."""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable

from reprobot.bot.github.user_auth import GitHubUsers
from reprobot.bot.store.sessions import WebSession

# A session's key and a repository's lower-cased full name.
_Key = tuple[str, str]


class AccessCache:
    """Answers kept for ``ttl_s`` seconds of ``clock``; at most ``max_entries``, the oldest
    dropped first. Safe to use from many threads."""

    def __init__(
        self,
        ttl_s: float,
        max_entries: int = 10_000,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ttl_s = ttl_s
        self._max = max_entries
        self._clock = clock
        self._lock = threading.Lock()
        self._answers: OrderedDict[_Key, tuple[bool, float]] = OrderedDict()

    def get(self, key: _Key) -> bool | None:
        """The answer kept for ``key``, or None when there is none or it is too old."""
        with self._lock:
            found = self._answers.get(key)
            if found is None:
                return None
            answer, until = found
            if self._clock() >= until:
                del self._answers[key]
                return None
            return answer

    def put(self, key: _Key, answer: bool) -> None:
        if self._ttl_s <= 0:
            return
        with self._lock:
            self._answers.pop(key, None)
            self._answers[key] = (answer, self._clock() + self._ttl_s)
            while len(self._answers) > self._max:
                self._answers.popitem(last=False)

    def forget(self, session_key: str) -> None:
        """Drop every answer about one session (it ended)."""
        with self._lock:
            for key in [k for k in self._answers if k[0] == session_key]:
                del self._answers[key]

    def __len__(self) -> int:
        with self._lock:
            return len(self._answers)


class ReadAccess:
    """``can_read``: GitHub's answer for a session and a repository, through the cache."""

    def __init__(self, users: GitHubUsers, cache: AccessCache) -> None:
        self._users = users
        self._cache = cache

    def can_read(self, session: WebSession, repo: str) -> bool:
        """Whether the session's user can read ``repo``. The user's token being refused
        (TokenRefused) and GitHub not answering (GitHubError) pass through, and are not kept."""
        key = (session.key, repo.lower())
        known = self._cache.get(key)
        if known is not None:
            return known
        answer = self._users.can_read(session.token, repo)
        self._cache.put(key, answer)
        return answer

    def forget(self, session: WebSession) -> None:
        self._cache.forget(session.key)
