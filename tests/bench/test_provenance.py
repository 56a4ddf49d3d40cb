"""Report provenance (hashes, fingerprints, the header) and test-patch predictions."""

from __future__ import annotations

import hashlib
import json
import re
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from reprobot import __version__
from reprobot.bench.dataset import DatasetError, Instance
from reprobot.bench.predictions import (
    GOLD,
    Prediction,
    gold_predictions,
    load_predictions,
)
from reprobot.bench.provenance import (
    code_sha256,
    file_sha256,
    fingerprint,
    provenance,
    provenance_markdown,
    text_sha256,
)

# --- hashes and fingerprints --------------------------------------------------------------------


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
    header = provenance(
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
    assert header["inputs"] == {
        "instances": {"path": str(instances), "sha256": file_sha256(instances)}
    }
    # A path looked for and not found is named as missing; a folder is not an input file either.
    assert header["missing"] == {
        "candidates": str(tmp_path / "absent.jsonl"),
        "folder": str(tmp_path),
    }
    assert "- candidates: none (`" + str(tmp_path / "absent.jsonl") + "` does not exist)" in (
        provenance_markdown(header)
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
    assert set(header) == {
        "reprobot_version",
        "reprobot_code",
        "date",
        "python",
        "platform",
        "command",
        "inputs",
        "missing",
        "workers",
    }
    json.dumps(header)  # a report header must serialise


def test_provenance_markdown(tmp_path: Path) -> None:
    path = tmp_path / "p.jsonl"
    path.write_text("x", encoding="utf-8")
    header = provenance({"predictions": path}, ["reprobot", "bench"])
    lines = provenance_markdown(header)
    code = code_sha256()[:12]
    assert lines[0].startswith(
        f"- Reprobot {__version__} (code `{code}`), {header['date']}, Python "
    )
    assert lines[1] == "- Command: `reprobot bench`"
    assert lines[2] == f"- predictions: `{path}` (sha256 `{file_sha256(path)[:16]}…`)"
    assert len(lines) == 3


# --- predictions --------------------------------------------------------------------------------


def write_lines(path: Path, records: list[Any]) -> Path:
    path.write_text(
        "\n".join(r if isinstance(r, str) else json.dumps(r) for r in records) + "\n",
        encoding="utf-8",
    )
    return path


def test_load_predictions(tmp_path: Path) -> None:
    path = write_lines(
        tmp_path / "preds.jsonl",
        [
            {"instance_id": "a", "model_name_or_path": "m1", "model_patch": "first"},
            {"instance_id": "b", "model_name_or_path": "m1", "model_patch": None},
            "   ",
            {"instance_id": "a", "model_name_or_path": "m2", "model_patch": "second"},
            {"instance_id": 3},
            {"instance_id": "c", "model_patch": {"not": "a string"}},
        ],
    )
    assert load_predictions(path) == {
        # A later line for the same instance wins.
        "a": Prediction("a", "m2", "second"),
        # A null patch is an empty prediction.
        "b": Prediction("b", "m1", ""),
        # No model: "unknown"; no patch: empty; the id is made a string.
        "3": Prediction("3", "unknown", ""),
        "c": Prediction("c", "unknown", ""),
    }


def test_load_predictions_needs_an_instance_id(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", [{"instance_id": "a"}, {"model_patch": "x"}])
    with pytest.raises(DatasetError, match=r"p\.jsonl:2: a prediction needs an instance_id"):
        load_predictions(path)


def test_load_predictions_rejects_a_line_that_is_not_an_object(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", ['["a"]'])
    with pytest.raises(DatasetError, match="needs an instance_id"):
        load_predictions(path)


def test_load_predictions_rejects_a_line_that_is_not_json(tmp_path: Path) -> None:
    path = write_lines(tmp_path / "p.jsonl", [{"instance_id": "a"}, "{"])
    with pytest.raises(DatasetError, match=r"p\.jsonl:2: not JSON"):
        load_predictions(path)


def test_load_predictions_of_an_empty_file(tmp_path: Path) -> None:
    path = tmp_path / "empty.jsonl"
    path.write_text("", encoding="utf-8")
    assert load_predictions(path) == {}


def instance(instance_id: str, test_patch: str) -> Instance:
    return Instance(
        instance_id=instance_id,
        repo="acme/widgets",
        base_commit="a" * 40,
        environment_setup_commit="a" * 40,
        version="1.0",
        patch="fix",
        test_patch=test_patch,
        fail_to_pass=("t::a",),
        pass_to_pass=(),
    )


def test_gold_predictions() -> None:
    got = gold_predictions([instance("i-1", "tests one"), instance("i-2", "tests two")])
    assert got == {
        "i-1": Prediction("i-1", GOLD, "tests one"),
        "i-2": Prediction("i-2", GOLD, "tests two"),
    }
    assert GOLD == "gold"
    assert gold_predictions([]) == {}


def test_the_code_hash_covers_reprobots_own_source() -> None:
    import reprobot

    assert re.fullmatch(r"[0-9a-f]{64}", code_sha256())
    package = Path(reprobot.__file__).parent
    digest = hashlib.sha256()
    for path in sorted(package.rglob("*.py")):
        digest.update(path.relative_to(package).as_posix().encode() + b"\0" + path.read_bytes())
    assert code_sha256() == digest.hexdigest()
