"""The small error tree of the validation layer; every error carries the context to act on it."""

from __future__ import annotations

from pathlib import Path


class ReprobotError(Exception):
    """Base of every error Reprobot raises on purpose."""


class DockerUnavailableError(ReprobotError):
    """No Docker engine answers."""


class SnapshotError(ReprobotError):
    """A repository tree could not be produced (unknown commit, not a git repository, ...)."""


class ImageBuildError(ReprobotError):
    """Building a base or environment image failed; ``log_path`` holds the full build log."""

    def __init__(self, message: str, log_path: Path | None = None, pinned_later: str = "") -> None:
        self.log_path = log_path
        # The upload time of the newest release the build pins exactly, when it is later than
        # the moment the build resolved at (ISO 8601; "" when none).
        self.pinned_later = pinned_later
        suffix = f" (build log: {log_path})" if log_path else ""
        super().__init__(f"{message}{suffix}")


class SandboxError(ReprobotError):
    """A container could not be created, fed or read; not a test failure."""
