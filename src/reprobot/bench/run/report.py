"""A benchmark's report kept as data until the end: sections, each a piece of the readable
report and the entries it adds to the machine-readable one, rendered once into report.md and
report.json."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


@dataclass(frozen=True)
class Section:
    """Markdown for report.md and the entries it contributes to report.json."""

    markdown: str
    # The JSON boundary: report.json's entries, as each section's records write them.
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class Written:
    """The files a report went to, and its markdown (what the command prints)."""

    paths: dict[str, Path]
    markdown: str


def write_report(out: Path, sections: Sequence[Section]) -> Written:
    """Render ``sections`` into ``out``/report.md and ``out``/report.json.

    Two sections giving the same JSON entry is a programming error, not a merge."""
    document: dict[str, Any] = {}
    for section in sections:
        clash = set(document) & set(section.data)
        if clash:
            raise ValueError(f"two report sections give {sorted(clash)}")
        document.update(section.data)
    text = "\n".join(s.markdown.rstrip("\n") + "\n" for s in sections if s.markdown)
    paths = {"json": out / "report.json", "markdown": out / "report.md"}
    paths["json"].write_text(json.dumps(document, indent=1, default=str), encoding="utf-8")
    paths["markdown"].write_text(text, encoding="utf-8")
    return Written(paths, text)
