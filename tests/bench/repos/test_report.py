"""The report of ``bench repos``: its table, the share that works, the median cold build."""

from __future__ import annotations

import json
from pathlib import Path

from reprobot.bench.repos.report import decided_by, repos_markdown, summary, write_repos_report
from reprobot.bench.repos.row import Row
from reprobot.bench.run.executor import Timing
from reprobot.bench.run.provenance import provenance

SHA = "0123456789abcdef0123456789abcdef01234567"
WORKS = Row(
    repo="o/works",
    commit=SHA,
    sources={"python": "requires-python >=3.9", "install": "tox.ini [testenv]"},
    python="3.11",
    install="python -m pip install -e '.[test]'",
    test_requirements=("pytest>=8", "hypothesis"),
    test_cmd="pytest",
    build_ok=True,
    image="reprobot/env-o-works:1",
    build_s=30.0,
    built_now=True,
    size_mb=600.4,
    selection="whole suite",
    test_files=3,
    selected_files=3,
    collected=100,
    passed=97,
    failed=1,
    skipped=1,
    xfailed=1,
    works=True,
)
CACHED = WORKS.model_copy(
    update={"repo": "o/cached", "build_s": 90.0, "built_now": False, "sources": {}}
)
MISSING = WORKS.model_copy(
    update={
        "repo": "o/missing",
        "build_s": 50.0,
        "collection_errors": ("tests/test_cfg.py",),
        "missing_modules": ("yaml",),
        "works": False,
        "why_not": ("a module does not collect: missing yaml",),
        "selection": "largest 200 of 250 test files",
    }
)
BROKEN = Row(
    repo="o/broken",
    commit=SHA,
    python="3.13",
    install="make | tee log",
    test_cmd="pytest",
    build_cause="failed: the install command failed (exit 2)",
    build_wall_s=8.0,
    why_not=("the environment did not build",),
)
NO_CLONE = Row(
    repo="o/gone", commit="HEAD", failure="no clone of o/gone", why_not=("no clone of o/gone",)
)
ROWS = [WORKS, CACHED, MISSING, BROKEN, NO_CLONE]


def test_summary_counts_what_works_and_the_median_cold_build() -> None:
    facts = summary(ROWS)
    assert facts.repositories == 5
    assert facts.works == 2
    assert facts.works_share == 0.4
    assert (facts.built, facts.built_now, facts.build_failed) == (3, 2, 1)
    assert facts.not_started == 1
    # The cached image's build time counts: it is that image's cold build, recorded then.
    assert facts.median_build_s == 50.0
    assert facts.timed_builds == 3
    assert summary([]).works_share is None
    # report.json's "summary", in its order.
    assert list(facts.to_json()) == [
        "repositories",
        "works",
        "works_share",
        "built",
        "built_now",
        "build_failed",
        "not_started",
        "median_build_s",
        "timed_builds",
    ]


def test_the_table_has_a_row_per_repository(tmp_path: Path) -> None:
    header = provenance({"list": tmp_path / "absent.txt"}, ["reprobot", "bench", "repos"])
    text = repos_markdown(header, ROWS, Timing(75.0, 75.0, 1), 200)
    assert (
        "**Works: 2 of 5 (40%)**; median cold build 50 s over the 3 images that built (2 built "
        "in this run, the others' time as recorded when they were built)"
    ) in text
    assert "1 build(s) failed, 1 not started." in text
    assert "more than 200 test files: then only its 200 largest" in text
    lines = {line.split(" | ")[0]: line for line in text.splitlines() if line.startswith("| o/")}
    assert lines["| o/works"] == (
        "| o/works | `0123456789ab` | python: requires-python >=3.9; install: tox.ini [testenv] | "
        "3.11 | `python -m pip install -e '.[test]'` + 2 test requirement(s) | `pytest` | 30 | "
        "600 | whole suite | 100 | 97 | 1 | 0 | 2 | 0 | **yes** |"
    )
    assert " | 90 (cached) | " in lines["| o/cached"]
    assert "| – | 3.11 |" in lines["| o/cached"]  # no sources: the detector said nothing
    assert "largest 200 of 250 test files" in lines["| o/missing"]
    assert lines["| o/missing"].endswith(" | 1 (missing: yaml) | no |")
    # A pipe in a command does not break the table; a failed build runs nothing.
    assert "`make \\| tee log`" in lines["| o/broken"]
    assert lines["| o/broken"].endswith(" | failed | – | – | – | – | – | – | – | – | no |")
    assert "- o/broken: the environment did not build — build: failed: the install" in text
    assert "- o/gone: no clone of o/gone" in text
    assert "- o/works" not in text


def test_untrusted_text_is_made_printable() -> None:
    row = BROKEN.model_copy(update={"build_cause": "bad\x1b[2Jnews\nsecond line"})
    text = repos_markdown(provenance({}, ["reprobot"]), [row], Timing(1.0, 1.0, 1), 0)
    assert "\x1b" not in text
    assert "build: badnews second line" in text
    assert "its tests run once: the whole suite." in text


def test_decided_by() -> None:
    assert decided_by({}) == "–"
    assert decided_by({"python": "a", "test_command": "b"}) == "python: a; test_command: b"


def test_the_writer_writes_markdown_and_json(tmp_path: Path) -> None:
    header = provenance({}, ["reprobot", "bench", "repos"])
    written = write_repos_report(tmp_path, header, ROWS, Timing(5.0, 9.0, 2), 200)
    assert written.paths["markdown"].read_text(encoding="utf-8") == written.markdown
    data = json.loads(written.paths["json"].read_text(encoding="utf-8"))
    assert data["summary"]["works"] == 2
    assert data["max_tests"] == 200
    assert data["failing_share"] == 0.02
    assert (data["wall_s"], data["wall_s_all_runs"], data["runs"]) == (5.0, 9.0, 2)
    assert [r["repo"] for r in data["repositories"]] == [r.repo for r in ROWS]
    assert Row.model_validate(data["repositories"][2]) == MISSING
