"""The readable and machine-readable outputs of ``bench swt``: its report sections and the CSV."""

from __future__ import annotations

import csv
from collections.abc import Mapping, Sequence
from pathlib import Path

from reprobot.bench.run.executor import Done, Timing
from reprobot.bench.run.provenance import Provenance, provenance_markdown
from reprobot.bench.run.report import Section
from reprobot.bench.swt.metrics import InstanceScore, TableRow, table_row
from reprobot.bench.swt.results import InstanceEntry

# Published rows of SWT-Bench Lite (Mündler et al., Table 2 and the leaderboard), for comparison.
PAPER_ROWS: dict[str, dict[str, float]] = {
    "ZeroShotPlus (GPT-4)": {"S": 9.4, "dC_all": 21.5},
    "LIBRO (GPT-4)": {"S": 14.1, "dC_all": 23.8},
    "SWE-Agent+ (GPT-4)": {"S": 18.5},
}
COLUMNS = ("W", "S", "F->x", "F->P", "P->P", "dC_all", "dC_succeeded", "dC_not_succeeded")


def rows(scores: Sequence[InstanceScore]) -> dict[str, TableRow]:
    """The aggregate rows: every instance, and those SWT-Bench keeps."""
    kept = [s for s in scores if not s.excluded]
    out = {"all instances": table_row(scores)}
    if len(kept) != len(scores):
        out["without SWT-Bench's excluded ids"] = table_row(kept)
    return out


def _pct(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def write_csv(path: Path, scores: Sequence[InstanceScore]) -> None:
    records = [s.row() for s in scores]
    fields: list[str] = []
    for record in records:
        fields += [k for k in record if k not in fields]
    with open(path, "w", newline="", encoding="utf-8") as fh:
        writer = csv.DictWriter(fh, fieldnames=fields)
        writer.writeheader()
        writer.writerows(records)


def markdown(
    header: Provenance,
    model: str,
    scores: Sequence[InstanceScore],
    timing: Timing,
    peak_mb: float,
    skipped: int = 0,
) -> str:
    lines = [f"# SWT-Bench evaluation: {model}", "", *provenance_markdown(header), ""]
    lines += [
        f"{timing.sentence()}; peak memory of the harness process {peak_mb:.0f} MiB "
        "(each sandbox is held to its own memory limit).",
        "",
        *_exclusion_note(header, scores),
        *_skipped_note(skipped),
        "| rows | n | " + " | ".join(COLUMNS) + " |",
        "|---|---|" + "---|" * len(COLUMNS),
    ]
    for name, row in rows(scores).items():
        values = row.to_json()
        cells = " | ".join(_pct(values[c]) for c in COLUMNS)
        lines.append(f"| {name} | {row.instances} | {cells} |")
    for name, paper in PAPER_ROWS.items():
        cells = " | ".join(_pct(paper.get(c)) for c in COLUMNS)
        lines.append(f"| paper: {name} | 276 | {cells} |")
    lines += [
        "",
        "Percentages. W: the prediction applies; S: success (more F→P tests than the existing "
        "tests, no new failing test); F→×: adds a test failing on R; F→P: adds an F→P test; "
        "P→P: adds tests that pass on both sides only; ΔC: the share of the golden fix's "
        "executable lines the prediction's own tests execute (mean over instances with "
        "executable lines; succeeded and not-succeeded instances apart).",
        "",
        "## Per instance",
        "",
        "| instance | W | S | F→× | F→P | P→P | ΔC | executable | problems |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for s in scores:
        mark = " (excluded)" if s.excluded else ""
        ratio = s.delta.ratio
        marks = [
            _yes(s.flags.applied),
            _yes(s.flags.success),
            _yes(s.flags.fail_any),
            _yes(s.flags.fail_to_pass),
            _yes(s.flags.pass_only),
            "–" if ratio is None else f"{100 * ratio:.0f}%",
            str(s.delta.executable),
            (s.error or "").replace("|", "\\|")[:200],
        ]
        lines.append(f"| {s.instance_id}{mark} | " + " | ".join(marks) + " |")
    return "\n".join(lines) + "\n"


def _exclusion_note(header: Provenance, scores: Sequence[InstanceScore]) -> list[str]:
    """Which of SWT-Bench's excluded ids the rows leave out, or that no list was found."""
    missing = header.missing.get("excluded")
    if missing is not None:
        return [
            f"No SWT-Bench exclusion list at `{missing}`: no instance is excluded, so the row "
            "without excluded ids is the same as the row of all instances.",
            "",
        ]
    excluded = sum(s.excluded for s in scores)
    return [f"{excluded} of {len(scores)} instances are on SWT-Bench's exclusion list.", ""]


def _skipped_note(skipped: int) -> list[str]:
    if not skipped:
        return []
    return [
        f"{skipped} instance(s) with an empty prediction were not run (`--skip-empty`): they "
        "count as not applied in W, S and the F columns; ΔC averages over the instances that "
        "ran.",
        "",
    ]


def _yes(value: bool) -> str:
    return "✓" if value else "·"


def main_section(
    header: Provenance,
    model: str,
    scores: Sequence[InstanceScore],
    results: Mapping[str, InstanceEntry],
    timing: Timing,
    peak_mb: float,
) -> Section:
    """The run's rows, per-instance marks and details."""
    skipped = sum(isinstance(r, Done) and r.record.skipped for r in results.values())
    return Section(
        markdown(header, model, scores, timing, peak_mb, skipped),
        {
            **header.to_json(),
            "model": model,
            "wall_s": round(timing.this_run_s, 1),
            "wall_s_all_runs": round(timing.total_s, 1),
            "runs": timing.runs,
            "peak_rss_mb": peak_mb,
            "rows": {name: row.to_json() for name, row in rows(scores).items()},
            "skipped_empty": skipped,
            "paper_rows": PAPER_ROWS,
            "instances": [s.row() for s in scores],
            "details": {key: entry.to_json() for key, entry in results.items()},
        },
    )
