"""``verify``: run a test patch on a base and on the fixed tree, and grade the two runs
(the rules themselves: ``results.ruling``)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import docker

from reprobot.progress import SILENT, Progress
from reprobot.validation.concerns import (
    change_concerns,
    holds_the_tests,
    integrity_concerns,
    too_large,
    unguarded_reason,
)
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.errors import SnapshotError
from reprobot.validation.results.oracles import (
    Oracle,
    OracleKind,
    module_oracles,
    oracle_of,
    unchecked_result,
)
from reprobot.validation.results.ruling import Executed, GuardOutcomes, Ruling, Status, rule
from reprobot.validation.results.testrun import TestRun
from reprobot.validation.results.verdict import (
    ChangeCoverage,
    Transition,
    change_coverage,
    changed_lines,
    is_success,
    transitions,
)
from reprobot.validation.runs.pair import Side, run_pair
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.companion_tests import companion_test_modules, unguarded_sources
from reprobot.validation.source.harness_files import harness_changes
from reprobot.validation.source.patch import Patch, diff_between, patched_sources, test_modules
from reprobot.validation.source.process_hooks import process_hooks
from reprobot.validation.source.snapshot import RepoSnapshot


@dataclass(frozen=True)
class Verdict:
    """What the tests say about a fix."""

    status: Status
    success: bool
    transitions: Mapping[str, Transition]
    change_coverage: ChangeCoverage
    before: TestRun
    after: TestRun
    base_sha: str
    head_sha: str | None
    fix: Patch
    reasons: tuple[str, ...] = ()
    # Files the fix changes that run code, or set options, inside the test process before the
    # tests run (conftest.py, pytest's configuration, plugins, sitecustomize, .pth files).
    harness_changes: tuple[str, ...] = ()
    # Why a pass of the tests is not enough on its own (the change edits the reproducing tests'
    # files, adds a module they would import instead of the project's, removes existing tests):
    # what makes a success "needs_review".
    review: tuple[str, ...] = ()
    # Where the fix adds code that can switch off the tracer change coverage relies on.
    tracing: tuple[str, ...] = ()
    # What each graded test checks, when its source could be read.
    oracles: Mapping[str, Oracle] = field(default_factory=dict)
    # The project's existing test modules for the files the fix changes, run before and after it;
    # those that broke are among ``transitions`` (P->F, P->E).
    guard_modules: tuple[str, ...] = ()
    # False when the change was too large to read line by line: no change coverage was measured.
    measured: bool = True

    def oracle(self, test_id: str) -> Oracle | None:
        return oracle_of(test_id, self.oracles)

    def short_of_a_result(self) -> str | None:
        """What its fail-to-pass tests check instead of a result, when none checks one
        ("the reported error no longer occurs")."""
        fixed = [self.oracle(t) for t, tr in self.transitions.items() if tr.fail_to_pass]
        return unchecked_result([o.kind if o is not None else None for o in fixed])

    def counts(self) -> dict[str, int]:
        out: dict[str, int] = {}
        for t in self.transitions.values():
            out[t.kind] = out.get(t.kind, 0) + 1
        return dict(sorted(out.items()))

    def to_json(self) -> dict[str, Any]:
        """The command-line contract: success, transitions (id -> "F->P" ...), change_coverage."""
        return {
            "status": self.status,
            "success": self.success,
            "transitions": {k: t.kind for k, t in sorted(self.transitions.items())},
            "change_coverage": self.change_coverage.ratio,
            "coverage": self.change_coverage.to_json(),
            "counts": self.counts(),
            "reasons": list(self.reasons),
            "harness_changes": list(self.harness_changes),
            "review": list(self.review),
            "tracing": list(self.tracing),
            "guard_modules": list(self.guard_modules),
            "oracles": {
                k: o.to_json()
                for k in sorted(self.transitions)
                if (o := self.oracle(k)) is not None
            },
            "base": self.base_sha,
            "head": self.head_sha,
            "before": _run_json(self.before),
            "after": _run_json(self.after),
        }


def _run_json(run: TestRun) -> dict[str, Any]:
    data = run.to_json()
    data.pop("coverage", None)
    return data


def _problems(run: TestRun, side: str) -> list[str]:
    problems = []
    for patch in run.patches:
        if not patch.applied:
            problems.append(f"{patch.name} does not apply {side}")
    if run.error:
        problems.append(f"{side}: {run.error}")
    if run.limits_hit:
        problems.append(f"{side}: limits hit ({', '.join(sorted(run.limits_hit))})")
    return problems


@dataclass(frozen=True)
class GuardRuns:
    """The project's existing tests of the changed files (``modules``), run without the
    reproducing tests before and after the fix."""

    modules: tuple[str, ...]
    before: TestRun
    after: TestRun


def grade(
    before: TestRun,
    after: TestRun,
    fix: Patch,
    old_sources: Mapping[str, bytes | None],
    new_sources: Mapping[str, bytes | None],
    base_sha: str,
    head_sha: str | None,
    test_ids: Sequence[str] | None = None,
    harness: Sequence[str] = (),
    oracles: Mapping[str, Oracle] | None = None,
    guard: GuardRuns | None = None,
    review: Sequence[str] = (),
    measure: bool = True,
) -> Verdict:
    """Turn the two runs into a verdict (pure: no Docker, no git). With ``oracles`` (test id to
    what it checks), a success whose fail-to-pass tests check no result is "weak"; with
    ``guard``, an existing test that passes before the fix and fails with it makes a success
    "not_verified", whatever the reproducing tests say; a success of a fix that changes
    ``harness`` files (how the tests run), removes a guard test that passed, or has another
    ``review`` reason "needs_review", never "verified"."""
    graded = transitions(before.outcomes, after.outcomes, test_ids)
    # A module that failed to collect on one side only shows up as its file id; keep test ids.
    if test_ids is None:
        graded = {k: v for k, v in graded.items() if "::" in k} or graded
    coverage = (
        change_coverage(
            changed_lines(fix), old_sources, new_sources, before.coverage, after.coverage
        )
        if measure
        else ChangeCoverage(files=())
    )
    reasons = _problems(before, "before the fix") + _problems(after, "after the fix")
    if not before.patches_applied or not after.patches_applied or before.error or after.error:
        ruling = Ruling("inconclusive", graded)
    else:
        known = oracles or {}

        def kind_of(test_id: str) -> OracleKind | None:
            oracle = oracle_of(test_id, known)
            return oracle.kind if oracle is not None else None

        executed = _executed(coverage, before, after)
        if measure and (before.coverage is None) != (after.coverage is None):
            # Both runs asked for it and one side came back without it: the process exited
            # before coverage.py saved (an exec, ``os._exit``), which is what a change that does
            # not want its lines seen would do.
            side = "with" if after.coverage is None else "without"
            review = [
                *review,
                f"the test run {side} the change did not save what it ran (its coverage is "
                "missing while the other run's is not), so which of the change's lines ran is "
                "unknown",
            ]
        ruling = rule(graded, kind_of, _guard_outcomes(guard), harness, review, executed)
    graded, status = dict(ruling.transitions), ruling.status
    reasons += ruling.reasons
    concerns = ruling.review
    success = is_success(graded)
    return Verdict(
        status=status,
        success=success and status == "verified",
        transitions=graded,
        change_coverage=coverage,
        before=before,
        after=after,
        base_sha=base_sha,
        head_sha=head_sha,
        fix=fix,
        reasons=tuple(reasons),
        harness_changes=tuple(harness),
        review=concerns,
        oracles=dict(oracles or {}),
        guard_modules=guard.modules if guard is not None else (),
        measured=measure,
    )


def _executed(coverage: ChangeCoverage, before: TestRun, after: TestRun) -> Executed | None:
    """The change's executable lines in files the runs measured, and how many ran: added lines
    count where the run after the fix recorded their file, removed ones where the run before
    did (a file no run recorded may have been measured under another name)."""
    if before.coverage is None or after.coverage is None:
        return None
    executable = covered = 0
    for change in coverage.files:
        if change.path in after.coverage:
            executable += len(change.executable_added)
            covered += len(change.covered_added)
        if change.path in before.coverage:
            executable += len(change.executable_removed)
            covered += len(change.covered_removed)
    return Executed(executable, covered)


def _guard_outcomes(guard: GuardRuns | None) -> GuardOutcomes | None:
    if guard is None:
        return None
    trouble = _problems(guard.before, "before the fix") + _problems(guard.after, "after it")
    if not trouble and not guard.after.patches_applied:
        trouble = ["the fix does not apply"]
    return GuardOutcomes(
        guard.modules, guard.before.outcomes, guard.after.outcomes, trouble[0] if trouble else None
    )


def verify(
    client: docker.DockerClient,
    env: EnvImage,
    base: RepoSnapshot,
    tests: Patch,
    fix: Patch | None = None,
    head: RepoSnapshot | None = None,
    test_ids: Sequence[str] | None = None,
    limits: RunLimits | None = None,
    progress: Progress = SILENT,
    guard: bool = True,
    at_once: bool = True,
) -> Verdict:
    """Run ``tests`` on ``base`` (R) and on the fixed tree (R with ``fix``, or ``head``), with
    coverage, and grade the transitions of ``test_ids`` (default: every test the patch's test
    modules hold); ``progress`` hears of each sandbox run.

    With ``guard``, a fix the reproducing tests accept also has the project's existing tests of
    the files it changes run before and after it (``companion_tests``): a fix that makes the
    reported failure go away by breaking what those tests check is not verified. With
    ``at_once``, the two runs of each pair run side by side (``sandbox.pair``)."""
    if (fix is None) == (head is None):
        raise ValueError("verify needs exactly one of fix and head")
    selection = list(test_ids) if test_ids else test_modules(tests)
    if head is not None:
        fix = diff_between(base, head)
    assert fix is not None
    whole = fix
    # A diff too large to read line by line is run, and needs review whatever its tests say;
    # nothing of it is parsed (``concerns.too_large``).
    large = too_large(whole)
    committed = not large and holds_the_tests(base, tests, fix, head)
    if committed:
        # The change commits the drafted tests as drafted: they run as it holds them, and only
        # the rest of it is the fix whose lines are measured.
        fix = fix.without_files(tests.files)
    # Change coverage reads the fix's files only, so only they are measured.
    measured = () if large else fix.python_paths
    # The tests go last on the fixed side, as over a pull request's head: a fix cannot rewrite
    # them.
    applied = [] if committed else [tests]
    fixed_side = (
        Side(head, applied, trusted_build=False)
        if head is not None
        else Side(base, [whole, *applied], trusted_build=False)
    )
    main = run_pair(
        client,
        env,
        Side(base, [tests]),
        fixed_side,
        selection,
        coverage=not large,
        coverage_files=measured,
        limits=limits,
        at_once=at_once,
    )
    before, after = main.before, main.after
    _told(progress, "before the fix", before)
    _told(progress, "after the fix", after)
    changes = {} if large else changed_lines(fix)
    old_paths = [c.old_path for c in changes.values() if c.old_path]
    old_sources = {p: base.read_file(p) for p in old_paths}
    if head is not None:
        new_sources = {p: head.read_file(p) for p in changes}
        new_file: Callable[[str], bytes | None] = head.read_file
    else:
        new_sources = _patched_or_empty(base, fix, list(changes))
        fixed = fix

        def new_file(path: str) -> bytes | None:
            return _patched_or_empty(base, fixed, [path]).get(path)

    harness = (
        ()
        if large
        else harness_changes(
            whole.files, lambda p: _text(base.read_file(p)), lambda p: _text(new_file(p))
        )
    )
    args = (before, after, fix, old_sources, new_sources, base.sha, head.sha if head else None)
    oracles = read_oracles(base, tests)
    hooks = () if large else process_hooks(whole, new_file)
    review = [] if large else integrity_concerns(base, tests, fix, after, not committed)
    review += change_concerns(base, whole, head, skip=harness, hooks=hooks)
    verdict = grade(*args, test_ids, harness, oracles, review=review, measure=not large)
    own = set(test_modules(tests))
    files = [f for f in base.list_files() if f not in own]
    modules = () if large else companion_test_modules(fix.files, files)
    if guard and modules and verdict.status in ("verified", "weak", "needs_review"):
        guard_side = (
            Side(head, trusted_build=False)
            if head is not None
            else Side(base, [whole], trusted_build=False)
        )
        pair = run_pair(
            client, env, Side(base), guard_side, modules, limits=limits, at_once=at_once
        )
        guard_before, guard_after = pair.before, pair.after
        _told(progress, "of the existing tests before the fix", guard_before)
        _told(progress, "of the existing tests after the fix", guard_after)
        guard_runs = GuardRuns(modules, guard_before, guard_after)
        verdict = grade(*args, test_ids, harness, oracles, guard_runs, review, measure=not large)
    tracing = tuple(h.describe() for h in hooks if h.kind == "tracing")
    # Only files that existed: a new module did nothing before that its tests could keep.
    existing = set(files)
    changed = [p for p in fix.python_paths if p in existing]
    unguarded = () if large else unguarded_sources(changed, files)
    if unguarded and verdict.status in ("verified", "weak", "needs_review"):
        verdict = replace(verdict, reasons=(*verdict.reasons, unguarded_reason(unguarded)))
    return replace(verdict, tracing=tracing)


def read_oracles(base: RepoSnapshot, tests: Patch) -> dict[str, Oracle]:
    """What each test of ``tests``' modules checks, read from the modules as patched."""
    paths = test_modules(tests)
    try:
        sources = patched_sources(base, [tests], paths)
    except SnapshotError:
        return {}
    out: dict[str, Oracle] = {}
    for path, data in sources.items():
        if data is not None:
            out.update(module_oracles(path, data.decode("utf-8", "replace")))
    return out


def _told(progress: Progress, side: str, run: TestRun) -> None:
    progress.detail(
        f"sandbox run {side}: {len(run.outcomes)} test(s) in {run.duration_s:.1f} s",
        kind="sandbox-run",
        seconds=run.duration_s,
    )


def _text(data: bytes | None) -> str | None:
    return None if data is None else data.decode("utf-8", "replace")


def _patched_or_empty(base: RepoSnapshot, fix: Patch, paths: list[str]) -> dict[str, bytes | None]:
    try:
        return patched_sources(base, [fix], paths)
    except SnapshotError:
        # The fix applied in the sandbox only with fuzz; without exact content, the added lines
        # cannot be located, so they count as not executable rather than guessed.
        return {}
