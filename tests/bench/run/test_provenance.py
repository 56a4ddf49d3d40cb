"""Report provenance: hashes, fingerprints, the header and its markdown, and the code hash."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path

from reprobot import __version__
from reprobot.bench.run.provenance import (
    code_sha256,
    file_sha256,
    fingerprint,
    provenance,
    provenance_markdown,
    text_sha256,
)


def test_file_sha256_matches_hashlib(tmp_path: Path) -> None:
    # Larger than the 1 MiB read chunk, and not a multiple of it.
    data = bytes(range(256)) * 9000 + b"tail"
    path = tmp_path / "big.bin"
    path.write_bytes(data)
    assert file_sha256(path) == hashlib.sha256(data).hexdigest()
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    assert file_sha256(empty) == hashlib.sha256(b"").hexdigest()


def test_text_sha256_matches_hashlib() -> None:
    assert text_sha256("héllo") == hashlib.sha256("héllo".encode()).hexdigest()
    # A lone surrogate (undecodable input read with surrogateescape) is hashed as its byte.
    assert text_sha256("a\udcff") == hashlib.sha256(b"a\xff").hexdigest()


def test_fingerprint_is_short_stable_and_order_sensitive() -> None:
    fp = fingerprint("instance", {"a": 1, "b": [1, 2]}, 3)
    assert fp == fingerprint("instance", {"a": 1, "b": [1, 2]}, 3)
    assert len(fp) == 16
    assert int(fp, 16) >= 0  # hexadecimal
    # Positional parts are ordered; mapping keys are not.
    assert fingerprint("a", "b") != fingerprint("b", "a")
    assert fingerprint({"x": 1, "y": 2}) == fingerprint({"y": 2, "x": 1})
    assert fingerprint("a") != fingerprint("a", None)
    assert fingerprint([1, 2]) != fingerprint([2, 1])
    # What JSON cannot hold is hashed as its string.
    assert fingerprint(Path("p/q")) == fingerprint("p/q")
    # The fingerprint is the head of the SHA-256 of the JSON list of the parts.
    expected = hashlib.sha256(json.dumps(["a", 1]).encode()).hexdigest()[:16]
    assert fingerprint("a", 1) == expected


def test_provenance_hashes_existing_files_and_names_missing_ones(tmp_path: Path) -> None:
    instances = tmp_path / "instances.jsonl"
    instances.write_text('{"instance_id": "x"}\n', encoding="utf-8")
    before = datetime.now(UTC).replace(microsecond=0)
    record = provenance(
        {
            "instances": instances,
            "predictions": None,
            "candidates": tmp_path / "absent.jsonl",
            "folder": tmp_path,  # not a file
        },
        ("reprobot", "bench", "swt", "--workers", "2"),
        extra={"workers": 2},
    )
    after = datetime.now(UTC)
    header = record.to_json()
    assert header["inputs"] == {
        "instances": {"path": str(instances), "sha256": file_sha256(instances)}
    }
    # A path looked for and not found is named as missing; a folder is not an input file either.
    assert header["missing"] == {
        "candidates": str(tmp_path / "absent.jsonl"),
        "folder": str(tmp_path),
    }
    assert "- candidates: none (`" + str(tmp_path / "absent.jsonl") + "` does not exist)" in (
        provenance_markdown(record)
    )
    assert header["reprobot_version"] == __version__
    assert header["command"] == ["reprobot", "bench", "swt", "--workers", "2"]
    assert header["python"] == sys.version.split()[0]
    assert header["platform"]
    assert header["workers"] == 2
    date = datetime.fromisoformat(header["date"])
    assert date.utcoffset() == timedelta(0)
    assert before <= date <= after
    assert header["reprobot_code"] == code_sha256()
    # The entries of report.json, in the order it has them.
    assert list(header) == [
        "reprobot_version",
        "reprobot_code",
        "date",
        "python",
        "platform",
        "command",
        "inputs",
        "missing",
        "workers",
    ]
    json.dumps(header)  # a report header must serialise


def test_provenance_markdown(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("x", encoding="utf-8")
    header = provenance({"predictions": path}, ["reprobot", "bench"])
    lines = provenance_markdown(header)
    code = code_sha256()[:12]
    assert lines[0].startswith(f"- Reprobot {__version__} (code `{code}`), {header.date}, Python ")
    assert lines[1] == "- Command: `reprobot bench`"
    assert lines[2] == f"- predictions: `{path}` (sha256 `{file_sha256(path)[:16]}…`)"
    assert len(lines) == 3


def test_the_code_hash_covers_reprobots_own_source() -> None:
    import reprobot

    assert re.fullmatch(r"[0-9a-f]{64}", code_sha256())
    package = Path(reprobot.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    assert code_sha256() == digest.hexdigest()
