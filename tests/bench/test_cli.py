"""``reprobot bench swt`` and ``bench pod`` end to end on a small real dataset.

The dataset is the README's example project as one SWE-bench-style instance: its golden fix and
golden tests are the FIX and NEW_TEST of the run-tests tests, and four labelled candidate fixes
cover a correct one, one that changes nothing that matters, one that breaks an existing test and
one that does not apply. Everything runs in the real sandbox.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import docker
import pytest

from reprobot.cli.main import main
from reprobot.settings import Settings
from tests.support.example_patches import FIX, NEW_TEST
from tests.support.repos import EXAMPLE, git, make_repo

REPO = "example/durations"
F2P = "tests/test_multi.py::test_multi_unit"
P2P = ["tests/test_parse.py::test_plain_number_is_seconds", "tests/test_parse.py::test_format"]

# Changes the message only: the multi-unit duration still fails.
COSMETIC = """\
--- a/src/durations/parse.py
+++ b/src/durations/parse.py
@@ -13,5 +13,5 @@ def parse_duration(text: str) -> int:
     unit = text[-1]
     if unit not in UNITS:
-        raise ValueError(f"unknown unit {unit!r} in {text!r}")
+        raise ValueError(f"unknown unit {unit!r} in duration {text!r}")
     return int(text[:-1]) * UNITS[unit]
"""
# Fixes multi-unit durations and breaks plain numbers.
BREAKING = FIX.replace(
    "@@ -10,10 +10,17 @@ def parse_duration(text: str) -> int:\n"
    '         raise ValueError("empty duration")\n'
    "     if text.isdigit():\n"
    "         return int(text)\n",
    "@@ -10,10 +10,17 @@ def parse_duration(text: str) -> int:\n"
    '         raise ValueError("empty duration")\n'
    "     if text.isdigit():\n"
    "-        return int(text)\n"
    "+        return int(text) * 60\n",
)
# Removes a line the file does not have: no fuzz can apply it.
STALE = COSMETIC.replace(
    '-        raise ValueError(f"unknown unit {unit!r} in {text!r}")',
    "-        raise KeyError(unit)",
)
# A test that passes on both sides: it reproduces nothing.
PASSING_TEST = """\
--- /dev/null
+++ b/tests/test_single.py
@@ -0,0 +1,5 @@
+from durations import parse_duration
+
+
+def test_single():
+    assert parse_duration("15m") == 900
"""


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


@pytest.fixture(scope="module")
def dataset(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("bench")
    clone = root / "repos" / "durations"
    shutil.copytree(EXAMPLE, clone)
    make_repo(clone, {})
    sha = git(clone, "rev-parse", "HEAD")
    instance = {
        "instance_id": "example__durations-1",
        "repo": REPO,
        "base_commit": sha,
        "environment_setup_commit": sha,
        "version": "0.1",
        "patch": FIX,
        "test_patch": NEW_TEST,
        "FAIL_TO_PASS": json.dumps([F2P]),
        "PASS_TO_PASS": json.dumps(P2P),
        "problem_statement": (EXAMPLE / "ISSUE.md").read_text(),
    }
    env_specs = {
        "specs": {
            REPO: {
                "0.1": {
                    "python": "3.11",
                    "install": "python -m pip install -e '.[test]'",
                    "test_cmd": "pytest -rA",
                }
            }
        }
    }
    (root / "env_specs.json").write_text(json.dumps(env_specs))
    candidates = [
        ("good", FIX, True),
        ("cosmetic", COSMETIC, False),
        ("breaking", BREAKING, False),
        ("stale", STALE, False),
    ]
    return {
        "root": root,
        "repos": root / "repos",
        "instances": _write_jsonl(root / "instances.jsonl", [instance]),
        "patches": _write_jsonl(
            root / "candidates.jsonl",
            [
                {
                    "instance_id": instance["instance_id"],
                    "system": system,
                    "model_name_or_path": system,
                    "model_patch": patch,
                    "resolved": resolved,
                }
                for system, patch, resolved in candidates
            ],
        ),
        "predictions": _write_jsonl(
            root / "predictions.jsonl",
            [
                {
                    "instance_id": instance["instance_id"],
                    "model_name_or_path": "passing-only",
                    "model_patch": PASSING_TEST,
                }
            ],
        ),
    }


@pytest.fixture
def cache_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # The command builds its own Settings; share the test session's cache (images, locks, logs).
    monkeypatch.setenv("REPROBOT_CACHE_DIR", str(settings.cache_dir))
    monkeypatch.setenv("REPROBOT_RUN_TIMEOUT_S", "300")


def _bench(kind: str, data: dict[str, Path], out: Path, *extra: str) -> int:
    return main(
        [
            "bench",
            kind,
            "--instances",
            str(data["instances"]),
            "--repos",
            str(data["repos"]),
            "--out",
            str(out),
            "--workers",
            "2",
            *extra,
        ]
    )


@pytest.mark.usefixtures("cache_env")
def test_swt_gold_succeeds_and_resumes(
    docker_client: docker.DockerClient,
    dataset: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "swt"
    assert _bench("swt", dataset, out, "--predictions", "gold") == 0
    report = json.loads((out / "report.json").read_text())
    row = report["rows"]["all instances"]
    assert (row["W"], row["S"], row["F->P"], row["P->P"]) == (100.0, 100.0, 100.0, 0.0)
    # The golden test runs every line FIX removes (on R) and adds (on R∘X*).
    instance = report["instances"][0]
    assert instance["executable_lines"] > 0
    assert instance["dC"] == 1.0
    assert report["inputs"]["instances"]["sha256"]
    assert report["reprobot_version"]
    assert (out / "instances.csv").read_text().startswith("instance_id,")
    stored = out / "results" / "example__durations-1.json"
    first = stored.stat().st_mtime_ns
    capsys.readouterr()

    # A second run reuses the stored result instead of running the sandbox again.
    assert _bench("swt", dataset, out, "--predictions", "gold") == 0
    assert stored.stat().st_mtime_ns == first
    assert "1 finished earlier, 0 to run" in capsys.readouterr().err


@pytest.mark.usefixtures("cache_env")
def test_swt_prediction_that_reproduces_nothing(
    docker_client: docker.DockerClient, dataset: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "swt-pred"
    assert _bench("swt", dataset, out, "--predictions", str(dataset["predictions"])) == 0
    row = json.loads((out / "report.json").read_text())["rows"]["all instances"]
    assert (row["W"], row["S"], row["F->x"], row["F->P"], row["P->P"]) == (
        100.0,
        0.0,
        0.0,
        0.0,
        100.0,
    )
    # Reproducing nothing is not covering nothing: "15m" runs the removed single-unit lines on R
    # and every added line the golden test runs (the loop, not its error branches) on R∘X*.
    assert row["dC_all"] == 100.0


@pytest.mark.usefixtures("cache_env")
def test_swt_skip_empty_scores_an_empty_prediction_without_running_it(
    docker_client: docker.DockerClient,
    dataset: dict[str, Path],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    empty = _write_jsonl(
        tmp_path / "empty.jsonl",
        [{"instance_id": "example__durations-1", "model_name_or_path": "m", "model_patch": ""}],
    )
    out = tmp_path / "swt-empty"
    capsys.readouterr()
    assert _bench("swt", dataset, out, "--predictions", str(empty), "--skip-empty") == 0
    assert "0 finished earlier, 0 to run" in capsys.readouterr().err
    report = json.loads((out / "report.json").read_text())
    row = report["rows"]["all instances"]
    assert (row["instances"], row["W"], row["S"], row["F->P"]) == (1, 0.0, 0.0, 0.0)
    # Without the golden runs no changed line is known to be executable: ΔC has no value.
    assert row["dC_all"] is None and report["skipped_empty"] == 1
    assert report["instances"][0]["error"] == "empty prediction, not run (--skip-empty)"
    assert not (out / "logs" / "example__durations-1").exists()
    assert "1 instance(s) with an empty prediction were not run" in (out / "report.md").read_text()


@pytest.mark.usefixtures("cache_env")
def test_swt_evaluates_reprobots_own_drafts(
    docker_client: docker.DockerClient, dataset: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "swt-reprobot"
    assert _bench("swt", dataset, out, "--predictions", "reprobot") == 0
    report = json.loads((out / "report.json").read_text())
    row = report["rows"]["all instances"]
    # The drafted test fails on R for the reason and passes with the golden fix.
    assert (row["W"], row["S"], row["F->x"], row["F->P"]) == (100.0, 100.0, 100.0, 100.0)
    (prediction,) = [
        json.loads(line) for line in (out / "predictions.jsonl").read_text().splitlines()
    ]
    assert prediction["model_name_or_path"] == "reprobot"
    assert prediction["model_patch"].startswith("diff --git a/tests/")
    drafted = json.loads((out / "results" / "draft-example__durations-1.json").read_text())
    assert drafted["reproduced"] and drafted["sandbox_runs"] >= 1
    markdown = (out / "report.md").read_text()
    assert "## Drafting" in markdown and "| example__durations-1 | yes |" in markdown


@pytest.mark.usefixtures("cache_env")
def test_swt_patch_aware_drafting_knows_the_golden_fix(
    docker_client: docker.DockerClient, dataset: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "swt-patch-aware"
    code = _bench("swt", dataset, out, "--predictions", "reprobot", "--patch-aware")
    assert code == 0
    row = json.loads((out / "report.json").read_text())["rows"]["all instances"]
    assert (row["W"], row["S"], row["F->P"]) == (100.0, 100.0, 100.0)
    drafted = json.loads(
        (out / "results" / "draft-patch-aware-example__durations-1.json").read_text()
    )
    assert drafted["reproduced"] and drafted["patch_aware"] is True
    markdown = (out / "report.md").read_text()
    assert "knowing the golden fix (patch-aware)" in markdown
    assert "## Why instances were not reproduced" in markdown
    # The flag drafts tests: with given predictions it is a usage error.
    assert _bench("swt", dataset, out, "--predictions", "gold", "--patch-aware") == 2


@pytest.mark.usefixtures("cache_env")
def test_pod_gold_agrees_with_labels(
    docker_client: docker.DockerClient, dataset: dict[str, Path], tmp_path: Path
) -> None:
    out = tmp_path / "pod"
    code = _bench("pod", dataset, out, "--patches", str(dataset["patches"]), "--tests", "gold")
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    calls = {c["system"]: c for c in report["calls"]}
    assert calls["good"]["called_correct"] is True
    assert calls["cosmetic"]["called_correct"] is False
    assert "test_multi_unit" in calls["cosmetic"]["reason"]
    assert calls["breaking"]["called_correct"] is False
    assert "test_plain_number_is_seconds" in calls["breaking"]["reason"]
    assert calls["stale"]["called_correct"] is False
    assert calls["stale"]["reason"] == "the candidate does not apply"
    assert report["confusion"] == {"tp": 1, "fp": 0, "tn": 3, "fn": 0}
    assert report["metrics"]["mcc"] == pytest.approx(1.0)
    effort = report["effort"][0]
    assert (effort["patches"], effort["correct"], effort["filter95"], effort["rs95"]) == (
        4,
        1,
        1,
        4,
    )
    for name in ("wpc_envelope.png", "effort.png"):
        assert (out / name).read_bytes().startswith(b"\x89PNG")
    assert "Agreement with the `resolved` labels: 4 of 4" in (out / "report.md").read_text()


def test_unknown_instance_is_an_error(dataset: dict[str, Path], tmp_path: Path) -> None:
    code = _bench("swt", dataset, tmp_path / "x", "--predictions", "gold", "--only", "nope")
    assert code == 2


@pytest.mark.usefixtures("cache_env")
def test_pod_with_predictions_counts_an_instance_without_a_test_as_not_judged(
    docker_client: docker.DockerClient, dataset: dict[str, Path], tmp_path: Path
) -> None:
    empty = tmp_path / "nothing-drafted.jsonl"
    empty.write_text(
        json.dumps(
            {
                "instance_id": "example__durations-1",
                "model_name_or_path": "reprobot",
                "model_patch": "",
            }
        )
        + "\n"
    )
    out = tmp_path / "pod-empty"
    code = _bench("pod", dataset, out, "--patches", str(dataset["patches"]), "--tests", str(empty))
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["not_judged"] == {"example__durations-1": "no drafted test"}
    assert report["calls"] == [] and report["errors"] == {}
    markdown = (out / "report.md").read_text()
    assert "1 instance(s) not judged" in markdown
    assert "- `example__durations-1`: no drafted test" in markdown
