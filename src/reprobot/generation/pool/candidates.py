"""Candidate validation: drafts run on R in the sandbox and judged against the issue.

Drafts that only add new test modules run together in one sandbox run (each is its own module,
so one cannot break another's collection); drafts that edit existing files run alone. Every
run counts against the issue's budget of sandbox runs.
"""

from __future__ import annotations

import threading
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import docker
import structlog

from reprobot.generation.drafts import Draft, DraftOutcome, Feedback, RunDraft
from reprobot.generation.pool.failure_match import IssueReason, JudgedRun, judge_run
from reprobot.progress import SILENT, Progress, elapsed
from reprobot.validation import (
    HASH_SEED,
    STRENGTH,
    EnvImage,
    Oracle,
    Patch,
    RepoSnapshot,
    RunLimits,
    TestRun,
    oracle_of,
    read_oracles,
    run_tests,
)

log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class Candidate:
    """A draft with its run on R and what that run says about it."""

    draft: Draft
    outcome: DraftOutcome
    reason: str
    failing_tests: tuple[str, ...] = ()
    relevance: float = 0.0
    excerpt: str = ""
    # The full failure (or the collection log) of the run, for execution feedback only.
    detail: str = ""
    # What its failing tests check (the strongest of them), when their source could be read.
    oracle: Oracle | None = None

    @property
    def strength(self) -> int:
        return STRENGTH[self.oracle.kind] if self.oracle else -1

    @property
    def reproduces(self) -> bool:
        return self.outcome is DraftOutcome.REPRODUCES

    def to_json(self) -> dict[str, Any]:
        return {
            "method": self.draft.method,
            "outcome": self.outcome.value,
            "reason": self.reason,
            "test_files": list(self.draft.test_files),
            "failing_tests": list(self.failing_tests),
            "relevance": round(self.relevance, 3),
            "failure": self.excerpt,
            "oracle": self.oracle.to_json() if self.oracle else None,
            # The drafted test itself, rejected or not, so that every reason can be checked.
            "test_patch": self.draft.patch.diff,
        }


def unrun(draft: Draft, outcome: DraftOutcome, reason: str) -> Candidate:
    return Candidate(draft, outcome, reason)


@dataclass
class SandboxBudget:
    """Sandbox runs one issue may still spend; shared by validation and the LLM agent."""

    runs_left: int
    used: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def take(self) -> bool:
        with self._lock:
            if self.runs_left <= 0:
                return False
            self.runs_left -= 1
            self.used += 1
            return True


@dataclass(frozen=True)
class Validator:
    """Runs drafts on R and judges them; everything it needs is passed in once."""

    client: docker.DockerClient
    env: EnvImage
    snapshot: RepoSnapshot
    reason: IssueReason
    limits: RunLimits
    budget: SandboxBudget
    progress: Progress = SILENT

    def _run(
        self, patches: Sequence[Patch], files: Sequence[str], hash_seed: int = HASH_SEED
    ) -> TestRun:
        run = run_tests(
            self.client,
            self.env,
            self.snapshot,
            patches,
            selection=files,
            limits=self.limits,
            hash_seed=hash_seed,
        )
        counts = Counter(o.value for o in run.outcomes.values())
        told = ", ".join(f"{n} {outcome}" for outcome, n in sorted(counts.items())) or "no tests"
        self.progress.detail(
            f"sandbox run {self.budget.used}: {', '.join(files)}: {told}"
            + (f" ({run.error})" if run.error else "")
            + f" in {elapsed(run.duration_s)}",
            kind="sandbox-run",
            seconds=run.duration_s,
        )
        return run

    def _judge(self, draft: Draft, run: TestRun) -> Candidate:
        judged: JudgedRun = judge_run(run, draft.test_files, self.reason)
        return Candidate(
            draft,
            judged.outcome,
            judged.reason,
            judged.failing_tests,
            judged.relevance,
            judged.excerpt,
            _detail(run, draft.test_files),
            self._oracle(draft, judged.failing_tests),
        )

    def _oracle(self, draft: Draft, failing: Sequence[str]) -> Oracle | None:
        """The strongest oracle among the draft's failing tests."""
        if not failing:
            return None
        oracles = read_oracles(self.snapshot, draft.patch)
        found = [o for t in failing if (o := oracle_of(t, oracles))]
        return max(found, key=lambda o: STRENGTH[o.kind]) if found else None

    def validate(self, drafts: Sequence[Draft]) -> list[Candidate]:
        """One candidate per draft, in the order given."""
        results: dict[int, Candidate] = {}
        batch: list[int] = []
        paths: set[str] = set()
        for index, draft in enumerate(drafts):
            if not draft.patch.well_formed:
                results[index] = unrun(
                    draft, DraftOutcome.NOT_APPLIED, "the test patch is not a well-formed diff"
                )
            elif _only_new_files(draft.patch) and not paths & set(draft.test_files):
                batch.append(index)
                paths.update(draft.test_files)
        if len(batch) > 1 and self.budget.take():
            run = self._run([drafts[i].patch for i in batch], sorted(paths))
            # A run that erred or was stopped (one draft's memory, time or processes) says
            # nothing of the others: each then runs apart, so that no draft hides another.
            usable = run.patches_applied and run.error is None and not run.limits_hit
            if usable:
                for index in batch:
                    results[index] = self._judge(drafts[index], run)
            log.info("drafts.batch_run", drafts=len(batch), usable=usable)
        for index, draft in enumerate(drafts):
            if index in results:
                continue
            results[index] = self.validate_one(draft)
        return [results[i] for i in range(len(drafts))]

    def validate_one(self, draft: Draft, hash_seed: int = HASH_SEED) -> Candidate:
        """``draft`` run alone on R, under ``hash_seed``, and judged."""
        if not draft.patch.well_formed:
            return unrun(
                draft, DraftOutcome.NOT_APPLIED, "the test patch is not a well-formed diff"
            )
        if not self.budget.take():
            return unrun(
                draft, DraftOutcome.ERROR, "not run: the issue's budget of sandbox runs is spent"
            )
        return self._judge(draft, self._run([draft.patch], draft.test_files, hash_seed))

    def passes_with(self, draft: Draft, fix: Patch, tests: Sequence[str]) -> bool | None:
        """Whether every one of ``tests`` passes once ``fix`` is applied with ``draft``; None
        when that could not be run (budget spent, a patch does not apply, the run failed)."""
        if not tests or not self.budget.take():
            return None
        run = self._run([draft.patch, fix], draft.test_files)
        if not run.patches_applied or run.error:
            return None
        return all(run.outcomes.get(t) is not None and run.outcomes[t].is_pass for t in tests)

    def run_draft(self) -> RunDraft:
        """The execution feedback an LLM agent gets: one sandbox run, judged, in words."""

        def run(draft: Draft) -> Feedback:
            candidate = self.validate_one(draft)
            return Feedback(candidate.outcome, feedback_text(candidate), candidate.failing_tests)

        return run


def feedback_text(candidate: Candidate) -> str:
    lines = [f"outcome: {candidate.outcome.value} — {candidate.reason}"]
    if candidate.failing_tests:
        lines.append("tests failing for the issue's reason: " + ", ".join(candidate.failing_tests))
    if candidate.excerpt:
        lines.append("failure: " + candidate.excerpt)
    if candidate.detail:
        lines.append("details:\n" + candidate.detail)
    return "\n".join(lines)


def _detail(run: TestRun, files: Sequence[str], limit: int = 2500) -> str:
    own = [t for t in sorted(run.failures) if t.split("::", 1)[0] in files]
    if own:
        return "\n\n".join(f"{t}:\n{run.failures[t]}" for t in own)[:limit]
    outcomes = ", ".join(
        f"{t}: {o.value}" for t, o in sorted(run.outcomes.items()) if t.split("::", 1)[0] in files
    )
    return (outcomes + "\n" + run.log_excerpt[-limit:]).strip()


def _only_new_files(patch: Patch) -> bool:
    parsed = patch.parsed()
    return parsed is not None and all(pf.is_added_file for pf in parsed)
