"""Test-patch predictions in SWT-Bench's format, and the golden tests as predictions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from reprobot.bench.data.instances import DatasetError, Instance
from reprobot.bench.data.predictions import GOLD, Prediction, gold_predictions, load_predictions


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
