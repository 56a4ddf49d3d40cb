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
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeAlias

import docker

from reprobot.bench.data.instances import Instance
from reprobot.bench.data.predictions import REPROBOT, Prediction
from reprobot.bench.envs.environments import Prepared
from reprobot.bench.run.executor import Done, Failed, UnitResult
from reprobot.generation import (
    LINT_PASSES,
    NO_LINTER_SETTINGS,
    LLMDrafter,
    generated_messages,
    lint_summary,
    read_issue,
    reproduce,
)
from reprobot.settings import Settings
from reprobot.validation import Patch


@dataclass(frozen=True)
class DraftCandidate:
    """One candidate of a drafting result: what the taxonomy reads of it (its outcome and
    reason), and the candidate as ``reprobot reproduce --json`` writes it."""

    outcome: str
    reason: str
    # The JSON boundary: generation's record of the candidate (its command-line contract),
    # stored and read back as it is.
    record: Mapping[str, Any]

    @classmethod
    def from_json(cls, record: Mapping[str, Any]) -> DraftCandidate:
        return cls(str(record.get("outcome")), str(record.get("reason", "")), dict(record))

    def to_json(self) -> dict[str, Any]:
        return dict(self.record)


@dataclass(frozen=True)
class DraftResult:
    """What drafting one instance came to (a stored unit result): the chosen test patch (empty
    when nothing reproduced), how it was drafted, and what drafting cost."""

    instance_id: str
    model_patch: str = ""
    reproduced: bool = False
    method: str | None = None
    failing_tests: tuple[str, ...] = ()
    failure: str = ""
    candidates: tuple[DraftCandidate, ...] = ()
    sandbox_runs: int = 0
    # Drafting's own time (environment builds excluded), and the unit's wall time.
    drafting_s: float = 0.0
    patch_aware: bool = False
    wall_s: float = 0.0
    # What the project's linter says of the chosen test (``repo.linter.lint_summary``; "" when
    # nothing was chosen, or in a result stored before it was recorded).
    lint: str = ""

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result, in the order it is written.
        return {
            "instance_id": self.instance_id,
            "model_patch": self.model_patch,
            "reproduced": self.reproduced,
            "method": self.method,
            "failing_tests": list(self.failing_tests),
            "failure": self.failure,
            "candidates": [c.to_json() for c in self.candidates],
            "sandbox_runs": self.sandbox_runs,
            "drafting_s": self.drafting_s,
            "patch_aware": self.patch_aware,
            "wall_s": self.wall_s,
            "lint": self.lint,
        }

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> DraftResult:
        # The JSON boundary: a stored unit result as ``to_json`` wrote it.
        return cls(
            instance_id=str(data["instance_id"]),
            model_patch=str(data["model_patch"]),
            reproduced=bool(data["reproduced"]),
            method=data["method"],
            failing_tests=tuple(data["failing_tests"]),
            failure=str(data["failure"]),
            candidates=tuple(DraftCandidate.from_json(c) for c in data["candidates"]),
            sandbox_runs=data["sandbox_runs"],
            drafting_s=data["drafting_s"],
            patch_aware=bool(data["patch_aware"]),
            wall_s=data["wall_s"],
            lint=str(data.get("lint") or ""),
        )


def draft_instance(
    client: docker.DockerClient,
    instance: Instance,
    prepared: Prepared,
    settings: Settings,
    llm_drafter: LLMDrafter | None,
    fix: Patch | None = None,
) -> DraftResult:
    """The result of drafting one instance; with ``fix``, patch-aware."""
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
    # What ``reprobot reproduce --json`` says of the chosen test and every candidate.
    record = result.to_json()
    return DraftResult(
        instance_id=instance.instance_id,
        model_patch=result.test_patch,
        reproduced=result.reproduced,
        method=record["method"],
        failing_tests=tuple(record["failing_tests"]),
        failure=record["failure"],
        candidates=tuple(DraftCandidate.from_json(c) for c in record["candidates"]),
        sandbox_runs=result.sandbox_runs,
        drafting_s=round(result.duration_s, 2),
        patch_aware=result.patch_aware,
        wall_s=round(time.monotonic() - started, 2),
        lint=lint_summary(prepared.base, result.test_patch) if result.test_patch else "",
    )


# Every instance's drafting, by instance id: its result, or the error of its unit.
Drafting: TypeAlias = Mapping[str, UnitResult[DraftResult]]


def predictions_from(results: Drafting) -> dict[str, Prediction]:
    """Predictions from drafting results; an instance whose drafting errored has none."""
    return {
        key: Prediction(key, REPROBOT, r.record.model_patch or "")
        for key, r in results.items()
        if isinstance(r, Done)
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


def failure_class(record: DraftResult, success: bool | None = None) -> str | None:
    """Why drafting ``record`` (a ``draft_instance`` result) did not give a test that goes F->P
    under the golden fix; None when it did (or ``success`` is unknown and it reproduced). The
    best any candidate came to decides: a draft that failed for another reason says more than
    one that passed, which says more than a draft that was never made."""
    if record.reproduced:
        return None if success is None or success else NOT_FIXED
    candidates = record.candidates
    ran = [c for c in candidates if c.outcome != "no-draft"]
    reasons = " ".join(c.reason for c in ran)
    outcomes = {c.outcome for c in ran}
    if any(c.reason.startswith("reproduced once") for c in ran):
        return FLAKY
    unrelated = [c.reason for c in ran if c.outcome == "unrelated"]
    if unrelated:
        # The project's code failing to import an optional package ("LaTeX parsing requires
        # the antlr4 python package") is the environment's gap, not a wrong reproduction.
        if all(any(m in reason for m in _MISSING_MODULE) for reason in unrelated):
            return ENVIRONMENT
        return UNRELATED
    if "passes" in outcomes:
        return PASSES
    skipped = " ".join(c.reason for c in candidates if c.outcome == "no-draft")
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
    instances: Sequence[Instance], results: Drafting, success: Mapping[str, bool]
) -> dict[str, str]:
    """Instance id to why it was not reproduced (instances whose drafting errored left out)."""
    classes: dict[str, str] = {}
    for instance in instances:
        r = results.get(instance.instance_id)
        if not isinstance(r, Done):
            continue
        found = failure_class(r.record, success.get(instance.instance_id))
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


def _patch_aware(results: Drafting) -> bool:
    return any(isinstance(r, Done) and r.record.patch_aware for r in results.values())


def drafting_markdown(instances: Sequence[Instance], results: Drafting) -> str:
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
        entry = results.get(instance.instance_id)
        if isinstance(entry, Failed):
            lines.append(f"| {instance.instance_id} | error: {entry.error[:80]} | | | | |")
            continue
        # An instance with no drafting result is a row of nothing drafted.
        r = entry.record if entry is not None else DraftResult(instance.instance_id)
        drafts = [c for c in r.candidates if c.outcome != "no-draft"]
        times.append(float(r.drafting_s))
        runs.append(int(r.sandbox_runs))
        lines.append(
            f"| {instance.instance_id} | {'yes' if r.reproduced else 'no'} "
            f"| {r.method or '–'} | {len(drafts)} | {r.sandbox_runs} "
            f"| {float(r.drafting_s):.1f} |"
        )
    if times:
        total = sum(times)
        reproduced = sum(
            1
            for i in instances
            if isinstance(entry := results.get(i.instance_id), Done) and entry.record.reproduced
        )
        lines.append(
            f"| **total** | {reproduced} of {len(instances)} | | | {sum(runs)} "
            f"| {total:.1f} (mean {total / len(times):.1f}) |"
        )
    chosen = [
        entry.record.model_patch
        for i in instances
        if isinstance(entry := results.get(i.instance_id), Done) and entry.record.model_patch
    ]
    if chosen:
        plain = sum(
            1 for patch in chosen if not any(generated_messages(t) for t in added_texts(patch))
        )
        lines += [
            "",
            f"Chosen tests whose assertions carry no message Reprobot wrote: {plain} of "
            f"{len(chosen)} (a test pytest runs has plain asserts, pytest's report shows both "
            'sides; the unittest family\'s say "expected X, got Y" themselves).',
        ]
    linted = [
        entry.record.lint
        for i in instances
        if isinstance(entry := results.get(i.instance_id), Done) and entry.record.model_patch
    ]
    if linted:
        passing = linted.count(LINT_PASSES)
        unchecked = NO_LINTER_SETTINGS
        checked = [v for v in linted if v and v != unchecked and not v.startswith("not checked")]
        lines.append(
            f"Chosen tests that pass the project's linter (its flake8 or Ruff settings): "
            f"{passing} of {len(checked)} checked; {linted.count(unchecked)} in projects with "
            f"no linter settings, {len(linted) - len(checked) - linted.count(unchecked)} not "
            "checked or not recorded."
        )
    return "\n".join(lines) + "\n"


def added_texts(diff: str) -> list[str]:
    """The text each file of a diff adds, one per file: a drafted test patch adds new modules."""
    texts: list[list[str]] = []
    for line in diff.splitlines():
        if line.startswith("+++ "):
            texts.append([])
        elif line.startswith("+") and texts:
            texts[-1].append(line[1:])
    return ["\n".join(lines) for lines in texts]
