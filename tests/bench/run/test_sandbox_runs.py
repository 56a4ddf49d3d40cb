"""What a benchmark keeps of a sandbox run: its log file and its summary."""

from __future__ import annotations

import json
from pathlib import Path

from reprobot.bench.run.sandbox_runs import RunSummary, run_summary, write_run_log
from reprobot.validation.results.testrun import Outcome, PatchResult, TestRun

RUN = TestRun(
    outcomes={"t::a": Outcome.PASSED, "t::b": Outcome.FAILED, "t::c": Outcome.MISSING},
    patches_applied=False,
    patches=(
        PatchResult("fix.diff", True, "git apply", ""),
        PatchResult("test.diff", False, None, "error: patch failed: t.py:1"),
    ),
    pytest_exit=1,
    log_excerpt="== 1 failed, 1 passed ==",
    duration_s=12.3456,
    limits_hit=frozenset({"timeout", "memory"}),
    selection_mode="files",
    error="the test patch does not apply",
)


def test_write_run_log(tmp_path: Path) -> None:
    path = tmp_path / "R.log"
    write_run_log(path, RUN)
    assert path.read_text(encoding="utf-8") == "\n".join(
        [
            "# error: the test patch does not apply",
            "# pytest exit: 1",
            "# limits hit: ['memory', 'timeout']",
            "# selection mode: files",
            "# duration: 12.3 s",
            "# patch fix.diff: applied=True method=git apply\n",
            "# patch test.diff: applied=False method=None\nerror: patch failed: t.py:1",
            "== 1 failed, 1 passed ==",
        ]
    )


def test_write_run_log_of_a_plain_run(tmp_path: Path) -> None:
    path = tmp_path / "x.log"
    write_run_log(path, TestRun(outcomes={}))
    assert path.read_text(encoding="utf-8").splitlines() == [
        "# error: None",
        "# pytest exit: None",
        "# limits hit: []",
        "# selection mode: ids",
        "# duration: 0.0 s",
    ]


def test_run_summary() -> None:
    assert run_summary(RUN).to_json() == {
        "patches_applied": False,
        "error": "the test patch does not apply",
        "pytest_exit": 1,
        "limits_hit": ["memory", "timeout"],
        "duration_s": 12.35,  # rounded to 2 places
        "tests": 3,
    }
    # Read back from a stored result, it is the same summary.
    stored = json.loads(json.dumps(run_summary(RUN).to_json()))
    assert RunSummary.from_json(stored) == run_summary(RUN)
    assert list(stored) == [
        "patches_applied",
        "error",
        "pytest_exit",
        "limits_hit",
        "duration_s",
        "tests",
    ]
