"""Figures for the fix-filter report: the WPC envelope against our metrics, and the effort table.

Figures are drawn on ``matplotlib.figure.Figure`` objects with an Agg canvas of their own, so no
pyplot state or interactive backend is involved and the functions are safe to call from workers.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from reprobot.bench.pod.inspection import IssueEffort

if TYPE_CHECKING:
    from matplotlib.figure import Figure

DPI = 120

# Row colours of the effort table, by how the filter compares with random selection at 95 %.
_VERSUS_COLOURS = {
    "better": "#d9f2d9",
    "worse": "#f8d7d7",
    "same": "#ffffff",
    "n/a": "#eeeeee",
}
_HEADER_COLOUR = "#dddddd"

EFFORT_COLUMNS = (
    "issue",
    "patches",
    "correct",
    "accepted (correct)",
    "weak (correct)",
    "filter 85/95",
    "RS-85/95",
    "expected filter/random",
)


def _new_figure(**kwargs: object) -> Figure:
    # matplotlib is imported only when a figure is drawn: the command line (and the App's
    # server) should not pay its import time and memory otherwise.
    from matplotlib.figure import Figure

    return Figure(**kwargs)  # type: ignore[arg-type]


def _save(figure: Figure, path: Path) -> Path:
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(figure)  # attaches itself to the figure; savefig then renders with Agg
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=DPI, format="png")
    return path


def plot_wpc_envelope(
    envelope: list[tuple[float, dict[str, float]]],
    ours: Mapping[str, float],
    intervals: Mapping[str, tuple[float, float]],
    path: Path,
    metrics: Sequence[str] = ("mcc", "precision", "recall", "f1", "accuracy"),
) -> Path:
    """Write a PNG with one line per metric of the WPC over p, our value of that metric as a
    dashed horizontal line of the same colour and its bootstrap interval as a shaded band.
    Metrics missing from ``ours`` or ``intervals`` get no line or band. Returns ``path``."""
    figure = _new_figure(figsize=(10, 5), layout="constrained")
    axes = figure.add_subplot()
    ps = [p for p, _ in envelope]
    for index, metric in enumerate(metrics):
        colour = f"C{index % 10}"
        axes.plot(
            ps, [values[metric] for _, values in envelope], color=colour, label=f"WPC {metric}"
        )
        if metric in intervals:
            lower, upper = intervals[metric]
            axes.axhspan(lower, upper, color=colour, alpha=0.12, linewidth=0)
        if metric in ours:
            axes.axhline(
                ours[metric],
                color=colour,
                linestyle="--",
                label=f"filter {metric} = {ours[metric]:.3f}",
            )
    if ps:
        axes.set_xlim(min(ps), max(ps))
    axes.set_xlabel("WPC: probability p of labelling a patch right")
    axes.set_ylabel("metric value")
    axes.set_title("Fix filter against the weighted-probability classifier (bands: bootstrap CI)")
    axes.grid(visible=True, alpha=0.3)
    # Outside the axes: inside, it would hide the lines and bands near the top-left corner.
    figure.legend(loc="outside right upper", fontsize="small")
    return _save(figure, path)


def _dash(value: int | float | None) -> str:
    if value is None:
        return "–"
    return f"{value:.2f}" if isinstance(value, float) else str(value)


def _effort_cells(row: IssueEffort) -> list[str]:
    return [
        row.issue,
        str(row.patches),
        str(row.correct),
        f"{row.accepted} ({row.accepted_correct})",
        f"{row.weak} ({row.weak_correct})",
        f"{_dash(row.filter85)}/{_dash(row.filter95)}",
        f"{_dash(row.rs85)}/{_dash(row.rs95)}",
        f"{_dash(row.expected_filter)}/{_dash(row.expected_random)}",
    ]


def plot_effort_table(rows: Sequence[IssueEffort], path: Path) -> Path:
    """Write a PNG table of the per-issue effort, one row per issue, coloured by
    ``versus_rs(0.95)`` (green better, red worse, white same, grey n/a). Returns ``path``."""
    width = len(EFFORT_COLUMNS)
    body = [_effort_cells(row) for row in rows]
    colours = [[_VERSUS_COLOURS[row.versus_rs(0.95)]] * width for row in rows]
    if not body:
        # matplotlib cannot draw a table without body rows; say so in one instead.
        body = [["(no issues)"] + [""] * (width - 1)]
        colours = [[_VERSUS_COLOURS["n/a"]] * width]
    # Height grows with the rows so that the text stays legible however many issues there are.
    figure = _new_figure(figsize=(9, 1.0 + 0.3 * (len(body) + 1)), layout="constrained")
    axes = figure.add_subplot()
    axes.axis("off")
    table = axes.table(
        cellText=body,
        colLabels=list(EFFORT_COLUMNS),
        cellColours=colours,
        colColours=[_HEADER_COLOUR] * width,
        loc="center",
        cellLoc="center",
    )
    table.auto_set_font_size(False)
    table.set_fontsize(8)
    table.auto_set_column_width(list(range(width)))
    axes.set_title("Patches opened to find a correct one (rows: filter vs RS at 95 %)", fontsize=10)
    return _save(figure, path)
