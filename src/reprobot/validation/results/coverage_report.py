"""Line coverage per file from coverage.py's JSON report, and per-line test contexts.

Both files come out of a sandbox that ran untrusted code: anything that is not the shape
coverage.py writes is a ``CoverageDataError``, never another exception.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import replace
from typing import Any

from reprobot.errors import ReprobotError
from reprobot.validation.results.testrun import FileCoverage

# Far more than any source file has lines; a number past it is not a line.
MAX_LINE = 10_000_000


class CoverageDataError(ReprobotError):
    """Coverage data that is not what coverage.py writes."""


def _load(data: bytes, what: str) -> Mapping[str, Any]:
    try:
        document = json.loads(data)
    except (ValueError, RecursionError) as exc:
        raise CoverageDataError(f"{what} is not JSON") from exc
    if not isinstance(document, dict):
        raise CoverageDataError(f"{what} is not an object")
    return document


def _mapping(value: Any, what: str) -> Mapping[str, Any]:
    if not isinstance(value, dict):
        raise CoverageDataError(f"{what} is not an object")
    return value


def _lines(values: Any, what: str) -> frozenset[int]:
    if not isinstance(values, list):
        raise CoverageDataError(f"{what} is not a list")
    lines = set()
    for value in values:
        # coverage.py counts an empty module as having run line 0.
        if type(value) is not int or not 0 <= value <= MAX_LINE:
            raise CoverageDataError(f"{what} holds {value!r}, which is not a line number")
        lines.add(value)
    return frozenset(lines)


def _relative(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path


def parse_coverage_json(data: bytes, root: str) -> dict[str, FileCoverage]:
    """Map repository-relative paths to their statements and executed lines.

    Statements are executed plus missing lines: what coverage.py counts as executable.
    """
    files = _mapping(_load(data, "coverage.json").get("files", {}), "coverage.json's files")
    prefix = root.rstrip("/") + "/"
    result: dict[str, FileCoverage] = {}
    for path, value in files.items():
        where = f"coverage of {path[:200]!r}"
        info = _mapping(value, where)
        executed = _lines(info.get("executed_lines", []), where)
        missing = _lines(info.get("missing_lines", []), where)
        result[_relative(path, prefix)] = FileCoverage(
            statements=executed | missing, executed=executed
        )
    return result


def parse_contexts_json(data: bytes, root: str) -> dict[str, dict[int, frozenset[str]]]:
    """Per file and line, the test functions that ran it (the runner's ``contexts.json``)."""
    document = _load(data, "contexts.json")
    labels_value = document.get("contexts", [])
    if not isinstance(labels_value, list) or not all(isinstance(x, str) for x in labels_value):
        raise CoverageDataError("contexts.json's contexts are not a list of names")
    labels: list[str] = labels_value
    prefix = root.rstrip("/") + "/"
    result: dict[str, dict[int, frozenset[str]]] = {}
    for path, lines in _mapping(document.get("files", {}), "contexts.json's files").items():
        per_line: dict[int, frozenset[str]] = {}
        for line, ids in _mapping(lines, f"contexts of {path[:200]!r}").items():
            if not line.isdigit() or not 0 <= int(line) <= MAX_LINE or not isinstance(ids, list):
                raise CoverageDataError(f"contexts of {path[:200]!r} hold a bad line {line!r}")
            per_line[int(line)] = frozenset(
                labels[i] for i in ids if type(i) is int and 0 <= i < len(labels)
            )
        result[_relative(path, prefix)] = per_line
    return result


def with_contexts(
    coverage: dict[str, FileCoverage], contexts: dict[str, dict[int, frozenset[str]]]
) -> dict[str, FileCoverage]:
    """``coverage`` with each file's per-line contexts filled in."""
    return {
        path: replace(fc, contexts=contexts.get(path, {})) if path in contexts else fc
        for path, fc in coverage.items()
    }
