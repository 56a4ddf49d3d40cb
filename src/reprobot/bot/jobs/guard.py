"""The promise a job gets from its worker: a way to ask whether it may still write to GitHub.

The worker holds the job's lease and answers; the jobs only ask. Keeping the protocol here lets
the worker import the jobs without the jobs importing the worker.
"""

from __future__ import annotations

from typing import Protocol


class Guard(Protocol):
    def check(self) -> None:
        """Raise JobAbandoned when the job may no longer write anything."""
