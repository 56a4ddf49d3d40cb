"""The small error tree of the validation layer, under ``reprobot.errors.ReprobotError``; every
error carries the context to act on it."""

from __future__ import annotations

from pathlib import Path

from reprobot.errors import ReprobotError

__all__ = [
    "DockerUnavailableError",
    "ImageBuildError",
    "ReprobotError",
    "SandboxError",
    "SnapshotError",
]


class DockerUnavailableError(ReprobotError):
    """No Docker engine answers."""


class SnapshotError(ReprobotError):
    """A repository tree could not be produced (unknown commit, not a git repository, ...)."""


class ImageBuildError(ReprobotError):
    """Building a base or environment image failed; ``log_path`` holds the full build log."""

    def __init__(
        self,
        message: str,
        log_path: Path | None = None,
        released_later: str = "",
        cause: str = "",
    ) -> None:
        self.log_path = log_path
        # Why, in one line read from the build's log (the requirement pip could not have, the
        # error the project's build raised); "" when the log does not say.
        self.cause = cause
        # The upload time of the newest release a dated build took although it came out after
        # its moment (one pinned exactly, or the first with a wheel for this Python; ISO 8601,
        # "" when none): releases of that time may need later releases of their own requirements.
        self.released_later = released_later
        suffix = f" (build log: {log_path})" if log_path else ""
        super().__init__(f"{message}{suffix}")


class SandboxError(ReprobotError):
    """A container could not be created, fed or read; not a test failure."""
