"""SWE-bench instances as Reprobot's own type, read from a JSON-lines file (a pure conversion;
which test ids an instance names, and the tree they are resolved in, are ``test_ids``' concern)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from reprobot.errors import ReprobotError
from reprobot.validation import Patch


class DatasetError(ReprobotError):
    """A benchmark record is malformed, or names an environment the table does not have."""


@dataclass(frozen=True)
class Instance:
    """One SWE-bench instance: a repository at a base commit, the golden fix and its tests."""

    instance_id: str
    repo: str
    base_commit: str
    environment_setup_commit: str
    version: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str = ""
    hints_text: str = ""
    created_at: str = ""

    @property
    def golden_patch(self) -> Patch:
        return Patch(self.patch, name="golden.diff")

    @property
    def golden_test_patch(self) -> Patch:
        return Patch(self.test_patch, name="test.diff")

    @property
    def test_files(self) -> tuple[str, ...]:
        """The Python files the golden test patch touches."""
        return tuple(f for f in self.golden_test_patch.files if f.endswith(".py"))


def parse_id_list(value: Any) -> tuple[str, ...]:
    """A FAIL_TO_PASS / PASS_TO_PASS field: a JSON-encoded list of strings (or the list itself)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError as exc:
            raise DatasetError(f"test id list is not JSON: {value[:80]!r}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"test id list must be a list of strings, got {type(value).__name__}")
    return tuple(value)


def parse_instance(record: Mapping[str, Any]) -> Instance:
    """An ``Instance`` from one instances.jsonl record (a line's JSON)."""
    try:
        return Instance(
            instance_id=str(record["instance_id"]),
            repo=str(record["repo"]),
            base_commit=str(record["base_commit"]),
            environment_setup_commit=str(
                record.get("environment_setup_commit") or record["base_commit"]
            ),
            version=str(record["version"]),
            patch=str(record["patch"]),
            test_patch=str(record["test_patch"]),
            fail_to_pass=parse_id_list(record["FAIL_TO_PASS"]),
            pass_to_pass=parse_id_list(record.get("PASS_TO_PASS", "[]")),
            problem_statement=str(record.get("problem_statement", "")),
            hints_text=str(record.get("hints_text", "")),
            created_at=str(record.get("created_at", "")),
        )
    except KeyError as exc:
        raise DatasetError(f"instance record lacks {exc.args[0]!r}") from exc


def load_instances(path: Path) -> list[Instance]:
    """Every instance of a JSON-lines file, in file order."""
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: not JSON") from exc
            out.append(parse_instance(record))
    return out
