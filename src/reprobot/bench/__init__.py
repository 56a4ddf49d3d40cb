"""The evaluation harness: SWT-Bench's evaluation (``bench.swt``) and the verdicts as a filter of
candidate fixes (``bench.pod``), on shared datasets, environments and an executor.

The command line takes its ``bench`` commands from here, and nothing else of it."""

from __future__ import annotations

from reprobot.bench.cli import register

__all__ = ["register"]
