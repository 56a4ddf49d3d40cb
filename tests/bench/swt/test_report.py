"""The SWT-Bench report's words: timing of resumed runs and the exclusion list, found or not."""

from __future__ import annotations

from pathlib import Path

from reprobot.bench.run.executor import Timing
from reprobot.bench.run.provenance import provenance
from reprobot.bench.swt.metrics import CoverageDelta, Flags, InstanceScore
from reprobot.bench.swt.report import markdown

SCORES = [
    InstanceScore("a__b-1", Flags(True, True, True, True, False), CoverageDelta(4, 3)),
    InstanceScore(
        "a__b-2", Flags(True, False, False, False, False), CoverageDelta(2, 0), excluded=True
    ),
]


def test_a_missing_exclusion_list_is_stated(tmp_path: Path) -> None:
    absent = tmp_path / "swtbench_excluded_lite.txt"
    header = provenance({"excluded": absent}, ["reprobot", "bench", "swt"])
    text = markdown(header, "gold", SCORES[:1], Timing(12.0, 12.0, 1), 50.0)
    assert f"No SWT-Bench exclusion list at `{absent}`: no instance is excluded" in text
    assert f"- excluded: none (`{absent}` does not exist)" in text
    assert "Wall time 12.0 s;" in text


def test_a_found_exclusion_list_is_counted_and_resumed_runs_give_the_total(
    tmp_path: Path,
) -> None:
    listed = tmp_path / "swtbench_excluded_lite.txt"
    listed.write_text("a__b-2\n", encoding="utf-8")
    header = provenance({"excluded": listed}, ["reprobot", "bench", "swt"])
    text = markdown(header, "gold", SCORES, Timing(60.0, 3700.0, 3), 50.0)
    assert "1 of 2 instances are on SWT-Bench's exclusion list." in text
    assert "No SWT-Bench exclusion list" not in text
    assert "Wall time 1 min 00 s for this run, 1 h 01 min over the 3 runs into this folder" in text
