"""What drafting an instance stores (its JSON in the order the files have it, read back as the
same record, generation's candidate records kept as they are) and the drafting table."""

from __future__ import annotations

import json
from dataclasses import replace

from reprobot.bench.data.instances import Instance
from reprobot.bench.run.executor import Done, Failed, UnitResult
from reprobot.bench.swt.drafting import (
    DraftCandidate,
    DraftResult,
    drafting_markdown,
    predictions_from,
)

TEST_PATCH = "diff --git a/tests/test_x.py b/tests/test_x.py\n"
CANDIDATE = {
    "method": "issue-code",
    "outcome": "reproduces",
    "reason": "fails on R with ValueError",
    "test_files": ["tests/test_x.py"],
    "failing_tests": ["tests/test_x.py::test_x"],
    "relevance": 0.5,
    "failure": "E   ValueError",
    "oracle": None,
    "test_patch": TEST_PATCH,
}
DRAFTED = DraftResult(
    instance_id="a__b-1",
    model_patch=TEST_PATCH,
    reproduced=True,
    method="issue-code",
    failing_tests=("tests/test_x.py::test_x",),
    failure="E   ValueError",
    candidates=(
        DraftCandidate.from_json(CANDIDATE),
        DraftCandidate.from_json({"method": "issue", "outcome": "no-draft", "reason": "no code"}),
    ),
    sandbox_runs=3,
    drafting_s=12.25,
    patch_aware=False,
    wall_s=14.5,
)


def test_a_drafting_result_has_the_keys_of_the_files_in_their_order() -> None:
    data = DRAFTED.to_json()
    assert list(data) == [
        "instance_id",
        "model_patch",
        "reproduced",
        "method",
        "failing_tests",
        "failure",
        "candidates",
        "sandbox_runs",
        "drafting_s",
        "patch_aware",
        "wall_s",
        "lint",
    ]
    # Generation's record of each candidate is stored as it wrote it.
    assert data["candidates"][0] == CANDIDATE
    assert DRAFTED.candidates[0].outcome == "reproduces"
    assert DRAFTED.candidates[1].reason == "no code"


def test_a_drafting_result_reads_back_as_the_same_record_and_bytes() -> None:
    text = json.dumps({**DRAFTED.to_json(), "unit_s": 15.0, "fingerprint": "f"}, indent=1)
    data = json.loads(text)
    assert DraftResult.from_json(data) == DRAFTED
    stored = Done(DraftResult.from_json(data), data["unit_s"], data["fingerprint"])
    assert json.dumps(stored.to_json(), indent=1) == text


def test_the_drafting_table_and_predictions_leave_an_errored_instance_out() -> None:
    instances = [
        Instance("a__b-1", "a/b", "c" * 40, "c" * 40, "1.0", "", "", (), ()),
        Instance("a__b-2", "a/b", "c" * 40, "c" * 40, "1.0", "", "", (), ()),
    ]
    results: dict[str, UnitResult[DraftResult]] = {
        "a__b-1": Done(DRAFTED),
        "a__b-2": Failed("draft-a__b-2", "SandboxError: no image"),
    }
    text = drafting_markdown(instances, results)
    assert "| a__b-1 | yes | issue-code | 1 | 3 | 12.2 |" in text
    assert "| a__b-2 | error: SandboxError: no image | | | | |" in text
    assert "| **total** | 1 of 2 | | | 3 | 12.2 (mean 12.2) |" in text
    assert list(predictions_from(results)) == ["a__b-1"]


def _new_module(path: str, text: str) -> str:
    added = "".join(f"+{line}\n" for line in text.splitlines())
    return (
        f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n+++ b/{path}\n{added}"
    )


def test_the_drafting_section_counts_chosen_tests_with_no_message_of_reprobots() -> None:
    plain = _new_module("tests/test_a.py", "def test_a():\n    assert f(1) == 2\n")
    message = _new_module(
        "tests/test_b.py",
        "def test_b():\n    result = f(1)\n"
        "    assert result == 2, 'expected ' + '2' + ', got ' + repr(result)\n",
    )
    instances = [
        Instance(f"a__b-{n}", "a/b", "c" * 40, "c" * 40, "1.0", "", "", (), ()) for n in (1, 2, 3)
    ]
    results: dict[str, UnitResult[DraftResult]] = {
        "a__b-1": Done(replace(DRAFTED, instance_id="a__b-1", model_patch=plain)),
        "a__b-2": Done(replace(DRAFTED, instance_id="a__b-2", model_patch=plain + message)),
        "a__b-3": Done(DraftResult("a__b-3")),
    }
    text = drafting_markdown(instances, results)
    assert "Chosen tests whose assertions carry no message Reprobot wrote: 1 of 2" in text


def test_the_drafting_section_counts_chosen_tests_that_pass_the_projects_linter() -> None:
    patch = _new_module("tests/test_a.py", "def test_a():\n    assert f(1) == 2\n")
    lints = ["passes", "1 finding(s): tests/test_a.py line 1: E501 …", "no linter settings", ""]
    instances = [
        Instance(f"a__b-{n}", "a/b", "c" * 40, "c" * 40, "1.0", "", "", (), ()) for n in range(5)
    ]
    results: dict[str, UnitResult[DraftResult]] = {
        f"a__b-{n}": Done(replace(DRAFTED, instance_id=f"a__b-{n}", model_patch=patch, lint=lint))
        for n, lint in enumerate(lints)
    }
    results["a__b-4"] = Done(DraftResult("a__b-4"))  # nothing chosen: not counted
    text = drafting_markdown(instances, results)
    assert (
        "Chosen tests that pass the project's linter (its flake8 or Ruff settings): 1 of 2 "
        "checked; 1 in projects with no linter settings, 1 not checked or not recorded."
    ) in text
    stored = results["a__b-1"]
    assert isinstance(stored, Done)
    assert DraftResult.from_json(stored.record.to_json()) == stored.record
