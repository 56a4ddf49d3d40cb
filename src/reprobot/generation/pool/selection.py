"""Choosing among candidates, as LIBRO and its successors do: keep those failing for the issue's
reason, rank by the strength of what they check (an expected value or exception, then a crash,
then only that a reported wrong value is gone), then by how well the failure matches the issue,
then by method, then prefer the shorter."""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.generation.pool.candidates import Candidate

# On equal relevance, the issue's own code beats a model's rewrite of it: it is what the
# reporter ran.
_METHOD_ORDER = (
    "issue-expected-return", "issue-session-raises-like", "issue-session-raised-before",
    "issue-code-expected", "issue-code",
    "issue-session-raises",
    "issue-cli", "issue-proposed-value",
    "issue-session-expected", "issue-session-negated", "issue-session-agree",
    "issue-fixed-point",
    "issue-session-value", "issue-stated-value", "issue-code-last", "issue-shown-value",
    "llm-agent", "llm-zero-shot",
)  # fmt: skip


def _method_rank(method: str) -> int:
    return _METHOD_ORDER.index(method) if method in _METHOD_ORDER else len(_METHOD_ORDER)


def rank(candidates: Sequence[Candidate]) -> list[Candidate]:
    """The reproducing candidates, best first (deterministic for equal inputs)."""
    keep = [c for c in candidates if c.reproduces]
    return sorted(
        keep,
        key=lambda c: (
            -c.strength,
            -round(c.relevance, 3),
            _method_rank(c.draft.method),
            len(c.draft.patch.diff.splitlines()),
            c.draft.test_files,
        ),
    )
