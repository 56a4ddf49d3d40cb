"""``reprobot bench swt`` and ``reprobot bench pod``: the two benchmark commands."""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import httpx

from reprobot import __version__
from reprobot.bench import pod_report, swt_report
from reprobot.bench.dataset import (
    DatasetError,
    Instance,
    SpecTable,
    default_overlay,
    load_env_specs,
    load_instances,
)
from reprobot.bench.drafting import (
    draft_instance,
    drafting_markdown,
    failure_classes,
    predictions_from,
    taxonomy_markdown,
    write_predictions,
)
from reprobot.bench.environments import Prepared, prepare
from reprobot.bench.environments_report import (
    environment_summary,
    not_runnable,
    runnable_rows,
)
from reprobot.bench.environments_report import markdown as environments_markdown
from reprobot.bench.executor import Store, Unit, default_workers, peak_rss_mb, run_units
from reprobot.bench.hub import download, parse_ref
from reprobot.bench.pod import (
    TestPlan,
    evaluate_candidate,
    gold_plan,
    load_candidates,
    reference,
    tests_plan,
)
from reprobot.bench.predictions import GOLD, REPROBOT, gold_predictions, load_predictions
from reprobot.bench.provenance import code_sha256, fingerprint, provenance, text_sha256
from reprobot.bench.swt import evaluate_instance, score
from reprobot.console import console
from reprobot.generation.llm.setup import bind_llm_drafter
from reprobot.settings import Settings
from reprobot.validation.env.image_cache import cached_images
from reprobot.validation.sandbox.container import connect
from reprobot.validation.sandbox.limits import RunLimits

# Bumped when the evaluation of a stored unit changes meaning, so old results are not reused.
EVALUATION_VERSION = "2"


def register(sub: Any) -> None:
    bench = sub.add_parser("bench", help="run the benchmark harness (SWT-Bench, patch filtering)")
    commands = bench.add_subparsers(dest="bench_command", required=True)

    swt = commands.add_parser("swt", help="SWT-Bench evaluation of test-patch predictions")
    _common(swt)
    swt.add_argument(
        "--predictions",
        required=True,
        help="a JSON-lines predictions file, 'gold' (the golden tests) or 'reprobot' (draft them)",
    )
    swt.add_argument(
        "--patch-aware",
        action="store_true",
        help="with --predictions reprobot: draft knowing the golden fix, as at pull request time",
    )
    swt.add_argument(
        "--excluded",
        type=Path,
        help="ids SWT-Bench drops (default: swtbench_excluded_lite.txt next to the instances)",
    )
    swt.set_defaults(handler=run_swt)

    pod = commands.add_parser("pod", help="Reprobot's verdicts as a filter of candidate fixes")
    _common(pod)
    pod.add_argument("--patches", type=Path, required=True, help="labelled candidate fixes")
    pod.add_argument(
        "--tests", required=True, help="'gold' or a JSON-lines file of test-patch predictions"
    )
    pod.add_argument("--resamples", type=int, default=1000, help="bootstrap resamples")
    pod.set_defaults(handler=run_pod)


def _common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--instances",
        required=True,
        help="instances: a JSON-lines file, or a public dataset by name, "
        "hub:OWNER/NAME[@SPLIT] (e.g. hub:princeton-nlp/SWE-bench_Lite@test; needs a network)",
    )
    parser.add_argument("--repos", type=Path, required=True, help="folder of git clones")
    parser.add_argument("--out", type=Path, required=True, help="output folder (resumable)")
    parser.add_argument(
        "--env-specs",
        type=Path,
        help="environment table: env_specs.json or the harness's harness_specs.json "
        "(default: whichever is next to the instances)",
    )
    parser.add_argument("--workers", type=int, help="parallel units (default: cores and memory)")
    parser.add_argument("--only", action="append", default=[], help="instance id (repeatable)")


def _env_specs(args: argparse.Namespace) -> Path:
    if args.env_specs is not None:
        return Path(args.env_specs)
    for name in ("env_specs.json", "harness_specs.json"):
        candidate = Path(args.instances).parent / name
        if candidate.is_file():
            return candidate
    raise DatasetError(
        f"no env_specs.json or harness_specs.json next to {args.instances}: pass --env-specs"
    )


def resolve_instances(args: argparse.Namespace, settings: Settings) -> None:
    """Turn ``--instances`` into a file: a dataset named ``hub:...`` is downloaded once into
    ``OUT/dataset`` and read from there (so the report hashes what was evaluated)."""
    ref = parse_ref(str(args.instances))
    if ref is None:
        args.instances = Path(args.instances)
        return
    with httpx.Client(base_url=settings.hub_url, follow_redirects=True, timeout=120) as client:
        args.instances = download(ref, client, Path(args.out) / "dataset")


def _instances(args: argparse.Namespace) -> list[Instance]:
    instances = load_instances(args.instances)
    if args.only:
        unknown = set(args.only) - {i.instance_id for i in instances}
        if unknown:
            raise DatasetError(f"unknown instance ids: {', '.join(sorted(unknown))}")
        instances = [i for i in instances if i.instance_id in args.only]
    return instances


class _Context:
    """What every unit of one command shares: Docker, settings, limits, the spec table."""

    def __init__(self, args: argparse.Namespace, settings: Settings) -> None:
        self.settings = settings
        self.limits = RunLimits.from_settings(settings)
        self.client = connect()
        self.env_specs = _env_specs(args)
        self.table: SpecTable = load_env_specs(self.env_specs, default_overlay())
        self.repos = Path(args.repos)
        self.store = Store(Path(args.out))
        self.workers = args.workers or default_workers(self.limits.memory_mb)
        self.console = console(stderr=True)

    def prepare(self, instance: Instance) -> Prepared:
        return prepare(self.client, instance, self.repos, self.table, self.settings)


def run_swt(args: argparse.Namespace, settings: Settings) -> int:
    started = time.monotonic()
    started_epoch = time.time()
    resolve_instances(args, settings)
    ctx = _Context(args, settings)
    instances = _instances(args)
    drafting: dict[str, dict[str, Any]] = {}
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

    def work(unit: Unit) -> dict[str, Any]:
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

    results = run_units(units, work, ctx.store, ctx.workers, ctx.console, "bench swt")
    no_prediction = {
        i: {"instance_id": i, "error": "no prediction for this instance"} for i in missing
    }
    all_results = {**results, **no_prediction}
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
    paths = swt_report.write_reports(
        Path(args.out),
        header,
        model,
        scores,
        all_results,
        ctx.store.record_run("swt", time.monotonic() - started),
        peak_rss_mb(),
    )
    _append_environments(paths, ctx, all_results, started_epoch, args.predictions == GOLD)
    if drafting:
        success = {s.instance_id: s.flags.success for s in scores if not s.error}
        classes = failure_classes(instances, drafting, success)
        with paths["markdown"].open("a", encoding="utf-8") as fh:
            fh.write("\n" + drafting_markdown(instances, drafting))
            fh.write("\n" + taxonomy_markdown(instances, classes))
        document = json.loads(paths["json"].read_text(encoding="utf-8"))
        document["not_reproduced"] = classes
        paths["json"].write_text(json.dumps(document, indent=1), encoding="utf-8")
    print(paths["markdown"].read_text(encoding="utf-8"))
    ctx.console.print(f"reports: {', '.join(str(p) for p in paths.values())}")
    return 0 if not any(r.get("error") for r in all_results.values()) else 1


def _append_environments(
    paths: dict[str, Path],
    ctx: _Context,
    results: dict[str, dict[str, Any]],
    started_epoch: float,
    gold: bool,
) -> None:
    """The environment images the run used (and, with the golden tests, which instances ran)
    into both reports."""
    summary = environment_summary(results, cached_images(ctx.client, ctx.settings), started_epoch)
    document = json.loads(paths["json"].read_text(encoding="utf-8"))
    document["environments"] = summary
    text = environments_markdown(results, summary)
    if gold:
        document["runnable"] = runnable_rows(results)
        document["not_runnable"] = {
            i: cause for i, r in sorted(results.items()) if (cause := not_runnable(r))
        }
    else:
        text = text[text.index("## Environment images") :]
    paths["json"].write_text(json.dumps(document, indent=1), encoding="utf-8")
    with paths["markdown"].open("a", encoding="utf-8") as fh:
        fh.write("\n" + text)


def _draft_all(
    ctx: _Context, instances: list[Instance], patch_aware: bool = False
) -> dict[str, dict[str, Any]]:
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

    def work(unit: Unit) -> dict[str, Any]:
        instance = by_key[unit.key]
        prepared = ctx.prepare(instance)
        fix = instance.golden_patch if patch_aware else None
        return draft_instance(ctx.client, instance, prepared, ctx.settings, llm_drafter, fix)

    results = run_units(units, work, ctx.store, ctx.workers, ctx.console, "bench swt: drafting")
    return {by_key[key].instance_id: result for key, result in results.items()}


def _model(predictions: dict[str, Any]) -> str:
    models = sorted({p.model for p in predictions.values()})
    return ", ".join(models) if models else "none"


def run_pod(args: argparse.Namespace, settings: Settings) -> int:
    started = time.monotonic()
    resolve_instances(args, settings)
    ctx = _Context(args, settings)
    instances = {i.instance_id: i for i in _instances(args)}
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

    lock = threading.Lock()

    def setup(instance_id: str) -> tuple[Prepared, TestPlan]:
        with lock:
            return _setup(instance_id)

    def _setup(instance_id: str) -> tuple[Prepared, TestPlan]:
        # Environments and plans are built once per instance, by whichever thread comes first.
        if instance_id not in prepared:
            prepared[instance_id] = ctx.prepare(instances[instance_id])
        if instance_id not in plans:
            instance = instances[instance_id]
            if tests_path is None:
                plans[instance_id] = gold_plan(instance, prepared[instance_id])
            else:
                plans[instance_id] = tests_plan(predicted[instance_id].patch)
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

    def ref_work(unit: Unit) -> dict[str, Any]:
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

    refs = run_units(ref_units, ref_work, ctx.store, ctx.workers, ctx.console, "reference runs")
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
        if not refs[f"reference--{c.instance_id}"].get("error")
    ]

    def cand_work(unit: Unit) -> dict[str, Any]:
        candidate = by_key[unit.key]
        prep, plan = setup(candidate.instance_id)
        return evaluate_candidate(
            ctx.client, candidate, plan, prep, ctx.limits, ctx.store.log_dir(candidate.instance_id)
        )

    results = run_units(cand_units, cand_work, ctx.store, ctx.workers, ctx.console, "candidates")
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
    paths = pod_report.write_reports(
        Path(args.out),
        header,
        report,
        ctx.store.record_run("pod", time.monotonic() - started),
        peak_rss_mb(),
    )
    print(paths["markdown"].read_text(encoding="utf-8"))
    ctx.console.print(f"reports: {', '.join(str(p) for p in paths.values())}")
    errors = [r for r in [*refs.values(), *results.values()] if r.get("error")]
    return 0 if not errors else 1
