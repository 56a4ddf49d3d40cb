"""The report of ``bench repos``: the rows as one table, the share of repositories whose suite
works and the median cold build time, rendered once into report.md and report.json. Pure
rendering over ``Row``s; ``write_repos_report`` only hands the sections to ``run.report``."""

from __future__ import annotations

import statistics
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from reprobot.bench.repos.row import FAILING_SHARE, Row
from reprobot.bench.run.executor import Timing
from reprobot.bench.run.provenance import Provenance, provenance_markdown
from reprobot.bench.run.report import Section, Written, write_report
from reprobot.console import printable

COLUMNS = (
    "repository",
    "commit",
    "decided by",
    "Python",
    "install",
    "test command",
    "build s",
    "image MB",
    "tests run",
    "collected",
    "passed",
    "failed",
    "error",
    "skipped",
    "collection errors",
    "works",
)


@dataclass(frozen=True)
class Summary:
    """How many repositories work, how their builds went, and the median cold build time of the
    images that built (over ``timed_builds`` of them)."""

    repositories: int
    works: int
    works_share: float | None
    built: int
    built_now: int
    build_failed: int
    not_started: int
    median_build_s: float | None
    timed_builds: int

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: report.json's "summary".
        return asdict(self)


def summary(rows: Sequence[Row]) -> Summary:
    """How many repositories work, and the median cold build time of the images that built."""
    works = sum(r.works for r in rows)
    built = [r.build_s for r in rows if r.build_ok and r.build_s is not None]
    return Summary(
        repositories=len(rows),
        works=works,
        works_share=round(works / len(rows), 4) if rows else None,
        built=sum(r.build_ok for r in rows),
        built_now=sum(r.build_ok and r.built_now for r in rows),
        build_failed=sum(not r.build_ok and not r.failure for r in rows),
        not_started=sum(bool(r.failure) for r in rows),
        median_build_s=round(statistics.median(built), 1) if built else None,
        timed_builds=len(built),
    )


def _cell(text: str) -> str:
    """Text from a repository or a build as a table cell: printable, one line, no cell break."""
    return " ".join(printable(text).split()).replace("|", "\\|")


def _code(text: str) -> str:
    return f"`{_cell(text)}`" if text else "–"


def decided_by(sources: Mapping[str, str]) -> str:
    """What decided each part of the setup, as one cell (``–`` when the detector does not say)."""
    return "; ".join(f"{part}: {why}" for part, why in sources.items()) or "–"


def _build_cell(row: Row) -> str:
    if row.failure:
        return "–"
    if not row.build_ok:
        return "failed"
    if row.build_s is None:
        return "?"
    return f"{row.build_s:.0f}" + ("" if row.built_now else " (cached)")


def _install_cell(row: Row) -> str:
    text = _code(row.install)
    if row.test_requirements:
        text += f" + {len(row.test_requirements)} test requirement(s)"
    return text


def _collection_cell(row: Row) -> str:
    if not row.collection_errors:
        return "0"
    text = str(len(row.collection_errors))
    if row.missing_modules:
        text += f" (missing: {', '.join(row.missing_modules)})"
    return text


def table_row(row: Row) -> list[str]:
    ran = row.build_ok and not row.failure
    counts = [row.collected, row.passed, row.failed, row.errored, row.skipped + row.xfailed]
    return [
        _cell(row.repo),
        f"`{row.commit[:12]}`",
        _cell(decided_by(row.sources)),
        row.python or "–",
        _install_cell(row),
        _code(row.test_cmd),
        _build_cell(row),
        f"{row.size_mb:.0f}" if row.size_mb is not None else "–",
        _cell(row.selection) if ran else "–",
        *[str(n) if ran else "–" for n in counts],
        _collection_cell(row) if ran else "–",
        "**yes**" if row.works else "no",
    ]


def table_markdown(rows: Sequence[Row]) -> str:
    lines = [
        "| " + " | ".join(COLUMNS) + " |",
        "|" + "---|" * len(COLUMNS),
    ]
    lines += ["| " + " | ".join(table_row(r)) + " |" for r in rows]
    return "\n".join(lines)


def why_not_markdown(rows: Sequence[Row]) -> str:
    """Every repository that does not work, with its reasons, and a failed build's cause."""
    lines = []
    for row in rows:
        if row.works:
            continue
        reasons = "; ".join(row.why_not) or "–"
        line = f"- {_cell(row.repo)}: {_cell(reasons)}"
        if row.build_cause:
            line += f" — build: {_cell(row.build_cause)}"
        lines.append(line)
    return "\n".join(lines)


def _share(part: int, whole: int) -> str:
    return f"{part / whole:.0%}" if whole else "–"


def repos_markdown(header: Provenance, rows: Sequence[Row], timing: Timing, max_tests: int) -> str:
    facts = summary(rows)
    median = facts.median_build_s
    built_line = (
        f"median cold build {median:.0f} s over the {facts.timed_builds} images that built "
        + (
            "(all built in this run)"
            if facts.built_now == facts.timed_builds
            else f"({facts.built_now} built in this run, the others' time as recorded when "
            "they were built)"
        )
        if median is not None
        else "no image built"
    )
    bound = (
        f"the whole suite, unless the tree has more than {max_tests} test files: then only its "
        f"{max_tests} largest (the column says so)"
        if max_tests > 0
        else "the whole suite"
    )
    lines = [
        f"# First contact: {len(rows)} repositories",
        "",
        *provenance_markdown(header),
        f"- {timing.sentence()}",
        "",
        f"**Works: {facts.works} of {len(rows)} ({_share(facts.works, len(rows))})**; "
        f"{built_line}; {facts.build_failed} build(s) failed"
        + (f", {facts.not_started} not started" if facts.not_started else "")
        + ".",
        "",
        "Each repository is detected with no table and no overrides, its environment built and "
        f"its tests run once: {bound}. It works when the environment built, the run collected "
        "tests and finished, no module failed to collect for a missing module "
        "(ModuleNotFoundError or ImportError), and at most "
        f"{FAILING_SHARE:.0%} of the collected tests failed or errored. Skipped includes "
        "expected failures (xfail, xpass); build s is the image's cold build time, `(cached)` "
        "when this run found it built; image MB is its whole size, base image included.",
        "",
        table_markdown(rows),
        "",
    ]
    why = why_not_markdown(rows)
    if why:
        lines += ["## Why not", "", why, ""]
    lines += ["Each repository's log (detection, build, test run) is under `logs/`."]
    return "\n".join(lines)


def report_sections(
    header: Provenance, rows: Sequence[Row], timing: Timing, max_tests: int
) -> list[Section]:
    return [
        Section(
            repos_markdown(header, rows, timing, max_tests),
            {
                **header.to_json(),
                "max_tests": max_tests,
                "failing_share": FAILING_SHARE,
                "wall_s": round(timing.this_run_s, 1),
                "wall_s_all_runs": round(timing.total_s, 1),
                "runs": timing.runs,
                "summary": summary(rows).to_json(),
                "repositories": [r.to_json() for r in rows],
            },
        )
    ]


def write_repos_report(
    out: Path, header: Provenance, rows: Sequence[Row], timing: Timing, max_tests: int
) -> Written:
    """report.md and report.json in ``out``."""
    return write_report(out, report_sections(header, rows, timing, max_tests))
