"""The App's errors: a small tree under ``ReprobotError``, each carrying what to act on."""

from __future__ import annotations

from reprobot.errors import ReprobotError


class BotError(ReprobotError):
    """Base of the App layer's errors."""


class AppConfigError(BotError):
    """The process settings cannot start the App (no webhook secret, unreadable key, ...)."""


class GitHubError(BotError):
    """A GitHub request failed after its retries; ``repo`` and ``status`` say where and how."""

    def __init__(self, message: str, *, repo: str | None = None, status: int | None = None):
        self.repo = repo
        self.status = status
        where = f" ({repo})" if repo else ""
        super().__init__(f"{message}{where}")


class JobAbandoned(BotError):
    """The job lost its lease or was superseded: stop without writing anything to GitHub."""
