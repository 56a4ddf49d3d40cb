"""Test-patch predictions in SWT-Bench's JSON-lines format, or the golden tests as predictions."""

from __future__ import annotations

import json
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from reprobot.bench.data.instances import DatasetError, Instance
from reprobot.validation import Patch, test_modules

GOLD = "gold"
REPROBOT = "reprobot"


@dataclass(frozen=True)
class Prediction:
    """A test patch proposed for one instance (``model_patch``), and who proposed it."""

    instance_id: str
    model: str
    patch: str


def load_predictions(path: Path) -> dict[str, Prediction]:
    """Predictions by instance id from a JSON-lines file (``instance_id``,
    ``model_name_or_path``, ``model_patch``); a later line for the same instance wins."""
    out: dict[str, Prediction] = {}
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as exc:
            raise DatasetError(f"{path}:{number}: not JSON") from exc
        if not isinstance(record, dict) or "instance_id" not in record:
            raise DatasetError(f"{path}:{number}: a prediction needs an instance_id")
        patch = record.get("model_patch")
        out[str(record["instance_id"])] = Prediction(
            instance_id=str(record["instance_id"]),
            model=str(record.get("model_name_or_path") or "unknown"),
            # A missing or null patch is a prediction that produced nothing: it does not apply.
            patch=patch if isinstance(patch, str) else "",
        )
    return out


def gold_predictions(instances: Iterable[Instance]) -> dict[str, Prediction]:
    """Each instance's golden test patch as its prediction."""
    return {i.instance_id: Prediction(i.instance_id, GOLD, i.test_patch) for i in instances}


def prediction_files(patch: Patch) -> list[str]:
    """The test modules a predicted test patch touches (its Python files when none looks like a
    test module, so that a reproduction script placed elsewhere still runs)."""
    return test_modules(patch) or [f for f in patch.files if f.endswith(".py")]
