"""Choosing among candidates, as LIBRO and its successors do: keep those failing for the issue's
reason, rank by the strength of what they check (an expected value or exception, then a crash,
then only that a reported wrong value is gone), then by how well the failure matches the issue,
then by method (the variants' table, ``drafter.variants``), then prefer the shorter."""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.generation.drafter.variants import method_rank
from reprobot.generation.pool.candidates import Candidate


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The reproducing candidates, best first (deterministic for equal inputs)."""
    keep = [c for c in candidates if c.reproduces]
    return sorted(
        keep,
        key=lambda c: (
            -c.strength,
            -round(c.relevance, 3),
            method_rank(c.draft.method),
            len(c.draft.patch.diff.splitlines()),
            c.draft.test_files,
        ),
    )
