"""How well a reproduction is backed: what the ``reproduced`` label and headline rest on.

A drafted test that fails on R for the issue's reason reproduces the issue, but not every such
test is as sure: a failure showing the exception or the wrong value the issue shows is the
issue's own; one whose assertion only shares words with the issue, or a value whose exact form
the reporter may have guessed, can fail after a fix as well. The score adds up what backs the
chosen test (pure, over the candidates' outcomes, reasons and oracles, so that the benchmark
reads stored results the same way):

- how much of the issue its failure shows (``failure_match.shown_of_the_issue``): 3, 2 or 1;
- what its assertion checks: a result (an expected value or exception) or that the reported
  crash is gone adds 1; only that a wrong value is gone adds nothing;
- another reading of the issue (a candidate of another method) that reproduces it too adds 1.

The App labels an issue reproduced, and says "Reproduced", only at ``label_min_confidence`` or
above (``bench swt`` prints the label's precision and S at each threshold); below it the comment
says the test probably reproduces the issue and what to check. On the Lite dev set these parts
did not yet tell the right reproductions from the wrong ones, so the setting labels every one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from reprobot.generation.pool.failure_match import shown_of_the_issue

# The highest score: the issue's own failure, a checked result, and a second reading.
MAX_SCORE = 5


@dataclass(frozen=True)
class Confidence:
    """A reproduction's score (0: nothing reproduced) with what backs it and what a maintainer
    should check, in words."""

    score: int
    backing: tuple[str, ...] = ()
    to_check: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {"score": self.score, "backing": list(self.backing), "to_check": list(self.to_check)}


def score(
    reason: str, oracle_kind: str | None, method: str, reproducing_methods: Sequence[str]
) -> Confidence:
    """The confidence of a chosen test whose run on R gave ``reason``, whose oracle is of
    ``oracle_kind`` (``expected``, ``crash``, ``weak``; None when unread), drafted by ``method``,
    among candidates of ``reproducing_methods`` that reproduce the issue."""
    backing: list[str] = []
    to_check: list[str] = []
    shown = shown_of_the_issue(reason)
    if shown == 3:
        backing.append("it fails with what the issue shows (its exception or its wrong value)")
    elif shown == 2:
        backing.append("its assertion names the value or the exception the issue expects")
        to_check.append("that the failure is the one the issue describes")
    else:
        backing.append("its failing assertion shares only words with the issue")
        to_check.append("that the failure is the one the issue describes, not another")
    checks = 0
    if oracle_kind in ("expected", "crash"):
        checks = 1
        backing.append(
            "it checks the result the issue expects"
            if oracle_kind == "expected"
            else "it checks that the reported crash is gone"
        )
        if oracle_kind == "expected":
            to_check.append("that the expected value is written as the project gives it")
    else:
        to_check.append(
            "what a fixed version should give: the test checks only that the reported value is gone"
        )
    others = {m for m in reproducing_methods if m != method}
    agree = 1 if others else 0
    if agree:
        backing.append(f"another reading of the issue reproduces it too ({sorted(others)[0]})")
    else:
        to_check.append("the test against the issue's example: no other reading reproduced it")
    return Confidence(shown + checks + agree if shown else 0, tuple(backing), tuple(to_check))


def of_records(
    method: str | None, test_patch: str, candidates: Sequence[Mapping[str, Any]]
) -> Confidence:
    """The confidence of a stored reproduction: its chosen ``method`` and ``test_patch``, and
    its candidates as ``reprobot reproduce --json`` writes them (``method``, ``outcome``,
    ``reason``, ``oracle``, ``test_patch``; the chosen one holds the chosen patch)."""
    reproducing = [c for c in candidates if c.get("outcome") == "reproduces"]
    chosen = next((c for c in reproducing if c.get("test_patch") == test_patch), None)
    chosen = chosen or next((c for c in reproducing if c.get("method") == method), None)
    if method is None or not test_patch or chosen is None:
        return Confidence(0)
    oracle = chosen.get("oracle")
    kind = oracle.get("kind") if isinstance(oracle, Mapping) else None
    return score(
        str(chosen.get("reason", "")),
        str(kind) if kind else None,
        str(chosen.get("method", method)),
        [str(c.get("method", "")) for c in reproducing],
    )
