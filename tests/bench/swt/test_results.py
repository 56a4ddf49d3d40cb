"""What ``bench swt`` keeps of an instance: the stored result's JSON (its keys in the order the
files have them, read back as the same record), its score, and why its golden tests did not run."""

from __future__ import annotations

import json
from dataclasses import replace

from reprobot.bench.data.instances import Instance
from reprobot.bench.data.predictions import Prediction
from reprobot.bench.run.executor import Done, Failed
from reprobot.bench.run.sandbox_runs import RunSummary
from reprobot.bench.swt.evaluate import SKIPPED, not_run
from reprobot.bench.swt.metrics import NOTHING, CoverageDelta, Flags
from reprobot.bench.swt.results import InstanceResult, NoPrediction, not_runnable, score

RUN = RunSummary(True, None, 0, (), 3.25, 4)


def result(instance_id: str = "psf__requests-1963", **changes: object) -> InstanceResult:
    """An evaluated instance whose golden tests went F→P; ``changes`` replaces fields."""
    base = InstanceResult(
        instance_id=instance_id,
        model="gold",
        applied=True,
        flags=Flags(True, True, True, True, False),
        delta=CoverageDelta(4, 3, ("src/m.py:+7",)),
        added={"F->P": ("t.py::a",), "F->F": (), "P->P": (), "P->F": ()},
        base={"F->P": (), "F->F": (), "P->P": ("t.py::b",), "P->F": ()},
        runs={"gold_pre": RUN, "gold_post": RUN},
        problems=(),
        environment="reprobot/env-r:a",
    )
    return replace(base, **changes)  # type: ignore[arg-type]


def test_a_stored_result_has_the_keys_of_the_files_in_their_order() -> None:
    data = result().to_json()
    assert list(data) == [
        "instance_id",
        "model",
        "applied",
        "flags",
        "delta",
        "added",
        "base",
        "runs",
        "problems",
        "environment",
    ]
    assert data["flags"] == {
        "applied": True,
        "success": True,
        "fail_any": True,
        "fail_to_pass": True,
        "pass_only": False,
    }
    assert data["delta"] == {"executable": 4, "covered": 3, "uncovered": ["src/m.py:+7"]}
    assert data["runs"]["gold_pre"] == RUN.to_json()
    # An empty prediction not run has no environment, and says it was skipped.
    instance = Instance("a__b-1", "a/b", "c" * 40, "c" * 40, "1.0", "", "", (), ())
    skipped = not_run(instance, Prediction("a__b-1", "m", "")).to_json()
    assert list(skipped)[-2:] == ["problems", "skipped"]
    assert skipped["skipped"] is True and skipped["problems"] == [SKIPPED]
    assert skipped["flags"] == {k: False for k in data["flags"]}


def test_a_stored_result_reads_back_as_the_same_record_and_bytes() -> None:
    for record in (result(), result(environment=None, skipped=True)):
        text = json.dumps({**record.to_json(), "unit_s": 1.5, "fingerprint": "f"}, indent=1)
        data = json.loads(text)
        assert InstanceResult.from_json(data) == record
        stored = Done(InstanceResult.from_json(data), data["unit_s"], data["fingerprint"])
        assert json.dumps(stored.to_json(), indent=1) == text


def test_an_instance_without_a_prediction() -> None:
    assert NoPrediction("a__b-1").to_json() == {
        "instance_id": "a__b-1",
        "error": "no prediction for this instance",
    }


def test_scores_of_each_kind_of_entry() -> None:
    done = score(Done(result()), excluded=True)
    assert (done.instance_id, done.flags, done.delta, done.excluded) == (
        "psf__requests-1963",
        Flags(True, True, True, True, False),
        CoverageDelta(4, 3, ("src/m.py:+7",)),
        True,
    )
    assert done.error is None
    assert done.counts == {"F->P": 1, "F->F": 0, "P->P": 0, "P->F": 0}
    troubled = score(Done(result(problems=("a", "b"))), excluded=False)
    assert troubled.error == "a; b"
    for entry, name in ((Failed("k-1", "SandboxError: x"), "k-1"), (NoPrediction("i-1"), "i-1")):
        failed = score(entry, excluded=False)
        assert (failed.instance_id, failed.flags, failed.delta) == (
            name,
            NOTHING,
            CoverageDelta(0, 0),
        )
        assert failed.error == entry.error


def test_each_instance_that_did_not_run_has_one_cause() -> None:
    assert not_runnable(Done(result())) is None
    errored = Failed(
        "pydicom__pydicom-901",
        "SandboxError: feeding the container failed: git archive 7241f5 failed\nmore",
    )
    assert not_runnable(errored) == (
        "SandboxError: feeding the container failed: git archive 7241f5 failed"
    )
    not_fp = Flags(True, False, False, False, False)
    lacking = result(
        flags=not_fp,
        problems=("golden tests on R: the tree requires tomli, which the environment lacks",),
    )
    assert "requires tomli" in (not_runnable(Done(lacking)) or "")
    base_stuck = result(flags=not_fp, added={}, base={"F->F": ("tests/test_requests.py::test_x",)})
    assert "F→F" in (not_runnable(Done(base_stuck)) or "")
    # The golden tests' own F→F (the prediction's, in SWT-Bench's terms) names the test too.
    stuck = result(flags=not_fp, added={"F->F": ("tests/test_a.py::test_b",)}, base={})
    assert (
        not_runnable(Done(stuck))
        == "golden tests fail after the fix too (F→F), e.g. tests/test_a.py::test_b"
    )
    passing = result(flags=not_fp, added={}, base={})
    assert not_runnable(Done(passing)) == "golden tests are not F→P (they pass before the fix)"
    assert not_runnable(NoPrediction("x")) == "no prediction for this instance"
