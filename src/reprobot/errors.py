"""The root of Reprobot's error tree, shared by every layer.

Each layer keeps its own small tree under it (``validation.errors``, ``generation.errors``,
``bot.errors``, the benchmark's ``DatasetError``), so that the command line and the App's
worker can tell an error Reprobot raised on purpose, with its context, from a defect."""

from __future__ import annotations


class ReprobotError(Exception):
    """Base of every error Reprobot raises on purpose."""
