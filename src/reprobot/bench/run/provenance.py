"""What a benchmark report was computed from: input file hashes, Reprobot's version, the date."""

from __future__ import annotations

import functools
import hashlib
import json
import platform
import sys
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from reprobot import __version__


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def text_sha256(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


@functools.cache
def code_sha256() -> str:
    """A hash of Reprobot's own source: a stored result made by other code is not reused."""
    root = Path(__file__).resolve().parents[2]  # src/reprobot
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(path.relative_to(root).as_posix().encode() + b"\0")
        digest.update(path.read_bytes())
    return digest.hexdigest()


def fingerprint(*parts: Any) -> str:
    """A short stable hash of JSON-serialisable parts (what makes a stored result reusable)."""
    blob = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


@dataclass(frozen=True)
class InputFile:
    """An input file of a report, by its path and SHA-256."""

    path: str
    sha256: str


@dataclass(frozen=True)
class Provenance:
    """The header of a report: every input file with its SHA-256, version, date and command."""

    reprobot_version: str
    reprobot_code: str
    date: str
    python: str
    platform: str
    command: tuple[str, ...]
    inputs: Mapping[str, InputFile]
    # Inputs that were looked for and not found are facts of the report too.
    missing: Mapping[str, str]
    # What a command adds to its header (workers, limits, ...), JSON-ready: report.json's entries
    # as the command gives them.
    extra: Mapping[str, Any] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: the header's entries of report.json, in this order.
        return {
            "reprobot_version": self.reprobot_version,
            "reprobot_code": self.reprobot_code,
            "date": self.date,
            "python": self.python,
            "platform": self.platform,
            "command": list(self.command),
            "inputs": {
                name: {"path": f.path, "sha256": f.sha256} for name, f in self.inputs.items()
            },
            "missing": dict(self.missing),
            **self.extra,
        }


def provenance(
    inputs: Mapping[str, Path | None], argv: Sequence[str], extra: Mapping[str, Any] | None = None
) -> Provenance:
    """The header of a report on ``inputs`` (None: an input not given), made by ``argv``."""
    return Provenance(
        reprobot_version=__version__,
        reprobot_code=code_sha256(),
        date=datetime.now(UTC).isoformat(timespec="seconds"),
        python=sys.version.split()[0],
        platform=platform.platform(),
        command=tuple(argv),
        inputs={
            name: InputFile(str(path), file_sha256(path))
            for name, path in inputs.items()
            if path is not None and path.is_file()
        },
        missing={
            name: str(path)
            for name, path in inputs.items()
            if path is not None and not path.is_file()
        },
        extra=dict(extra or {}),
    )


def provenance_markdown(header: Provenance) -> list[str]:
    """The provenance header as markdown lines."""
    lines = [
        f"- Reprobot {header.reprobot_version} "
        f"(code `{header.reprobot_code[:12]}`), {header.date}, "
        f"Python {header.python} on {header.platform}",
        f"- Command: `{' '.join(header.command)}`",
    ]
    for name, info in header.inputs.items():
        lines.append(f"- {name}: `{info.path}` (sha256 `{info.sha256[:16]}…`)")
    for name, path in header.missing.items():
        lines.append(f"- {name}: none (`{path}` does not exist)")
    return lines
