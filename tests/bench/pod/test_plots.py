"""The fix-filter report's figures are PNG files."""

from __future__ import annotations

from pathlib import Path

from reprobot.bench.pod.bootstrap import cluster_bootstrap
from reprobot.bench.pod.classification import confusion
from reprobot.bench.pod.inspection import issue_effort
from reprobot.bench.pod.plots import plot_effort_table, plot_wpc_envelope
from reprobot.bench.pod.wpc import wpc_envelope
from tests.bench.pod.samples import bootstrap_sample, effort_sample

PNG_MAGIC = b"\x89PNG"


def test_plot_wpc_envelope_writes_png(tmp_path: Path) -> None:
    sample = bootstrap_sample()
    positives = sum(j.actual for j in sample)
    envelope = wpc_envelope(positives, len(sample) - positives)
    ours = confusion(sample).metrics()
    intervals = cluster_bootstrap(sample, resamples=100)
    path = plot_wpc_envelope(envelope, ours, intervals, tmp_path / "figs" / "wpc.png")
    assert path == tmp_path / "figs" / "wpc.png"
    assert path.read_bytes().startswith(PNG_MAGIC)


def test_plot_effort_table_writes_png(tmp_path: Path) -> None:
    rows = issue_effort(effort_sample())
    path = plot_effort_table(rows, tmp_path / "effort.png")
    assert path.stat().st_size > 0
    assert path.read_bytes().startswith(PNG_MAGIC)
    empty = plot_effort_table([], tmp_path / "empty.png")
    assert empty.read_bytes().startswith(PNG_MAGIC)
