"""Progress of slow steps, for a person watching: what is happening now, and how long it took.

Library code never prints. It reports through a ``Progress`` passed in as an argument; the
default, ``SILENT``, says nothing (the App logs instead). The command line passes one that writes
a line per step to standard error (``reprobot.cli.progress``).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Protocol


class Progress(Protocol):
    def step(self, what: str, kind: str = "") -> contextlib.AbstractContextManager[None]:
        """A slow step (a base image bootstrap, an environment build): told when it starts and
        when it ends, with its elapsed time. ``kind`` names the step for machines:
        ``base-image``, ``bootstrap``, ``pull``, ``import``, ``environment``, ``drafting``."""

    def detail(self, what: str, kind: str = "", seconds: float | None = None) -> None:
        """A finer event (``sandbox-run``, with its ``seconds``), told to a person only when
        they asked for detail."""


class Silent:
    """Tells nothing."""

    @contextlib.contextmanager
    def step(self, what: str, kind: str = "") -> Iterator[None]:
        yield

    def detail(self, what: str, kind: str = "", seconds: float | None = None) -> None:
        return None


SILENT: Progress = Silent()


def elapsed(seconds: float) -> str:
    """``0.4 s``, ``12.3 s``, ``2 min 05 s``, ``1 h 02 min``: short, and readable at a glance."""
    if seconds < 60:
        return f"{seconds:.1f} s"
    whole = round(seconds)
    if whole < 3600:
        return f"{whole // 60} min {whole % 60:02d} s"
    return f"{whole // 3600} h {whole % 3600 // 60:02d} min"
