"""Host CPU spent reading hostile sandbox results, against ordinary ones of the same size.

A sandbox's JUnit report, its failure details and coverage data are written by code under test.
Reading them must cost the host time linear in their size whatever they hold: this prints the
best of several timings for each input and its ratio to an ordinary report of the same size.

    .venv/bin/python benchmarks/hostile_reports.py [--size-kb 240] [--repeat 5]
"""

from __future__ import annotations

import argparse
import functools
import json
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from rich.table import Table

from reprobot.generation.pool.failure_match import parse_failure
from reprobot.validation.results.coverage_report import CoverageDataError, parse_coverage_json
from reprobot.validation.results.junit import JUnitError, parse_junit

REPO_FILES = [f"pkg/sub{i}/mod{j}.py" for i in range(20) for j in range(20)] + [
    f"tests/test_{i}.py" for i in range(200)
]


def ordinary_junit(size: int) -> bytes:
    cases: list[str] = []
    i = 0
    while sum(len(c) for c in cases) < size:
        cases.append(
            f'<testcase classname="tests.test_{i % 200}" name="test_case_{i}" '
            f'file="tests/test_{i % 200}.py" time="0.001"/>'
        )
        i += 1
    return f"<testsuites><testsuite>{''.join(cases)}</testsuite></testsuites>".encode()


def long_dotted_name(size: int) -> bytes:
    """One test case whose class name is a dotted name as long as the whole report."""
    dotted = ".".join(["x"] * (size // 2))
    return f'<testsuite><testcase classname="{dotted}" name="t"/></testsuite>'.encode()


def many_dots_in_names(size: int) -> bytes:
    """Many cases whose names are dotted without end, none naming a file."""
    name = ".".join(["a"] * 200)
    cases: list[str] = []
    while sum(len(c) for c in cases) < size:
        cases.append(f'<testcase classname="{name}" name="t{len(cases)}"/>')
    return f"<testsuite>{''.join(cases)}</testsuite>".encode()


def entity_bomb(size: int) -> bytes:
    del size
    levels = ['<!ENTITY e0 "lol">'] + [
        f'<!ENTITY e{i} "{"".join(f"&e{i - 1};" for _ in range(10))}">' for i in range(1, 10)
    ]
    return (
        f'<?xml version="1.0"?><!DOCTYPE t [{"".join(levels)}]><testsuite>&e9;</testsuite>'.encode()
    )


def ordinary_coverage(size: int) -> bytes:
    files: dict[str, dict[str, list[int]]] = {}
    i = 0
    while len(json.dumps(files)) < size:
        files[f"/work/repo/pkg/m{i}.py"] = {
            "executed_lines": list(range(1, 60)),
            "missing_lines": list(range(60, 80)),
        }
        i += 1
    return json.dumps({"files": files}).encode()


def deep_coverage(size: int) -> bytes:
    return b"[" * size


def ordinary_failure(size: int) -> bytes:
    """A unittest failure detail: a traceback of ordinary frames, then the assertion."""
    frame = '  File "/work/repo/pkg/mod.py", line 12, in check\n    assert value == 2\n'
    return (
        "AssertionError: boom\nTraceback (most recent call last):\n" + frame * (size // len(frame))
    ).encode()


def unclosed_frames(size: int) -> bytes:
    """Frame lines whose quoted path never closes: what a test can print to mislead a reader."""
    line = 'File "' + "a.py" * 50 + "\n"
    return ("AssertionError: boom\n" + line * (size // len(line))).encode()


def best(work: Callable[[], object], repeat: int) -> tuple[float, str]:
    times = []
    outcome = "parsed"
    for _ in range(repeat):
        started = time.perf_counter()
        try:
            work()
        except (JUnitError, CoverageDataError) as exc:
            outcome = f"refused: {type(exc).__name__}"
        times.append(time.perf_counter() - started)
    return min(times), outcome


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--size-kb", type=int, default=240)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    size = args.size_kb * 1024
    junit_cases = {
        "ordinary JUnit": ordinary_junit(size),
        "one long dotted class name": long_dotted_name(size),
        "many long dotted names": many_dots_in_names(size),
        "entity expansion": entity_bomb(size),
    }
    failure_cases = {
        "ordinary failure detail": ordinary_failure(size),
        "unclosed traceback frames": unclosed_frames(size),
    }
    coverage_cases = {
        "ordinary coverage JSON": ordinary_coverage(size),
        "deeply nested JSON": deep_coverage(size),
    }
    table = Table(title=f"host CPU per report (~{args.size_kb} KiB each, best of {args.repeat})")
    for column in ("input", "bytes", "seconds", "vs ordinary", "outcome"):
        table.add_column(column)
    parsers: list[tuple[dict[str, bytes], Callable[[bytes], Any]]] = [
        (junit_cases, lambda d: parse_junit(d, REPO_FILES)),
        (coverage_cases, lambda d: parse_coverage_json(d, "/work/repo")),
        (failure_cases, lambda d: parse_failure(d.decode())),
    ]
    for cases, parse in parsers:
        base = 0.0
        for name, data in cases.items():
            seconds, outcome = best(functools.partial(parse, data), args.repeat)
            base = base or seconds
            ratio = f"{seconds / base:.2f}"
            table.add_row(name, str(len(data)), f"{seconds:.4f}", ratio, outcome)
    Console(width=120).print(table)


if __name__ == "__main__":
    main()
