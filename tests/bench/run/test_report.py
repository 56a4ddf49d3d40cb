"""A benchmark's report is written once from its sections: the markdown in their order, the JSON
entries of all of them, and a clash between two sections is an error, not a silent overwrite."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reprobot.bench.run.report import Section, write_report


def test_sections_are_rendered_once_in_order(tmp_path: Path) -> None:
    written = write_report(
        tmp_path,
        [
            Section("# Title\n\nrows\n", {"rows": [1, 2]}),
            Section(""),
            Section("## Environments", {"environments": {"images": 3}}),
        ],
    )
    assert written.markdown == "# Title\n\nrows\n\n## Environments\n"
    assert (tmp_path / "report.md").read_text(encoding="utf-8") == written.markdown
    document = json.loads((tmp_path / "report.json").read_text(encoding="utf-8"))
    assert document == {"rows": [1, 2], "environments": {"images": 3}}
    assert written.paths == {"json": tmp_path / "report.json", "markdown": tmp_path / "report.md"}


def test_two_sections_giving_one_entry_is_an_error(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="rows"):
        write_report(tmp_path, [Section("a", {"rows": 1}), Section("b", {"rows": 2})])
    assert not (tmp_path / "report.json").exists()
