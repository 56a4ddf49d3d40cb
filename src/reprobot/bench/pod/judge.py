"""``reprobot bench pod``: Reprobot's verdicts as a filter of candidate fixes.

For each instance, a test plan says which tests judge its candidates: the golden tests (the
instance's FAIL_TO_PASS and PASS_TO_PASS ids) or a predicted test patch (every test of its
modules, as the App would run them). The tests run once on R (the reference run), and once on R
with each candidate; a candidate is called correct when the tests verify it: at least one test
goes from failing to passing and none fails with the candidate. With a predicted test patch,
the project's existing tests of the files the candidates change (``companion_tests``) also run
on R and, for a candidate the predicted tests accept, with it: one that passes on R and fails
with the candidate makes the call "incorrect", as in the App's verdicts.

With the golden tests, an id whose outcome in the sandbox differs from what the dataset records
for the golden fix (it does not fail on R, or does not pass on R∘X*) cannot tell a good fix from a
bad one here, so a third run (R∘X*) calibrates the plan and such ids are left out, with the reason.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

import docker

from reprobot.bench.data.instances import DatasetError, Instance
from reprobot.bench.data.predictions import prediction_files
from reprobot.bench.data.test_ids import (
    IdMapping,
    fails,
    map_test_ids,
    patched_file_list,
    patched_sources,
)
from reprobot.bench.envs.environments import Prepared
from reprobot.bench.envs.set_up_edits import set_up_edits, without_set_up_edits
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.executor import safe_key
from reprobot.bench.run.sandbox_runs import run_summary, write_run_log
from reprobot.validation import (
    GuardOutcomes,
    OracleKind,
    Outcome,
    Patch,
    RunLimits,
    Side,
    TestRun,
    change_concerns,
    companion_test_modules,
    read_oracles,
    rule,
    run_pair,
    run_side,
    transitions,
)


@dataclass(frozen=True)
class CandidateFix:
    """A labelled candidate fix of one instance."""

    instance_id: str
    system: str
    model: str
    patch: str
    resolved: bool
    index: int

    @property
    def key(self) -> str:
        return safe_key(f"{self.instance_id}--{self.system}--{self.index}")

    @property
    def cluster(self) -> str:
        """The bootstrap cluster: the producing system on one issue."""
        return f"{self.system}|{self.instance_id}"


def load_candidates(path: Path) -> list[CandidateFix]:
    """Candidates of a JSON-lines file (``instance_id``, ``system``, ``model_patch``,
    ``resolved``), numbered by their line so that equal patches stay apart."""
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            if not isinstance(record, dict):
                raise DatasetError(f"{path}:{number}: a candidate must be a JSON object")
            resolved = record["resolved"]
            if not isinstance(resolved, bool):
                raise DatasetError(f"{path}:{number}: 'resolved' must be true or false")
            out.append(
                CandidateFix(
                    instance_id=str(record["instance_id"]),
                    system=str(record.get("system") or record.get("model_name_or_path") or "?"),
                    model=str(record.get("model_name_or_path") or ""),
                    patch=str(record.get("model_patch") or ""),
                    resolved=resolved,
                    index=number,
                )
            )
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: not JSON") from exc
        except KeyError as exc:
            raise DatasetError(f"{path}:{number}: a candidate lacks {exc.args[0]!r}") from exc
    return out


@dataclass(frozen=True)
class TestPlan:
    """The tests that judge an instance's candidates."""

    __test__ = False

    tests: Patch
    selection: tuple[str, ...]
    # Instance ids (golden tests) graded through ``mapping``; None: every test the runs report.
    mapping: IdMapping | None = None
    expected: Mapping[str, str] | None = None
    # Existing test modules run as a guard, apart from ``selection`` (predicted tests only).
    guard: tuple[str, ...] = ()

    def outcomes(self, run: TestRun) -> dict[str, str]:
        """The run's outcome of every graded id (instance ids, or node ids)."""
        if self.mapping is None:
            return {k: v.value for k, v in run.outcomes.items() if "::" in k}
        return {t: self.mapping.outcome(t, run.outcomes).value for t in self.mapping.node_ids}

    def guard_outcomes(self, run: TestRun) -> dict[str, str]:
        """The guard run's outcome of every test, and of every module that failed to collect
        (its id without ``::``): a module the candidate leaves uncollectable breaks its tests."""
        return {k: v.value for k, v in run.outcomes.items() if "::" in k or v is Outcome.ERROR}


def gold_plan(instance: Instance, prepared: Prepared) -> TestPlan:
    """The instance's FAIL_TO_PASS and PASS_TO_PASS tests, from its golden test patch."""
    tests = instance.golden_test_patch
    sources = patched_sources(prepared.base, tests, instance.test_files)
    mapping = map_test_ids(
        [*instance.fail_to_pass, *instance.pass_to_pass],
        sources,
        patched_file_list(prepared.base, tests),
    )
    expected = {t: "F->P" for t in instance.fail_to_pass} | {
        t: "P->P" for t in instance.pass_to_pass if t not in instance.fail_to_pass
    }
    return TestPlan(tests, tuple(mapping.selection), mapping, expected)


def predicted_plan(
    patch_text: str, files: Iterable[str] = (), candidate_patches: Sequence[str] = ()
) -> TestPlan:
    """Every test of the modules a predicted test patch touches, guarded by the existing test
    modules (among the tree's ``files``) of every file the instance's candidates change: one
    reference run serves them all, and a test that passes on R and fails with a candidate is
    broken by it, whichever changed file it is named for."""
    tests = Patch(patch_text, name="tests.diff")
    own = set(prediction_files(tests))
    changed: dict[str, None] = {}
    for text in candidate_patches:
        changed.update(dict.fromkeys(Patch(text, name="candidate.diff").files))
    guard = companion_test_modules(changed, [f for f in files if f not in own])
    return TestPlan(tests, tuple(prediction_files(tests)), guard=guard)


def reference(
    client: docker.DockerClient,
    instance: Instance,
    plan: TestPlan,
    prepared: Prepared,
    limits: RunLimits,
    log_dir: Path,
) -> ReferenceResult:
    """The plan's run on R (shared by all candidates), and its calibration against R∘X*."""
    if not plan.selection:
        raise DatasetError(f"{instance.instance_id}: the test patch has no test module to run")
    golden: TestRun | None = None
    if plan.mapping is not None and plan.expected is not None:
        # The same tests before and after the golden fix: the pair every benchmark grades a fix
        # by, one pair at a time (the benchmark's workers are its unit of parallelism).
        pair = run_pair(
            client,
            prepared.env,
            Side(prepared.base, [plan.tests]),
            Side(prepared.base, [instance.golden_patch, plan.tests]),
            plan.selection,
            limits=limits,
            at_once=False,
        )
        before, golden = pair.before, pair.after
    else:
        before = run_side(
            client, prepared.env, Side(prepared.base, [plan.tests]), plan.selection, limits=limits
        )
    write_run_log(log_dir / "R.log", before)
    outcomes = plan.outcomes(before)
    runs = {"R": run_summary(before)}
    oracles = None
    if plan.mapping is None:
        # Node ids: what each test checks, so a call never rests on weak oracles alone.
        oracles = {k: o.kind.value for k, o in read_oracles(prepared.base, plan.tests).items()}
    guard_before = None
    if plan.guard:
        guard = run_side(client, prepared.env, Side(prepared.base), plan.guard, limits=limits)
        write_run_log(log_dir / "R-guard.log", guard)
        runs["R-guard"] = run_summary(guard)
        # A guard that cannot run on R guards nothing; the candidates are judged without it.
        guard_before = {} if guard.error else plan.guard_outcomes(guard)
    dropped: dict[str, str] = {}
    if golden is not None and plan.mapping is not None:
        write_run_log(log_dir / "RX.log", golden)
        runs["RX"] = run_summary(golden)
        dropped = calibrate(plan, outcomes, plan.outcomes(golden))
        dropped.update({t: f"unmappable: {why}" for t, why in plan.mapping.unmappable.items()})
    return ReferenceResult(
        instance_id=instance.instance_id,
        before=outcomes,
        runs=runs,
        dropped=dropped,
        oracles=oracles,
        guard=plan.guard if plan.guard else None,
        guard_before=guard_before,
    )


def calibrate(
    plan: TestPlan, before: Mapping[str, str], golden: Mapping[str, str]
) -> dict[str, str]:
    """Ids whose sandbox outcomes under the golden fix differ from the dataset's, with why."""
    dropped = {}
    for test_id, kind in (plan.expected or {}).items():
        if test_id not in before:
            continue
        r, rx = Outcome(before[test_id]), Outcome(golden.get(test_id, "missing"))
        if kind == "F->P" and not fails(r):
            dropped[test_id] = f"does not fail on R here ({r.value})"
        elif kind == "P->P" and r is not Outcome.PASSED:
            dropped[test_id] = f"does not pass on R here ({r.value})"
        elif rx is not Outcome.PASSED:
            dropped[test_id] = f"does not pass with the golden fix here ({rx.value})"
    return dropped


def evaluate_candidate(
    client: docker.DockerClient,
    candidate: CandidateFix,
    plan: TestPlan,
    prepared: Prepared,
    limits: RunLimits,
    log_dir: Path,
    reference_result: ReferenceResult | None = None,
    set_up: Mapping[str, bytes] | None = None,
) -> CandidateResult:
    """Run the plan's tests on R with the candidate (the candidate first, as the harness does);
    when they accept it, the plan's guard modules too (``reference_result`` holds R's runs).

    The candidate's run is the after side of a pair whose before side is the instance's one
    reference run, shared by all its candidates; so it runs alone (``run_side``), and as the
    side holding the change under judgement: its build code never runs, as in ``verify``.
    ``set_up``: the environment's own edits of the tree (``set_up_edits``, read once per
    instance; None: read here)."""
    fix = Patch(candidate.patch, name="candidate.diff").without_files(plan.tests.files)
    # The environment's own edits of the tree, which the agent's tree held, are not the fix's.
    if set_up is None:
        set_up = set_up_edits(prepared.env.spec.pre_install, prepared.base.read_file)
    fix, left_out = without_set_up_edits(prepared.base, fix, set_up)
    after = Side(prepared.base, [fix, plan.tests], trusted_build=False)
    run = run_side(client, prepared.env, after, plan.selection, limits=limits)
    write_run_log(log_dir / f"{candidate.key}.log", run)
    applied = {p.name: p.applied for p in run.patches}
    result = CandidateResult(
        instance_id=candidate.instance_id,
        system=candidate.system,
        resolved=candidate.resolved,
        candidate_applied=applied.get("candidate.diff", False),
        tests_applied=applied.get("tests.diff", applied.get("test.diff", False)),
        after=plan.outcomes(run) if run.patches_applied else {},
        run=run_summary(run),
        # What the candidate holds that keeps any pass from being verified, as ``verify`` reads
        # it before its tests run.
        review=tuple(change_concerns(prepared.base, fix)),
        set_up=left_out,
    )
    before = reference_result.before if reference_result is not None else {}
    accepted = judge(before, plan.outcomes(run), None, result).correct
    guarded = reference_result is not None and reference_result.guard_before
    if guarded and run.patches_applied and accepted:
        fixed = Side(prepared.base, [fix], trusted_build=False)
        guard = run_side(client, prepared.env, fixed, plan.guard, limits=limits)
        write_run_log(log_dir / f"{candidate.key}-guard.log", guard)
        result = replace(
            result,
            guard_run=run_summary(guard),
            guard_after={} if guard.error else plan.guard_outcomes(guard),
        )
    return result


@dataclass(frozen=True)
class Call:
    """The filter's call on one candidate, and why."""

    correct: bool
    reason: str
    transitions: dict[str, str]
    # Not verified, but the F->P tests show the crash or the wrong value gone: a maintainer
    # opens such a candidate before the others.
    weak: bool = False


def _kind(value: str | None) -> OracleKind | None:
    return OracleKind(value) if value in set(OracleKind) else None


def judge(
    before: Mapping[str, str],
    after: Mapping[str, str],
    graded: Sequence[str] | None,
    result: CandidateResult,
    oracles: Mapping[str, str] | None = None,
    guard_before: Mapping[str, str] | None = None,
) -> Call:
    """Verified (called correct) when at least one graded test goes F->P and none fails after,
    (with ``oracles``, test id to oracle kind) some F->P test checks a result, and (with
    ``guard_before``, the guard's outcomes on R) no guard test that passes on R fails in the
    candidate's guard run (``result.guard_after``)."""
    if not result.candidate_applied:
        return Call(False, "the candidate does not apply", {})
    if not result.tests_applied:
        return Call(False, "the tests do not apply on top of the candidate", {})
    ids = list(graded) if graded is not None else sorted(set(before) | set(after))
    if not ids:
        return Call(False, "no test judges this instance", {})
    graded_transitions = transitions(
        {k: Outcome(v) for k, v in before.items()},
        {k: Outcome(v) for k, v in after.items()},
        ids,
    )
    kinds = {k: t.kind for k, t in graded_transitions.items()}
    known = oracles or {}
    guard = None
    if guard_before is not None:
        guard = GuardOutcomes(
            (),
            {k: Outcome(v) for k, v in guard_before.items()},
            {k: Outcome(v) for k, v in (result.guard_after or {}).items()},
        )
    ruling = rule(
        graded_transitions,
        lambda k: _kind(known.get(k.split("[", 1)[0])),
        guard,
        review=result.review,
    )
    if ruling.status == "verified":
        return Call(True, "verified", kinds)
    if ruling.broken:
        names = ", ".join(list(ruling.broken)[:3])
        return Call(
            False,
            f"{len(ruling.broken)} existing test(s) that pass on R fail with it: {names}",
            {**kinds, **{k: t.kind for k, t in ruling.broken.items()}},
        )
    if ruling.status == "needs_review":
        return Call(False, f"needs review: {ruling.review[0]}", kinds)
    if ruling.status == "weak":
        return Call(
            False,
            f"the tests that go F->P only check that {ruling.short_of_a_result}",
            kinds,
            weak=True,
        )
    failing = sorted(k for k, t in graded_transitions.items() if t.fails_after)
    if failing:
        return Call(False, f"{len(failing)} test(s) fail with it: {', '.join(failing[:3])}", kinds)
    return Call(False, "no test goes from failing to passing", kinds)


def graded_ids(reference_result: ReferenceResult, plan_is_gold: bool) -> list[str] | None:
    """The ids that judge the instance: the calibrated golden ids, or None (every test)."""
    if not plan_is_gold:
        return None
    dropped = reference_result.dropped
    return sorted(t for t in reference_result.before if t not in dropped)
