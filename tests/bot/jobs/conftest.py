"""The GitHub stand-in's scenario of ``tests/bot/github``, for the jobs that talk to it."""

from tests.bot.github.conftest import api, app, app_key, git_root, records, server, sources

__all__ = ["api", "app", "app_key", "git_root", "records", "server", "sources"]
