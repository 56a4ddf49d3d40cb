"""``reprobot bench pod``: Reprobot's verdicts as a filter of labelled candidate fixes."""

from __future__ import annotations

import argparse
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.data.predictions import GOLD, load_predictions
from reprobot.bench.envs.environments import Prepared
from reprobot.bench.envs.set_up_edits import set_up_edits
from reprobot.bench.envs.spec_table import default_overlay
from reprobot.bench.pod import report as pod_report
from reprobot.bench.pod.judge import (
    TestPlan,
    evaluate_candidate,
    gold_plan,
    load_candidates,
    predicted_plan,
    reference,
)
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.run.command_context import (
    EVALUATION_VERSION,
    Context,
    resolve_instances,
    selected_instances,
)
from reprobot.bench.run.executor import Done, Failed, Unit, peak_rss_mb, run_units
from reprobot.bench.run.provenance import code_sha256, fingerprint, provenance, text_sha256
from reprobot.bench.run.report import write_report
from reprobot.settings import Settings


def run_pod(args: argparse.Namespace, settings: Settings) -> int:
    started = time.monotonic()
    resolve_instances(args, settings)
    ctx = Context(args, settings)
    instances = {i.instance_id: i for i in selected_instances(args)}
    candidates = [c for c in load_candidates(args.patches) if c.instance_id in instances]
    if not candidates:
        raise DatasetError(f"no candidate in {args.patches} belongs to the selected instances")
    tests_path = None if args.tests == GOLD else Path(args.tests)
    predicted = load_predictions(tests_path) if tests_path else {}
    wanted = sorted({c.instance_id for c in candidates})
    # With predicted tests, an instance for which nothing was drafted has nothing to judge its
    # candidates with: it is counted and reported as not judged, never run as an error.
    not_judged = {
        i: "no drafted test" if i in predicted else f"no prediction in {tests_path}"
        for i in wanted
        if tests_path is not None and not (i in predicted and predicted[i].patch.strip())
    }
    wanted = [i for i in wanted if i not in not_judged]
    candidates = [c for c in candidates if c.instance_id not in not_judged]
    plans: dict[str, TestPlan] = {}
    prepared: dict[str, Prepared] = {}
    # The environment's own edits of each instance's tree, read once for all its candidates.
    edits: dict[str, dict[str, bytes]] = {}

    lock = threading.Lock()

    def setup(instance_id: str) -> tuple[Prepared, TestPlan]:
        with lock:
            return _setup(instance_id)

    def _setup(instance_id: str) -> tuple[Prepared, TestPlan]:
        # Environments and plans are built once per instance, by whichever thread comes first.
        if instance_id not in prepared:
            prep = prepared[instance_id] = ctx.prepare(instances[instance_id])
            edits[instance_id] = set_up_edits(prep.env.spec.pre_install, prep.base.read_file)
        if instance_id not in plans:
            instance = instances[instance_id]
            if tests_path is None:
                plans[instance_id] = gold_plan(instance, prepared[instance_id])
            else:
                plans[instance_id] = predicted_plan(
                    predicted[instance_id].patch,
                    prepared[instance_id].base.list_files(),
                    [c.patch for c in candidates if c.instance_id == instance_id],
                )
        return prepared[instance_id], plans[instance_id]

    test_source = "gold" if tests_path is None else text_sha256(tests_path.read_text())
    ref_units = [
        Unit(
            key=f"reference--{i}",
            fingerprint=fingerprint(EVALUATION_VERSION, code_sha256(), "pod-ref", i, test_source),
            label=f"{i} (reference)",
        )
        for i in wanted
    ]

    def ref_work(unit: Unit) -> ReferenceResult:
        instance_id = unit.key.split("--", 1)[1]
        prep, plan = setup(instance_id)
        return reference(
            ctx.client,
            instances[instance_id],
            plan,
            prep,
            ctx.limits,
            ctx.store.log_dir(instance_id),
        )

    refs = run_units(
        ref_units,
        ref_work,
        ReferenceResult.from_json,
        ctx.store,
        ctx.workers,
        ctx.console,
        "reference runs",
        on_stop=ctx.stop,
    )
    by_key = {c.key: c for c in candidates}
    cand_units = [
        Unit(
            key=c.key,
            fingerprint=fingerprint(
                EVALUATION_VERSION,
                code_sha256(),
                "pod",
                c.instance_id,
                text_sha256(c.patch),
                test_source,
            ),
            label=c.key,
        )
        for c in candidates
        if isinstance(refs[f"reference--{c.instance_id}"], Done)
    ]

    def cand_work(unit: Unit) -> CandidateResult:
        candidate = by_key[unit.key]
        prep, plan = setup(candidate.instance_id)
        ref = refs[f"reference--{candidate.instance_id}"]
        return evaluate_candidate(
            ctx.client,
            candidate,
            plan,
            prep,
            ctx.limits,
            ctx.store.log_dir(candidate.instance_id),
            ref.record if isinstance(ref, Done) else None,
            edits[candidate.instance_id],
        )

    results = run_units(
        cand_units,
        cand_work,
        CandidateResult.from_json,
        ctx.store,
        ctx.workers,
        ctx.console,
        "candidates",
        on_stop=ctx.stop,
    )
    header = provenance(
        {
            "instances": args.instances,
            "patches": args.patches,
            "tests": tests_path,
            "env_specs": ctx.env_specs,
            "env_overrides": default_overlay(),
        },
        ["reprobot", *sys.argv[1:]],
        {"workers": ctx.workers, "limits": ctx.limits.__dict__, "resamples": args.resamples},
    )
    report = pod_report.build(candidates, refs, results, tests_path is None, args.resamples)
    report = replace(report, not_judged=not_judged)
    out = Path(args.out)
    section = pod_report.main_section(
        header, report, ctx.store.record_run("pod", time.monotonic() - started), peak_rss_mb()
    )
    written = write_report(out, [section])
    figures = pod_report.write_figures(out, report)
    print(written.markdown)
    ctx.console.print(f"reports: {', '.join(str(p) for p in [*written.paths.values(), *figures])}")
    errors = [r for r in [*refs.values(), *results.values()] if isinstance(r, Failed)]
    return 0 if not errors else 1
