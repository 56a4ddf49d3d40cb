"""The GitHub App: webhooks, jobs, GitHub access, the store, rendering and per-repository
configuration. It sits on top of ``generation`` and ``validation``; nothing below imports it.

What the command line uses of it is exported here, and it imports it from here only."""

from __future__ import annotations

from reprobot.bot.app_image import DEFAULT_TAG, build_app_image
from reprobot.bot.context import AppContext, build_context
from reprobot.bot.github.registration import (
    build_manifest,
    convert,
    manifest_page,
    write_credentials,
)
from reprobot.bot.jobs.worker import JobRunner, Reaper
from reprobot.bot.pages.documents import environment_view, reproduction_page, verdict_page
from reprobot.bot.pages.html import render_page, write_page
from reprobot.bot.render.verdict import render_verdict
from reprobot.bot.webhooks.app import create_app

__all__ = [
    "DEFAULT_TAG",
    "AppContext",
    "JobRunner",
    "Reaper",
    "build_app_image",
    "build_context",
    "build_manifest",
    "convert",
    "create_app",
    "environment_view",
    "manifest_page",
    "render_page",
    "render_verdict",
    "reproduction_page",
    "verdict_page",
    "write_credentials",
    "write_page",
]
