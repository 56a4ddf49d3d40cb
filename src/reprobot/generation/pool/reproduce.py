"""``reproduce``: from an issue to a validated reproducing test patch, or a clear "not reproduced".

Drafting (the no-LLM drafter, plus the LLM methods when an endpoint is configured) feeds one
pool; every draft runs on R in the sandbox; the best one failing for the issue's reason is run
once more on its own, and only a draft that fails for that reason both times leaves.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any

import docker
import structlog

from reprobot.generation.drafter.draft import draft_from_issue, tree_context
from reprobot.generation.drafter.test_style import TestStyle, style_for
from reprobot.generation.drafter.tidy import StarNames, star_names_in, tidy
from reprobot.generation.drafts import Draft, DraftOutcome, RunDraft
from reprobot.generation.formats.patch_text import patch_from_files
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.pool.candidates import Candidate, SandboxBudget, Validator
from reprobot.generation.pool.confidence import Confidence, score
from reprobot.generation.pool.failure_match import issue_reason
from reprobot.generation.pool.selection import rank
from reprobot.generation.repo.linter import Linter, project_linter
from reprobot.progress import SILENT, Progress
from reprobot.settings import Settings
from reprobot.validation import (
    HASH_SEED,
    SECOND_HASH_SEED,
    EnvImage,
    Patch,
    RepoSnapshot,
    RunLimits,
    SnapshotError,
    patched_sources,
)

log = structlog.get_logger(__name__)

# LLM methods are passed in (``reprobot.generation.llm.methods.llm_drafts`` bound to a client),
# so that this module runs, and is tested, without any endpoint.
LLMDrafter = Callable[
    [IssueReport, RepoSnapshot, RunDraft, TestStyle], tuple[list[Draft], list[tuple[str, str]]]
]


@dataclass(frozen=True)
class Reproduction:
    """The outcome of drafting for one issue on one commit."""

    repo: str
    base_sha: str
    chosen: Candidate | None
    candidates: tuple[Candidate, ...]
    rejected: tuple[tuple[str, str], ...] = ()  # (method, why it produced no draft)
    sandbox_runs: int = 0
    duration_s: float = 0.0
    methods: tuple[str, ...] = field(default_factory=tuple)
    # Drafted knowing a fix: the chosen test also passed with it (fail to pass).
    patch_aware: bool = False

    @property
    def confidence(self) -> Confidence:
        """How well the chosen test is backed (score 0 when nothing reproduced)."""
        if self.chosen is None:
            return Confidence(0)
        chosen = self.chosen
        return score(
            chosen.reason,
            chosen.oracle.kind.value if chosen.oracle else None,
            chosen.draft.method,
            [c.draft.method for c in self.candidates if c.reproduces],
        )

    @property
    def reproduced(self) -> bool:
        return self.chosen is not None

    @property
    def test_patch(self) -> str:
        return self.chosen.draft.patch.diff if self.chosen else ""

    @property
    def failing_tests(self) -> tuple[str, ...]:
        return self.chosen.failing_tests if self.chosen else ()

    @property
    def failure_excerpt(self) -> str:
        return self.chosen.excerpt if self.chosen else ""

    def to_json(self) -> dict[str, Any]:
        """The command-line contract of ``reprobot reproduce --json``."""
        return {
            "reproduced": self.reproduced,
            "repo": self.repo,
            "base_sha": self.base_sha,
            "test_patch": self.test_patch,
            "failing_tests": list(self.failing_tests),
            "failure": self.failure_excerpt,
            "method": self.chosen.draft.method if self.chosen else None,
            "confidence": self.confidence.to_json(),
            "candidates": [c.to_json() for c in self.candidates]
            + [
                {"method": method, "outcome": "no-draft", "reason": reason}
                for method, reason in self.rejected
            ],
            "methods": list(self.methods),
            "patch_aware": self.patch_aware,
            "sandbox_runs": self.sandbox_runs,
            "duration_s": round(self.duration_s, 2),
        }


def drafting_limits(settings: Settings) -> RunLimits:
    """The limits of a drafting run: the run limits, with the shorter drafting deadline."""
    limits = RunLimits.from_settings(settings)
    return replace(limits, timeout_s=min(limits.timeout_s, settings.draft_run_timeout_s))


def reproduce(
    issue: IssueReport,
    snapshot: RepoSnapshot,
    environment: EnvImage,
    settings: Settings,
    *,
    client: docker.DockerClient,
    llm_drafter: LLMDrafter | None = None,
    progress: Progress = SILENT,
    fix: Patch | None = None,
) -> Reproduction:
    """Draft, validate and select reproducing tests for ``issue`` on ``snapshot`` (R);
    ``progress`` hears of each sandbox run.

    With ``fix`` (patch-aware, as at pull request time) the chosen test must also pass once
    the fix is applied: of the candidates failing on R for the issue's reason, the strongest
    that goes from fail to pass. Its assertions still come from the issue alone, never from
    what the fixed code does."""
    what = f"drafting tests for the issue and running them on {snapshot.sha[:12]}"
    with progress.step(what, kind="drafting"):
        return _reproduce(
            issue, snapshot, environment, settings, client, llm_drafter, progress, fix
        )


def _reproduce(
    issue: IssueReport,
    snapshot: RepoSnapshot,
    environment: EnvImage,
    settings: Settings,
    client: docker.DockerClient,
    llm_drafter: LLMDrafter | None,
    progress: Progress,
    fix: Patch | None = None,
) -> Reproduction:
    started = time.monotonic()
    # Drafted as the project's runner collects tests: a pytest function, or a TestCase method,
    # next to the test modules that runner finds.
    style = style_for(environment.spec.test_cmd)
    tree = tree_context(issue, snapshot, style)
    drafted = draft_from_issue(issue, snapshot, tree, style, knowing_fix=fix is not None)
    reason = issue_reason(issue, drafted.wrong_values)
    budget = SandboxBudget(max(1, settings.draft_max_runs - 1))
    validator = Validator(
        client, environment, snapshot, reason, drafting_limits(settings), budget, progress
    )
    drafts = list(drafted.drafts)
    rejected = list(drafted.skipped)
    methods = ["issue"]
    candidates = validator.validate(drafts)
    if llm_drafter is not None:
        methods.append("llm")
        # The agent's own runs are judged as they happen; its drafts are validated again
        # together with the zero-shot samples, so every candidate is judged the same way.
        llm_drafts, llm_rejected = llm_drafter(issue, snapshot, validator.run_draft(), style)
        rejected.extend(llm_rejected)
        candidates.extend(validator.validate(_distinct(llm_drafts, drafts)))
    # One run stays free for the confirmation of the chosen candidate (two with a fix).
    budget.runs_left += 1 if fix is None else 2
    linter = project_linter(snapshot)
    star_names = star_names_in(tree)
    chosen, tried = _confirm(
        rank(candidates), validator, fix, lambda d: _tidied(d, snapshot, linter, star_names)
    )
    candidates = [tried.get(id(c), c) for c in candidates]
    log.info(
        "reproduce.done",
        repo=snapshot.repo,
        sha=snapshot.sha,
        reproduced=chosen is not None,
        candidates=len(candidates),
        sandbox_runs=budget.used,
    )
    return Reproduction(
        repo=snapshot.repo,
        base_sha=snapshot.sha,
        chosen=chosen,
        candidates=tuple(candidates),
        rejected=tuple(rejected),
        sandbox_runs=budget.used,
        duration_s=time.monotonic() - started,
        methods=tuple(methods),
        patch_aware=fix is not None,
    )


def _distinct(new: list[Draft], old: list[Draft]) -> list[Draft]:
    seen = {d.patch.diff for d in old}
    out = []
    for draft in new:
        if draft.patch.diff not in seen:
            seen.add(draft.patch.diff)
            out.append(draft)
    return out


def _alone(draft: Draft, validator: Validator) -> tuple[Draft, Callable[[str], str]]:
    """``draft`` moved to the module name it takes alone, and how its test ids change; as it
    was when it has no such name or the move cannot be made."""
    (current,) = draft.test_files if len(draft.test_files) == 1 else ("",)
    target = draft.alone_path
    if not current or not target or target == current:
        return draft, lambda test_id: test_id
    try:
        text = patched_sources(validator.snapshot, [draft.patch], [current]).get(current)
    except SnapshotError:
        text = None
    if text is None:
        return draft, lambda test_id: test_id
    patch = patch_from_files({target: (None, text.decode("utf-8"))}, name=draft.patch.name)

    def renamed(test_id: str) -> str:
        return target + test_id[len(current) :] if test_id.startswith(current) else test_id

    return replace(draft, patch=patch), renamed


def _tidied(
    draft: Draft, snapshot: RepoSnapshot, linter: Linter | None, star_names: StarNames
) -> Draft:
    """``draft`` tidied within the project's linter settings (``drafter.tidy``), when it adds
    one new test module and the project has a linter; as it is otherwise."""
    if linter is None or len(draft.test_files) != 1:
        return draft
    (path,) = draft.test_files
    if snapshot.read_file(path) is not None:
        return draft
    try:
        text = patched_sources(snapshot, [draft.patch], [path]).get(path)
    except SnapshotError:
        return draft
    if text is None:
        return draft
    source = text.decode("utf-8", "replace")
    neat = tidy(source, path, linter, star_names)
    if neat == source:
        return draft
    return replace(draft, patch=patch_from_files({path: (None, neat)}, name=draft.patch.name))


def _confirm(
    ranked: list[Candidate],
    validator: Validator,
    fix: Patch | None = None,
    tidier: Callable[[Draft], Draft] = lambda draft: draft,
) -> tuple[Candidate | None, dict[int, Candidate]]:
    """The first ranked candidate that reproduces again when run alone (a flaky or
    order-dependent failure does not leave drafting) and, with ``fix``, passes with it; and, by
    the id of the candidate they replace, how every candidate tried came out run alone (the
    chosen one as it will be kept: under its own module name, and ``tidier``'s text when that
    reproduces as well)."""
    tried: dict[int, Candidate] = {}
    # Knowing the fix, more candidates are worth a try: the budget still bounds the runs.
    for candidate in ranked[: 3 if fix is None else 6]:
        draft, renamed = _alone(candidate.draft, validator)
        wanted = {renamed(t) for t in candidate.failing_tests[:1]}
        neat = tidier(draft)
        # Alone, and under another hash seed than the first run's: a failure the seed's draw
        # decides (the order of a set) is not the bug's, and must not leave drafting.
        again = validator.validate_one(neat, SECOND_HASH_SEED)
        if neat is not draft and not (again.reproduces and set(again.failing_tests) >= wanted):
            # Tidied, it must reproduce as the draft did; else the draft stays as written.
            log.info("reproduce.untidied", method=candidate.draft.method, reason=again.reason)
            again = validator.validate_one(draft, SECOND_HASH_SEED)
        else:
            draft = neat
        if again.reproduces and set(again.failing_tests) >= wanted:
            if fix is None or validator.passes_with(draft, fix, again.failing_tests):
                tried[id(candidate)] = again
                return again, tried
            log.info("reproduce.not_fixed", method=candidate.draft.method)
            tried[id(candidate)] = replace(
                again,
                outcome=DraftOutcome.UNRELATED,
                reason="fails on R for the issue's reason, but still fails with the fix",
            )
            continue
        log.info("reproduce.unconfirmed", method=candidate.draft.method, reason=again.reason)
        tried[id(candidate)] = replace(
            again,
            outcome=DraftOutcome.UNRELATED
            if again.outcome is DraftOutcome.REPRODUCES
            else again.outcome,
            reason=_unconfirmed(draft, again, wanted, validator),
        )
    return None, tried


def _unconfirmed(draft: Draft, again: Candidate, wanted: set[str], validator: Validator) -> str:
    """Why a candidate that reproduced did not when run alone under the second seed: run alone
    under the first seed once more (when the budget allows), a reproduction there makes the
    seed the cause, and the report says so."""
    first = validator.validate_one(draft, HASH_SEED)
    if first.reproduces and set(first.failing_tests) >= wanted:
        return (
            f"the failure depends on the hash seed: it fails under PYTHONHASHSEED={HASH_SEED} "
            f"and not under PYTHONHASHSEED={SECOND_HASH_SEED} ({again.reason})"
        )
    return f"reproduced once but not when run alone: {again.reason}"
