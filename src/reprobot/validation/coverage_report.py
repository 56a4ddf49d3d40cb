"""Line coverage per file from coverage.py's JSON report."""

from __future__ import annotations

import json

from reprobot.validation.testrun import FileCoverage


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
