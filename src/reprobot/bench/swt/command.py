"""``reprobot bench swt``: SWT-Bench's evaluation of test-patch predictions (or of Reprobot's
own drafts), with the environments it stood on."""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from reprobot import __version__
from reprobot.bench.data.instances import DatasetError, Instance
from reprobot.bench.data.predictions import (
    GOLD,
    REPROBOT,
    Prediction,
    gold_predictions,
    load_predictions,
)
from reprobot.bench.envs.environments_report import (
    environment_summary,
    hand_written_pins,
    images_markdown,
    runnable_markdown,
    runnable_rows,
)
from reprobot.bench.envs.spec_table import default_overlay
from reprobot.bench.run.command_context import (
    EVALUATION_VERSION,
    Context,
    resolve_instances,
    selected_instances,
)
from reprobot.bench.run.executor import Done, Unit, peak_rss_mb, run_units
from reprobot.bench.run.provenance import code_sha256, fingerprint, provenance, text_sha256
from reprobot.bench.run.report import Section, write_report
from reprobot.bench.swt import report as swt_report
from reprobot.bench.swt.drafting import (
    Drafting,
    DraftResult,
    draft_instance,
    drafting_markdown,
    failure_classes,
    predictions_from,
    taxonomy_markdown,
    write_predictions,
)
from reprobot.bench.swt.evaluate import evaluate_instance, not_run
from reprobot.bench.swt.label_confidence import label_markdown, threshold_rows
from reprobot.bench.swt.results import (
    InstanceEntry,
    InstanceResult,
    NoPrediction,
    not_runnable,
    score,
)
from reprobot.generation import bind_llm_drafter
from reprobot.settings import Settings
from reprobot.validation import cached_images


def run_swt(args: argparse.Namespace, settings: Settings) -> int:
    started = time.monotonic()
    started_epoch = time.time()
    resolve_instances(args, settings)
    ctx = Context(args, settings)
    instances = selected_instances(args)
    drafting: Drafting = {}
    predictions_path: Path | None = None
    if args.patch_aware and args.predictions != REPROBOT:
        raise DatasetError("--patch-aware drafts tests: it goes with --predictions reprobot")
    if args.predictions == REPROBOT:
        drafting = _draft_all(ctx, instances, patch_aware=args.patch_aware)
        predictions = predictions_from(drafting)
        write_predictions(Path(args.out) / "predictions.jsonl", predictions)
    elif args.predictions == GOLD:
        predictions = gold_predictions(instances)
    else:
        predictions_path = Path(args.predictions)
        predictions = load_predictions(predictions_path)
    excluded_path = args.excluded or args.instances.parent / "swtbench_excluded_lite.txt"
    excluded = set(excluded_path.read_text().split()) if excluded_path.is_file() else set()
    by_key = {i.instance_id: i for i in instances if i.instance_id in predictions}
    missing = [i.instance_id for i in instances if i.instance_id not in predictions]
    skipped = {
        key: Done(not_run(i, predictions[key]))
        for key, i in by_key.items()
        if args.skip_empty and not predictions[key].patch.strip()
    }
    by_key = {key: i for key, i in by_key.items() if key not in skipped}
    units = [
        Unit(
            key=i.instance_id,
            fingerprint=fingerprint(
                EVALUATION_VERSION,
                code_sha256(),
                "swt",
                i.instance_id,
                text_sha256(predictions[i.instance_id].patch),
            ),
            label=i.instance_id,
        )
        for i in by_key.values()
    ]

    def work(unit: Unit) -> InstanceResult:
        instance = by_key[unit.key]
        prepared = ctx.prepare(instance)
        return evaluate_instance(
            ctx.client,
            instance,
            predictions[unit.key],
            prepared,
            ctx.limits,
            ctx.store.log_dir(unit.key),
        )

    results = run_units(
        units,
        work,
        InstanceResult.from_json,
        ctx.store,
        ctx.workers,
        ctx.console,
        "bench swt",
        on_stop=ctx.stop,
    )
    no_prediction = {i: NoPrediction(i) for i in missing}
    all_results: dict[str, InstanceEntry] = {**results, **skipped, **no_prediction}
    scores = [score(all_results[i.instance_id], i.instance_id in excluded) for i in instances]
    model = args.predictions if predictions_path is None else _model(predictions)
    header = provenance(
        {
            "instances": args.instances,
            "predictions": predictions_path,
            "env_specs": ctx.env_specs,
            "env_overrides": default_overlay(),
            "excluded": excluded_path,
        },
        ["reprobot", *sys.argv[1:]],
        {"workers": ctx.workers, "limits": ctx.limits.__dict__},
    )
    sections = [
        swt_report.main_section(
            header,
            model,
            scores,
            all_results,
            ctx.store.record_run("swt", time.monotonic() - started),
            peak_rss_mb(),
        ),
        _environments_section(ctx, all_results, started_epoch, args.predictions == GOLD),
    ]
    if drafting:
        success = {s.instance_id: s.flags.success for s in scores if not s.error}
        classes = failure_classes(instances, drafting, success)
        labels = threshold_rows(drafting, scores)
        sections += [
            Section(drafting_markdown(instances, drafting)),
            Section(taxonomy_markdown(instances, classes), {"not_reproduced": classes}),
            Section(
                label_markdown(labels, ctx.settings.label_min_confidence),
                {"label_confidence": [row.to_json() for row in labels]},
            ),
        ]
    out = Path(args.out)
    written = write_report(out, sections)
    swt_report.write_csv(out / "instances.csv", scores)
    print(written.markdown)
    paths = [*written.paths.values(), out / "instances.csv"]
    ctx.console.print(f"reports: {', '.join(str(p) for p in paths)}")
    return 0 if all(isinstance(r, Done) for r in all_results.values()) else 1


def _environments_section(
    ctx: Context, results: Mapping[str, InstanceEntry], started_epoch: float, gold: bool
) -> Section:
    """The environment images the run used (and, with the golden tests, which instances ran)."""
    environments = {
        i: r.record.environment
        for i, r in results.items()
        if isinstance(r, Done) and r.record.environment
    }
    summary = environment_summary(
        environments, cached_images(ctx.client, ctx.settings), started_epoch
    )
    # The JSON boundary: the overlay file's document, read for its hand-written pins.
    pins = hand_written_pins(json.loads(default_overlay().read_text(encoding="utf-8")))
    # The JSON boundary: the section's entries of report.json.
    data: dict[str, Any] = {"environments": summary.to_json(), "hand_written_pins": pins}
    text = images_markdown(summary, pins)
    if gold:
        causes = {i: not_runnable(r) for i, r in results.items()}
        data["runnable"] = runnable_rows(causes)
        data["not_runnable"] = {i: cause for i, cause in sorted(causes.items()) if cause}
        text = runnable_markdown(causes) + "\n" + text
    return Section(text, data)


def _draft_all(ctx: Context, instances: list[Instance], patch_aware: bool = False) -> Drafting:
    """Reprobot's drafts for every instance, resumable like the evaluation units; with
    ``patch_aware`` each knows the golden fix, as a pull request's would."""
    llm_drafter = bind_llm_drafter(ctx.settings)
    prefix = "draft-patch-aware-" if patch_aware else "draft-"
    by_key = {f"{prefix}{i.instance_id}": i for i in instances}
    units = [
        Unit(
            key=key,
            fingerprint=fingerprint(
                EVALUATION_VERSION,
                code_sha256(),
                "draft",
                __version__,
                text_sha256(i.problem_statement),
                ctx.settings.llm_model if llm_drafter else "no-llm",
                ctx.settings.draft_max_runs,
                text_sha256(i.patch) if patch_aware else "issue-time",
            ),
            label=f"draft {i.instance_id}",
        )
        for key, i in by_key.items()
    ]

    def work(unit: Unit) -> DraftResult:
        instance = by_key[unit.key]
        prepared = ctx.prepare(instance)
        fix = instance.golden_patch if patch_aware else None
        return draft_instance(ctx.client, instance, prepared, ctx.settings, llm_drafter, fix)

    results = run_units(
        units,
        work,
        DraftResult.from_json,
        ctx.store,
        ctx.workers,
        ctx.console,
        "bench swt: drafting",
        on_stop=ctx.stop,
    )
    return {by_key[key].instance_id: result for key, result in results.items()}


def _model(predictions: Mapping[str, Prediction]) -> str:
    models = sorted({p.model for p in predictions.values()})
    return ", ".join(models) if models else "none"
