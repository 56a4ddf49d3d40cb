"""Line coverage per file from coverage.py's JSON report."""

from __future__ import annotations

import json
from dataclasses import replace

from reprobot.validation.results.testrun import FileCoverage


def parse_coverage_json(data: bytes, root: str) -> dict[str, FileCoverage]:
    """Map repository-relative paths to their statements and executed lines.

    Statements are executed plus missing lines: what coverage.py counts as executable.
    """
    report = json.loads(data)
    prefix = root.rstrip("/") + "/"
    result: dict[str, FileCoverage] = {}
    for path, info in report.get("files", {}).items():
        rel = path[len(prefix) :] if path.startswith(prefix) else path
        executed = frozenset(int(n) for n in info.get("executed_lines", []))
        missing = frozenset(int(n) for n in info.get("missing_lines", []))
        result[rel] = FileCoverage(statements=executed | missing, executed=executed)
    return result


def parse_contexts_json(data: bytes, root: str) -> dict[str, dict[int, frozenset[str]]]:
    """Per file and line, the test functions that ran it (the runner's ``contexts.json``)."""
    report = json.loads(data)
    labels = [str(label) for label in report.get("contexts", [])]
    prefix = root.rstrip("/") + "/"
    result: dict[str, dict[int, frozenset[str]]] = {}
    for path, lines in report.get("files", {}).items():
        rel = path[len(prefix) :] if path.startswith(prefix) else path
        result[rel] = {
            int(line): frozenset(labels[i] for i in ids if 0 <= i < len(labels))
            for line, ids in lines.items()
        }
    return result


def with_contexts(
    coverage: dict[str, FileCoverage], contexts: dict[str, dict[int, frozenset[str]]]
) -> dict[str, FileCoverage]:
    """``coverage`` with each file's per-line contexts filled in."""
    return {
        path: replace(fc, contexts=contexts.get(path, {})) if path in contexts else fc
        for path, fc in coverage.items()
    }
