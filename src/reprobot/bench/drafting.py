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
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import LLMDrafter, reproduce
from reprobot.settings import Settings


def draft_instance(
    client: docker.DockerClient,
    instance: Instance,
    prepared: Prepared,
    settings: Settings,
    llm_drafter: LLMDrafter | None,
) -> dict[str, Any]:
    """The stored result of drafting one instance (JSON-ready)."""
    started = time.monotonic()
    issue = read_issue(instance.problem_statement)
    result = reproduce(
        issue, prepared.base, prepared.env, settings, client=client, llm_drafter=llm_drafter
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


def drafting_markdown(
    instances: Sequence[Instance], results: Mapping[str, Mapping[str, Any]]
) -> str:
    """Per-instance drafting figures: reproduced on R, by which method, time and sandbox runs."""
    lines = [
        "## Drafting (no environment builds)",
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
