"""``bench swt --predictions reprobot``: Reprobot's own drafter as the system under evaluation.

Each instance's issue (its ``problem_statement``) is reproduced on R exactly as ``reprobot
reproduce`` does; the chosen test patch (empty when nothing reproduced) becomes the instance's
prediction, written to ``OUT/predictions.jsonl`` in SWT-Bench's format, with the drafting time
(environment builds excluded) and the sandbox runs it spent.
"""

from __future__ import annotations

import json
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import docker

from reprobot.bench.dataset import Instance
from reprobot.bench.environments import Prepared
from reprobot.bench.predictions import REPROBOT, Prediction
from reprobot.generation import LLMDrafter, read_issue, reproduce
from reprobot.settings import Settings
from reprobot.validation import Patch


def draft_instance(
    client: docker.DockerClient,
    instance: Instance,
    prepared: Prepared,
    settings: Settings,
    llm_drafter: LLMDrafter | None,
    fix: Patch | None = None,
) -> dict[str, Any]:
    """The stored result of drafting one instance (JSON-ready); with ``fix``, patch-aware."""
    started = time.monotonic()
    issue = read_issue(instance.problem_statement)
    result = reproduce(
        issue,
        prepared.base,
        prepared.env,
        settings,
        client=client,
        llm_drafter=llm_drafter,
        fix=fix,
    )
    record = result.to_json()
    return {
        "instance_id": instance.instance_id,
        "model_patch": result.test_patch,
        "reproduced": result.reproduced,
        "method": record["method"],
        "failing_tests": record["failing_tests"],
        "failure": record["failure"],
        "candidates": record["candidates"],
        "sandbox_runs": result.sandbox_runs,
        "drafting_s": round(result.duration_s, 2),
        "patch_aware": result.patch_aware,
        "wall_s": round(time.monotonic() - started, 2),
    }


def predictions_from(results: Mapping[str, Mapping[str, Any]]) -> dict[str, Prediction]:
    """Predictions from drafting results; an instance whose drafting errored has none."""
    return {
        key: Prediction(key, REPROBOT, str(r.get("model_patch") or ""))
        for key, r in results.items()
        if not r.get("error")
    }


def write_predictions(path: Path, predictions: Mapping[str, Prediction]) -> None:
    lines = [
        json.dumps(
            {"instance_id": p.instance_id, "model_name_or_path": p.model, "model_patch": p.patch}
        )
        for p in sorted(predictions.values(), key=lambda p: p.instance_id)
    ]
    path.write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")


# Why an instance was not reproduced, in the order the classes are reported. Each names what
# to work on next: reading issues, drafting, environments, or judging failures.
NO_EXAMPLE = "no runnable example in the issue"
NO_ORACLE = "example shows no exception, wrong or expected value"
NAMES = "names the example uses are not found"
NOT_APPLIED = "drafted patch does not apply"
BROKEN = "example does not run (the test fails by itself)"
ENVIRONMENT = "environment lacks a dependency"
PASSES = "passes on R"
UNRELATED = "fails, but not for the issue's reason"
FLAKY = "flaky: reproduced once, not when run alone"
SANDBOX = "sandbox error (limits, install)"
NOT_FIXED = "reproduced, but the golden fix does not make it pass"
TAXONOMY = (
    NO_EXAMPLE, NO_ORACLE, NAMES, NOT_APPLIED, BROKEN, ENVIRONMENT, PASSES, UNRELATED, FLAKY,
    SANDBOX, NOT_FIXED,
)  # fmt: skip
_MISSING_MODULE = ("ModuleNotFoundError", "No module named", "ImportError")


def failure_class(record: Mapping[str, Any], success: bool | None = None) -> str | None:
    """Why drafting ``record`` (a stored ``draft_instance`` result) did not give a test that
    goes F->P under the golden fix; None when it did (or ``success`` is unknown and it
    reproduced). The best any candidate came to decides: a draft that failed for another reason
    says more than one that passed, which says more than a draft that was never made."""
    if record.get("reproduced"):
        return None if success is None or success else NOT_FIXED
    candidates = list(record.get("candidates") or [])
    ran = [c for c in candidates if c.get("outcome") != "no-draft"]
    reasons = " ".join(str(c.get("reason", "")) for c in ran)
    outcomes = {str(c.get("outcome")) for c in ran}
    if any(str(c.get("reason", "")).startswith("reproduced once") for c in ran):
        return FLAKY
    unrelated = [str(c.get("reason", "")) for c in ran if c.get("outcome") == "unrelated"]
    if unrelated:
        # The project's code failing to import an optional package ("LaTeX parsing requires
        # the antlr4 python package") is the environment's gap, not a wrong reproduction.
        if all(any(m in reason for m in _MISSING_MODULE) for reason in unrelated):
            return ENVIRONMENT
        return UNRELATED
    if "passes" in outcomes:
        return PASSES
    skipped = " ".join(str(c.get("reason", "")) for c in candidates if c not in ran)
    names_missing = "names the issue's code uses are not found" in skipped
    if "broken" in outcomes:
        if any(m in reasons for m in _MISSING_MODULE):
            return ENVIRONMENT
        # A name the drafter could not find, failing as such: the example is incomplete.
        return NAMES if names_missing and "NameError" in reasons else BROKEN
    if "not-applied" in outcomes:
        return NOT_APPLIED
    if "error" in outcomes:
        return SANDBOX
    if names_missing:
        return NAMES
    if "no exception, no value called wrong" in skipped:
        return NO_ORACLE
    return NO_EXAMPLE


def failure_classes(
    instances: Sequence[Instance],
    results: Mapping[str, Mapping[str, Any]],
    success: Mapping[str, bool],
) -> dict[str, str]:
    """Instance id to why it was not reproduced (instances whose drafting errored left out)."""
    classes: dict[str, str] = {}
    for instance in instances:
        r = results.get(instance.instance_id)
        if r is None or r.get("error"):
            continue
        found = failure_class(r, success.get(instance.instance_id))
        if found is not None:
            classes[instance.instance_id] = found
    return classes


def taxonomy_markdown(instances: Sequence[Instance], classes: Mapping[str, str]) -> str:
    """Counts of the reasons instances were not reproduced, overall and per repository."""
    repos = sorted({i.repo for i in instances})
    repo_of = {i.instance_id: i.repo for i in instances}
    lines = [
        "## Why instances were not reproduced",
        "",
        "| reason | all | " + " | ".join(r.split("/")[-1] for r in repos) + " |",
        "|---|---:|" + "---:|" * len(repos),
    ]
    for name in TAXONOMY:
        ids = [i for i, c in classes.items() if c == name]
        if not ids:
            continue
        per_repo = [str(sum(1 for i in ids if repo_of[i] == r)) for r in repos]
        lines.append(f"| {name} | {len(ids)} | " + " | ".join(per_repo) + " |")
    lines.append(
        f"| **not reproduced** | {len(classes)} | "
        + " | ".join(str(sum(1 for i in classes if repo_of[i] == r)) for r in repos)
        + " |"
    )
    lines += ["", *(f"- `{i}`: {c}" for i, c in sorted(classes.items()))]
    return "\n".join(lines) + "\n"


def _patch_aware(results: Mapping[str, Mapping[str, Any]]) -> bool:
    return any(r.get("patch_aware") for r in results.values())


def drafting_markdown(
    instances: Sequence[Instance], results: Mapping[str, Mapping[str, Any]]
) -> str:
    """Per-instance drafting figures: reproduced on R, by which method, time and sandbox runs."""
    lines = [
        "## Drafting (no environment builds)"
        + (" knowing the golden fix (patch-aware)" if _patch_aware(results) else ""),
        "",
        "| instance | reproduced on R | method | candidates | sandbox runs | drafting s |",
        "|---|---|---|---:|---:|---:|",
    ]
    times: list[float] = []
    runs: list[int] = []
    for instance in instances:
        r = results.get(instance.instance_id, {})
        if r.get("error"):
            lines.append(f"| {instance.instance_id} | error: {r['error'][:80]} | | | | |")
            continue
        drafts = [c for c in r.get("candidates", []) if c.get("outcome") != "no-draft"]
        times.append(float(r.get("drafting_s", 0.0)))
        runs.append(int(r.get("sandbox_runs", 0)))
        lines.append(
            f"| {instance.instance_id} | {'yes' if r.get('reproduced') else 'no'} "
            f"| {r.get('method') or '–'} | {len(drafts)} | {r.get('sandbox_runs', 0)} "
            f"| {float(r.get('drafting_s', 0.0)):.1f} |"
        )
    if times:
        total = sum(times)
        reproduced = sum(1 for i in instances if results.get(i.instance_id, {}).get("reproduced"))
        lines.append(
            f"| **total** | {reproduced} of {len(instances)} | | | {sum(runs)} "
            f"| {total:.1f} (mean {total / len(times):.1f}) |"
        )
    return "\n".join(lines) + "\n"
