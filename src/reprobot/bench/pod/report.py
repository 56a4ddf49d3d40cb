"""The outputs of ``bench pod``: per-candidate calls, metrics with intervals, effort, figures."""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

from reprobot.bench.pod.bootstrap import cluster_bootstrap
from reprobot.bench.pod.classification import METRIC_NAMES, Confusion, FilterCall, confusion
from reprobot.bench.pod.inspection import IssueEffort, issue_effort, tally_versus_rs
from reprobot.bench.pod.judge import CandidateFix, graded_ids, judge
from reprobot.bench.pod.plots import plot_effort_table, plot_wpc_envelope
from reprobot.bench.pod.results import CandidateResult, ReferenceResult
from reprobot.bench.pod.wpc import wpc_envelope, wpc_equivalent_p
from reprobot.bench.run.executor import Done, Failed, Timing, UnitResult
from reprobot.bench.run.provenance import Provenance, provenance_markdown
from reprobot.bench.run.report import Section


@dataclass(frozen=True)
class CandidateCall:
    key: str
    instance_id: str
    system: str
    resolved: bool
    called_correct: bool | None
    reason: str
    transitions: dict[str, str]
    weak: bool = False

    @property
    def agrees(self) -> bool:
        return self.called_correct is not None and self.called_correct == self.resolved


@dataclass(frozen=True)
class PodReport:
    calls: tuple[CandidateCall, ...]
    filter_calls: tuple[FilterCall, ...]
    metrics: dict[str, float]
    intervals: dict[str, tuple[float, float]]
    matrix: dict[str, float]
    effort: tuple[IssueEffort, ...]
    envelope: list[tuple[float, dict[str, float]]]
    equivalent_p: dict[str, float | None]
    dropped: dict[str, dict[str, str]]
    errors: dict[str, str]
    # Instances with no test to judge their candidates (nothing drafted), and why.
    not_judged: dict[str, str] = field(default_factory=dict)
    review_cost: ReviewCost | None = None
    # Candidates that carried the environment's own set-up edits, and the files left out of them.
    set_up: dict[str, tuple[str, ...]] = field(default_factory=dict)


def build(
    candidates: Sequence[CandidateFix],
    references: Mapping[str, UnitResult[ReferenceResult]],
    results: Mapping[str, UnitResult[CandidateResult]],
    gold: bool,
    resamples: int,
) -> PodReport:
    """Grade every candidate against its instance's reference run and compute the metrics.

    A candidate whose runs failed (an error of the sandbox, not of the candidate) gets no call
    and is left out of the metrics, so an infrastructure fault never counts as a verdict."""
    calls, errors = candidate_calls(candidates, references, results, gold)
    filter_calls = filter_calls_of(calls)
    matrix = confusion(filter_calls)
    positives = matrix.tp + matrix.fn
    negatives = matrix.tn + matrix.fp
    metrics = matrix.metrics()
    return PodReport(
        calls=tuple(calls),
        filter_calls=filter_calls,
        metrics=metrics,
        intervals=cluster_bootstrap(filter_calls, resamples=resamples) if filter_calls else {},
        matrix=_cells(matrix),
        effort=tuple(issue_effort(filter_calls)),
        envelope=wpc_envelope(positives, negatives) if positives and negatives else [],
        equivalent_p={
            m: wpc_equivalent_p(metrics[m], m, positives, negatives)
            for m in ("mcc", "accuracy", "balanced_accuracy")
            if positives and negatives
        },
        dropped={
            k.split("--", 1)[1]: dict(v.record.dropped) if isinstance(v, Done) else {}
            for k, v in references.items()
        },
        errors=errors,
        review_cost=review_cost(candidates, references, results, gold, calls),
        set_up={
            k: v.record.set_up
            for k, v in results.items()
            if isinstance(v, Done) and v.record.set_up
        },
    )


def candidate_calls(
    candidates: Sequence[CandidateFix],
    references: Mapping[str, UnitResult[ReferenceResult]],
    results: Mapping[str, UnitResult[CandidateResult]],
    gold: bool,
) -> tuple[list[CandidateCall], dict[str, str]]:
    """Each candidate's call (``called_correct`` None when its runs failed), and why each
    uncalled one has none."""
    calls = []
    errors: dict[str, str] = {}
    for c in candidates:
        ref = references.get(f"reference--{c.instance_id}")
        result = results.get(c.key)
        problem = _problem(ref, result)
        if problem or not isinstance(ref, Done) or not isinstance(result, Done):
            errors[c.key] = problem
            calls.append(
                CandidateCall(c.key, c.instance_id, c.system, c.resolved, None, problem, {})
            )
            continue
        reference, candidate = ref.record, result.record
        call = judge(
            reference.before,
            candidate.after,
            graded_ids(reference, gold),
            candidate,
            reference.oracles,
            reference.guard_before,
        )
        calls.append(
            CandidateCall(
                c.key,
                c.instance_id,
                c.system,
                c.resolved,
                call.correct,
                call.reason,
                call.transitions,
                call.weak,
            )
        )
    return calls, errors


def filter_calls_of(calls: Sequence[CandidateCall]) -> tuple[FilterCall, ...]:
    """The calls made (a candidate with no call is left out), as the classifier reads them."""
    return tuple(
        FilterCall(
            cluster=f"{call.system}|{call.instance_id}",
            issue=call.instance_id,
            predicted=bool(call.called_correct),
            actual=call.resolved,
            weak=call.weak,
        )
        for call in calls
        if call.called_correct is not None
    )


def _cells(matrix: Confusion) -> dict[str, float]:
    return {"tp": matrix.tp, "fp": matrix.fp, "tn": matrix.tn, "fn": matrix.fn}


@dataclass(frozen=True)
class ReviewCost:
    """What the change concerns (``CandidateResult.review``: paths a verified change may not
    hold, code reaching into the test process, a diff too large to read) cost the filter: the
    candidates whose tests verify them but which need review for what they hold, and the
    confusion matrix and metrics the filter would have without those concerns."""

    held: tuple[CandidateCall, ...]
    matrix_without: dict[str, float]
    metrics_without: dict[str, float]

    @property
    def held_correct(self) -> int:
        return sum(c.resolved for c in self.held)

    @property
    def held_incorrect(self) -> int:
        return len(self.held) - self.held_correct


def review_cost(
    candidates: Sequence[CandidateFix],
    references: Mapping[str, UnitResult[ReferenceResult]],
    results: Mapping[str, UnitResult[CandidateResult]],
    gold: bool,
    calls: Sequence[CandidateCall],
) -> ReviewCost:
    """The candidates ``calls`` reject only for their change concerns (judged again with none,
    they are verified), and the filter's matrix and metrics when judged without them."""
    unconcerned: dict[str, UnitResult[CandidateResult]] = {
        k: replace(v, record=replace(v.record, review=())) if isinstance(v, Done) else v
        for k, v in results.items()
    }
    without, _ = candidate_calls(candidates, references, unconcerned, gold)
    held = tuple(
        call
        for call, other in zip(calls, without, strict=True)
        if call.called_correct is False and other.called_correct
    )
    matrix = confusion(filter_calls_of(without))
    return ReviewCost(held, _cells(matrix), matrix.metrics())


def _problem(
    reference: UnitResult[ReferenceResult] | None, result: UnitResult[CandidateResult] | None
) -> str:
    """Why a candidate has no call: its instance's reference runs or its own failed, or it was
    not run ("" when it has both results)."""
    for unit in (reference, result):
        if isinstance(unit, Failed) and unit.error:
            return unit.error
    return "" if result is not None and reference is not None else "not run"


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def markdown(header: Provenance, report: PodReport, timing: Timing, peak_mb: float) -> str:
    m = report.matrix
    agree = sum(c.agrees for c in report.calls if c.called_correct is not None)
    called = sum(c.called_correct is not None for c in report.calls)
    lines = [
        "# Reprobot's verdicts as a fix filter",
        "",
        *provenance_markdown(header),
        "",
        f"{timing.sentence()}; peak memory of the harness process {peak_mb:.0f} MiB.",
        "",
        f"**Agreement with the `resolved` labels: {agree} of {called} candidates"
        + (f" ({100 * agree / called:.1f}%)" if called else "")
        + "**"
        + (f"; {len(report.errors)} candidate(s) could not be run." if report.errors else ".")
        + (
            f" {len(report.not_judged)} instance(s) not judged: no test to judge them with."
            if report.not_judged
            else ""
        ),
        "",
        "| | labelled correct | labelled incorrect |",
        "|---|---|---|",
        f"| called correct | TP {m['tp']:.0f} | FP {m['fp']:.0f} |",
        f"| called incorrect | FN {m['fn']:.0f} | TN {m['tn']:.0f} |",
        "",
        "| metric | value | 95% cluster bootstrap | WPC equivalent p |",
        "|---|---|---|---|",
    ]
    for name in METRIC_NAMES:
        low, high = report.intervals.get(name, (None, None))
        lines.append(
            f"| {name} | {_f(report.metrics[name])} | [{_f(low)}, {_f(high)}] "
            f"| {_f(report.equivalent_p.get(name), 2)} |"
        )
    tally = tally_versus_rs(report.effort, 0.95)
    lines += [
        "",
        "Zero cells are replaced by 1e-12; clusters are producing system × issue. The WPC "
        "labels each patch right with probability p; its equivalent p is the smallest p at "
        "which it reaches our value.",
        "",
    ]
    if report.review_cost is not None:
        lines += [*review_cost_markdown(report.review_cost, report.metrics), ""]
    if report.set_up:
        files = Counter(f for paths in report.set_up.values() for f in paths)
        lines += [
            f"{len(report.set_up)} candidate(s) carry the edits the environment's own set-up "
            "steps make to the tree, as the tree they were written in held them; those files are "
            "left out of the candidate: "
            + ", ".join(f"{name} ({n})" for name, n in sorted(files.items())),
            "",
        ]
    lines += [
        "## Patches a maintainer opens until the first correct one",
        "",
        "By the verdict's grade: the accepted (verified) patches first, then those whose tests "
        "went F→P but only show the crash or the wrong value gone (weak), then the rest, each "
        "grade in random order; RS opens all in random order. 85/95: patches to open to find a "
        "correct one with that probability.",
        "",
        "| issue | patches | correct | accepted (correct) | weak (correct) | filter 85/95 "
        "| RS-85/95 | expected filter / random | vs RS-95 |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for e in report.effort:
        lines.append(
            f"| {e.issue} | {e.patches} | {e.correct} | {e.accepted} ({e.accepted_correct}) "
            f"| {e.weak} ({e.weak_correct}) | {_n(e.filter85)}/{_n(e.filter95)} "
            f"| {_n(e.rs85)}/{_n(e.rs95)} "
            f"| {_f(e.expected_filter, 2)} / {_f(e.expected_random, 2)} | {e.versus_rs(0.95)} |"
        )
    accepted_only = tally_versus_rs(report.effort, 0.95, by_grade=False)
    lines += [
        "",
        "At 95%: " + ", ".join(f"{k} {v}" for k, v in sorted(tally.items())),
        "",
        "Accepted first and every rejected patch after, without the weak grade: "
        + ", ".join(f"{k} {v}" for k, v in sorted(accepted_only.items())),
        "",
    ]
    disagreements = [c for c in report.calls if c.called_correct is not None and not c.agrees]
    lines += ["## Disagreements with the labels", ""]
    if not disagreements:
        lines.append("None.")
    for c in disagreements:
        verdict = "correct" if c.called_correct else "incorrect"
        labelled = "resolved" if c.resolved else "not resolved"
        lines.append(f"- `{c.key}`: called {verdict}, labelled {labelled}: {c.reason}")
    dropped = {i: d for i, d in report.dropped.items() if d}
    if dropped:
        lines += ["", "## Test ids left out of the grading", ""]
        for instance_id, ids in sorted(dropped.items()):
            for test_id, why in sorted(ids.items()):
                lines.append(f"- {instance_id}: `{test_id}`: {why}")
    if report.not_judged:
        lines += ["", "## Not judged", ""]
        lines += [f"- `{k}`: {v}" for k, v in sorted(report.not_judged.items())]
    if report.errors:
        lines += ["", "## Not run", ""]
        lines += [f"- `{k}`: {v}" for k, v in sorted(report.errors.items())]
    return "\n".join(lines) + "\n"


def review_cost_markdown(cost: ReviewCost, metrics: Mapping[str, float]) -> list[str]:
    """The report's section on what the change concerns cost, each candidate they hold named
    with its first concern."""
    lines = [
        "## What the change concerns cost",
        "",
        f"{len(cost.held)} candidate(s) whose tests verify them need review for what they hold "
        "(a path a verified change may not hold, code reaching into the test process, a diff "
        f"too large to read): {cost.held_correct} labelled correct, {cost.held_incorrect} "
        "labelled incorrect.",
        "",
        "| metric | with the concerns | without them |",
        "|---|---|---|",
    ]
    for name in ("precision", "recall", "negative_recall", "mcc"):
        lines.append(f"| {name} | {_f(metrics[name])} | {_f(cost.metrics_without[name])} |")
    for call in cost.held:
        label = "correct" if call.resolved else "incorrect"
        concern = call.reason.removeprefix("needs review: ")
        lines.append(f"- `{call.key}` (labelled {label}): {concern[:300]}")
    return lines


def _n(value: int | None) -> str:
    return "–" if value is None else str(value)


def main_section(header: Provenance, report: PodReport, timing: Timing, peak_mb: float) -> Section:
    """The filter's calls, metrics with intervals and effort, as a report section."""
    return Section(
        markdown(header, report, timing, peak_mb),
        {
            **header.to_json(),
            "wall_s": round(timing.this_run_s, 1),
            "wall_s_all_runs": round(timing.total_s, 1),
            "runs": timing.runs,
            "peak_rss_mb": peak_mb,
            "confusion": report.matrix,
            "metrics": report.metrics,
            "intervals": report.intervals,
            "wpc_equivalent_p": report.equivalent_p,
            "wpc_envelope": report.envelope,
            "effort": [asdict(e) for e in report.effort],
            "calls": [asdict(c) for c in report.calls],
            "dropped": report.dropped,
            "errors": report.errors,
            "not_judged": report.not_judged,
            "set_up": {k: list(v) for k, v in report.set_up.items()},
            "review_cost": None
            if report.review_cost is None
            else {
                "held": [c.key for c in report.review_cost.held],
                "held_correct": report.review_cost.held_correct,
                "held_incorrect": report.review_cost.held_incorrect,
                "confusion_without": report.review_cost.matrix_without,
                "metrics_without": report.review_cost.metrics_without,
            },
        },
    )


def write_figures(out: Path, report: PodReport) -> list[Path]:
    """The WPC envelope (when there is one) and the effort table, as PNG files in ``out``."""
    written = []
    if report.envelope:
        path = out / "wpc_envelope.png"
        plot_wpc_envelope(report.envelope, report.metrics, report.intervals, path)
        written.append(path)
    path = out / "effort.png"
    plot_effort_table(report.effort, path)
    return [*written, path]
