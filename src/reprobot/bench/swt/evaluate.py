"""``reprobot bench swt``: the SWT-Bench evaluation of test-patch predictions.

Per instance (see ``metrics`` for the definitions): the prediction's tests, the golden tests
and the existing tests of the prediction's files, each on R and on R∘X*, with coverage and
per-test contexts. The golden prediction is its own golden run, so it needs four runs, not six.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path

import docker

from reprobot.bench.data.instances import Instance
from reprobot.bench.data.predictions import Prediction, prediction_files
from reprobot.bench.envs.environments import Prepared
from reprobot.bench.run.sandbox_runs import run_summary, write_run_log
from reprobot.bench.swt.metrics import (
    NOTHING,
    CoverageDelta,
    added,
    changed_tests,
    coverage_delta,
    flags,
)
from reprobot.bench.swt.results import InstanceResult
from reprobot.validation import (
    OutcomeReading,
    Patch,
    RunLimits,
    RunPair,
    Side,
    SnapshotError,
    TestRun,
    applies_to,
    categorise,
    patched_sources,
    run_pair,
    test_modules,
)

_EMPTY = TestRun(outcomes={}, patches_applied=True)


def evaluate_instance(
    client: docker.DockerClient,
    instance: Instance,
    prediction: Prediction,
    prepared: Prepared,
    limits: RunLimits,
    log_dir: Path,
) -> InstanceResult:
    """Run and grade one prediction; the result is what ``results.score`` reads back."""
    base, env = prepared.base, prepared.env
    fix = instance.golden_patch
    pred = Patch(prediction.patch, name="prediction.diff")
    gold = instance.golden_test_patch

    def pair(name: str, tests: Sequence[Patch], selection: Sequence[str]) -> RunPair:
        if not selection:
            # No test file to run: an empty selection would run the whole suite instead.
            return RunPair(_EMPTY, _EMPTY)
        # One pair at a time: the benchmark's workers are its unit of parallelism.
        runs = run_pair(
            client,
            env,
            Side(base, [*tests]),
            Side(base, [*tests, fix]),
            selection,
            coverage=True,
            contexts=True,
            coverage_files=fix.python_paths,
            limits=limits,
            at_once=False,
        )
        write_run_log(log_dir / f"{name}_pre.log", runs.before)
        write_run_log(log_dir / f"{name}_post.log", runs.after)
        return runs

    applied = bool(pred.diff.strip()) and applies_to([pred], base)
    gold_runs = pair("gold", [gold], test_modules(gold))
    existing = set(base.list_files())
    files = prediction_files(pred) if applied else []
    base_runs = pair("base", [], [f for f in files if f in existing])
    if prediction.patch == instance.test_patch:
        pred_runs = gold_runs
    elif applied:
        pred_runs = pair("pred", [pred], files)
    else:
        pred_runs = RunPair(_EMPTY, _EMPTY)

    delta = _delta(instance, prepared, pred_runs, gold_runs, base_runs, _edited(prepared, pred))
    report = categorise(pred_runs.before.outcomes, pred_runs.after.outcomes, OutcomeReading.HARNESS)
    base_report = categorise(
        base_runs.before.outcomes, base_runs.after.outcomes, OutcomeReading.HARNESS
    )
    graded = flags(applied and _ran(pred_runs), report, base_report)
    extra = added(report, base_report)
    return InstanceResult(
        instance_id=instance.instance_id,
        model=prediction.model,
        applied=applied,
        flags=graded,
        delta=delta,
        added={kind: tuple(sorted(ids)) for kind, ids in extra.items()},
        base={kind: tuple(sorted(ids)) for kind, ids in base_report.items()},
        runs={
            f"{name}_{side}": run_summary(run)
            for name, p in (("pred", pred_runs), ("gold", gold_runs), ("base", base_runs))
            for side, run in (("pre", p.before), ("post", p.after))
            if run is not _EMPTY
        },
        problems=tuple(_problems(pred_runs, gold_runs) + _absent(prepared)),
        environment=env.tag,
    )


SKIPPED = "empty prediction, not run (--skip-empty)"


def not_run(instance: Instance, prediction: Prediction) -> InstanceResult:
    """The result of an empty prediction that is not run: nothing applies, nothing is measured.

    Its ΔC has no executable line, because which changed lines count as executable comes from
    the golden and existing tests' runs; the report says how many instances this leaves out."""
    return InstanceResult(
        instance_id=instance.instance_id,
        model=prediction.model,
        applied=False,
        flags=NOTHING,
        delta=CoverageDelta(0, 0),
        added={},
        base={},
        runs={},
        problems=(SKIPPED,),
        skipped=True,
    )


def _absent(prepared: Prepared) -> list[str]:
    if not prepared.absent:
        return []
    shown = ", ".join(prepared.absent[:3]) + (", …" if len(prepared.absent) > 3 else "")
    return [f"{len(prepared.absent)} file(s) absent from the clone, left out of the tree: {shown}"]


def _ran(runs: RunPair) -> bool:
    """Whether the prediction's runs completed (applied, installed, not cut off)."""
    return all(r.patches_applied and not r.error for r in (runs.before, runs.after))


def _problems(pred: RunPair, gold: RunPair) -> list[str]:
    problems = []
    for name, runs in (("prediction", pred), ("golden tests", gold)):
        for side, run in (("on R", runs.before), ("on R∘X*", runs.after)):
            if run.error:
                problems.append(f"{name} {side}: {run.error}")
            if run.limits_hit:
                problems.append(f"{name} {side}: limits hit ({', '.join(sorted(run.limits_hit))})")
            failed = [p.name for p in run.patches if not p.applied]
            if failed:
                problems.append(f"{name} {side}: {', '.join(failed)} did not apply")
    return problems


def _edited(prepared: Prepared, pred: Patch) -> dict[str, frozenset[str]]:
    """The test functions a prediction adds or edits, per test module it touches."""
    files = prediction_files(pred)
    try:
        new = patched_sources(prepared.base, [pred], files)
    except SnapshotError:
        return {}
    out = {}
    for path in files:
        old, after = prepared.base.read_file(path), new.get(path)
        out[path] = changed_tests(
            old.decode("utf-8", "replace") if old is not None else None,
            after.decode("utf-8", "replace") if after is not None else None,
        )
    return out


def _delta(
    instance: Instance,
    prepared: Prepared,
    pred: RunPair,
    gold: RunPair,
    base: RunPair,
    edited: Mapping[str, frozenset[str]],
) -> CoverageDelta:
    fix = instance.golden_patch
    paths = [f for f in fix.files if f.endswith(".py")]
    old_sources = {p: prepared.base.read_file(p) for p in paths}
    try:
        new_sources: dict[str, bytes | None] = dict(patched_sources(prepared.base, [fix], paths))
    except SnapshotError:
        new_sources = {}
    return coverage_delta(
        fix, old_sources, new_sources, pred.coverage, gold.coverage, base.coverage, edited
    )
