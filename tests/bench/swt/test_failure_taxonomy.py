"""Why an instance was not reproduced, from what drafting recorded: one class each, counted
overall and per repository."""

from __future__ import annotations

import pytest

from reprobot.bench.data.instances import Instance
from reprobot.bench.run.executor import Done, Failed, UnitResult
from reprobot.bench.swt import drafting
from reprobot.bench.swt.drafting import (
    DraftCandidate,
    DraftResult,
    failure_class,
    failure_classes,
    taxonomy_markdown,
)


def ran(outcome: str, reason: str = "") -> DraftCandidate:
    return DraftCandidate.from_json(
        {"method": "issue-code", "outcome": outcome, "reason": reason, "test_patch": "diff"}
    )


def skipped(reason: str) -> DraftCandidate:
    return DraftCandidate.from_json({"method": "issue", "outcome": "no-draft", "reason": reason})


def drafted(instance_id: str, reproduced: bool, candidates: list[DraftCandidate]) -> DraftResult:
    return DraftResult(instance_id, reproduced=reproduced, candidates=tuple(candidates))


NO_CODE = "the issue shows no code, session or command to reproduce it with"
NOTHING = "its code and sessions show no exception, no value called wrong and no expected value"


@pytest.mark.parametrize(
    ("candidates", "expected"),
    [
        ([skipped(NO_CODE)], drafting.NO_EXAMPLE),
        ([], drafting.NO_EXAMPLE),
        ([skipped(NOTHING)], drafting.NO_ORACLE),
        ([skipped("names the issue's code uses are not found: frob")], drafting.NAMES),
        ([ran("not-applied", "the test patch does not apply")], drafting.NOT_APPLIED),
        ([ran("broken", "the test's own code fails: NameError: x")], drafting.BROKEN),
        (
            [
                ran("broken", "the test's own code fails: NameError: name 'app' is not defined"),
                skipped("names the issue's code uses are not found: app"),
            ],
            drafting.NAMES,
        ),
        ([ran("broken", "ModuleNotFoundError: No module named 'numpy'")], drafting.ENVIRONMENT),
        ([ran("passes", "every new test passes on R"), ran("broken")], drafting.PASSES),
        ([ran("unrelated", "fails with KeyError"), ran("passes")], drafting.UNRELATED),
        # The project's own code needs a package the environment lacks.
        (
            [ran("unrelated", "fails with ImportError: parsing requires the antlr4 package")],
            drafting.ENVIRONMENT,
        ),
        (
            [
                ran("unrelated", "fails with ImportError: parsing requires the antlr4 package"),
                ran("unrelated", "fails with KeyError"),
            ],
            drafting.UNRELATED,
        ),
        ([ran("error", "limits hit")], drafting.SANDBOX),
        (
            [ran("unrelated", "reproduced once but not when run alone: passes")],
            drafting.FLAKY,
        ),
    ],
)
def test_the_best_any_candidate_came_to_decides(
    candidates: list[DraftCandidate], expected: str
) -> None:
    assert failure_class(drafted("x", False, candidates)) == expected


def test_a_reproduction_is_no_failure_unless_the_golden_fix_leaves_it_failing() -> None:
    record = drafted("x", True, [ran("reproduces")])
    assert failure_class(record) is None
    assert failure_class(record, success=True) is None
    assert failure_class(record, success=False) == drafting.NOT_FIXED


def _instance(instance_id: str, repo: str) -> Instance:
    return Instance(instance_id, repo, "a" * 40, "a" * 40, "1.0", "", "", (), ())


def test_counts_per_class_and_repository() -> None:
    instances = [
        _instance("a-1", "org/alpha"),
        _instance("a-2", "org/alpha"),
        _instance("b-1", "org/beta"),
        _instance("b-2", "org/beta"),
        _instance("b-3", "org/beta"),
    ]
    results: dict[str, UnitResult[DraftResult]] = {
        "a-1": Done(drafted("a-1", False, [skipped(NO_CODE)])),
        "a-2": Done(drafted("a-2", True, [])),
        "b-1": Done(drafted("b-1", False, [skipped(NO_CODE)])),
        "b-2": Done(drafted("b-2", True, [])),
        "b-3": Failed("draft-b-3", "the environment could not be built"),
    }
    classes = failure_classes(instances, results, {"a-2": True, "b-2": False})
    assert classes == {
        "a-1": drafting.NO_EXAMPLE,
        "b-1": drafting.NO_EXAMPLE,
        "b-2": drafting.NOT_FIXED,
    }
    table = taxonomy_markdown(instances, classes)
    assert "| reason | all | alpha | beta |" in table
    assert f"| {drafting.NO_EXAMPLE} | 2 | 1 | 1 |" in table
    assert f"| {drafting.NOT_FIXED} | 1 | 0 | 1 |" in table
    assert "| **not reproduced** | 3 | 1 | 2 |" in table
    assert f"- `b-2`: {drafting.NOT_FIXED}" in table
