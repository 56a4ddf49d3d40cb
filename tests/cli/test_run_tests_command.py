"""The ``reprobot run-tests`` command-line contract, run as a real subprocess."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

from reprobot.cli.sandbox import _print_run
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.testrun import Outcome, TestRun
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.cli import reprobot
from tests.support.example_patches import NEW_TEST
from tests.support.repos import make_repo, pyproject


@pytest.mark.docker
def test_json_contract(
    example_env: EnvImage, example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    patch = tmp_path / "test.diff"
    patch.write_text(NEW_TEST)
    spec = tmp_path / "spec.json"
    spec.write_text(example_env.spec.model_dump_json())
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--ref",
        "HEAD",
        "--name",
        "example/durations",
        "--spec",
        str(spec),
        "--patch",
        str(patch),
        "--test",
        "tests/test_multi.py::test_multi_unit",
        "--test",
        "tests/test_parse.py::test_format",
        "--json",
        settings=settings,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["patches_applied"] is True
    assert out["tests"] == {
        "tests/test_multi.py::test_multi_unit": "failed",
        "tests/test_parse.py::test_format": "passed",
    }
    assert out["image"] == example_env.tag


@pytest.mark.docker
def test_patch_that_does_not_apply_still_exits_zero(
    example_env: EnvImage, example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    patch = tmp_path / "bad.diff"
    # Its removed line is not in the file (the added one is: it looks reversed).
    patch.write_text(
        "--- a/tests/test_parse.py\n+++ b/tests/test_parse.py\n@@ -1,2 +1,2 @@\n"
        "-import unittest\n+import pytest\n \n"
    )
    spec = tmp_path / "spec.json"
    spec.write_text(example_env.spec.model_dump_json())
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--name",
        "example/durations",
        "--spec",
        str(spec),
        "--patch",
        str(patch),
        "--json",
        settings=settings,
    )
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    assert out["patches_applied"] is False, out["patches"]


@pytest.mark.docker  # the command reaches the engine before it reads the commit
def test_unknown_commit_exits_two(example_repo: Path, settings: Settings) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--ref",
        "no-such-ref",
        "--json",
        settings=settings,
    )
    assert proc.returncode == 2
    assert "no-such-ref" in proc.stderr
    assert proc.stdout == ""


def test_unreachable_docker_exits_two(
    example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--json",
        settings=settings,
        env={"DOCKER_HOST": f"unix://{tmp_path}/nothing.sock"},
    )
    assert proc.returncode == 2
    assert "no Docker engine answers" in proc.stderr


def test_missing_patch_file_exits_two(
    example_repo: Path, settings: Settings, tmp_path: Path
) -> None:
    proc = reprobot(
        "run-tests",
        "--repo",
        str(example_repo),
        "--patch",
        str(tmp_path / "absent.diff"),
        settings=settings,
    )
    assert proc.returncode == 2
    assert "cannot read patch" in proc.stderr


# --- exit 2 when the run tells nothing about the tests, with the cause in one line -------------


def _one_line_cause(proc: subprocess.CompletedProcess[str]) -> str:
    """The cause the command gave on standard error: one line, Reprobot's error prefix."""
    lines = [line for line in proc.stderr.splitlines() if line.startswith("reprobot: error: ")]
    assert len(lines) == 1, proc.stderr[-3000:]
    return lines[0]


def _run_tiny(
    snapshot: RepoSnapshot, tiny_env: EnvImage, settings: Settings, tmp_path: Path
) -> subprocess.CompletedProcess[str]:
    spec = tmp_path / "spec.json"
    spec.write_text(tiny_env.spec.model_dump_json())
    argv = ["run-tests", "--repo", str(snapshot.path), "--ref", snapshot.sha]
    return reprobot(*argv, "--name", "test/tiny", "--spec", str(spec), "--json", settings=settings)


@pytest.mark.docker
@pytest.mark.parametrize(
    ("files", "cause"),
    [
        ({}, "no test ran: `pytest` collected no test (exit 5)"),
        (
            {"tests/test_np.py": "import numpy_not_installed_here\n\n\ndef test_sum(): pass\n"},
            "no test ran: the tests cannot import numpy_not_installed_here, which the "
            "environment does not have",
        ),
        (
            # A run error: the conftest switches pytest's JUnit writer off.
            {
                "tests/conftest.py": "def pytest_configure(config):\n"
                "    config.option.xmlpath = None\n",
                "tests/test_a.py": "def test_a():\n    pass\n",
            },
            "pytest wrote no report (exit 0)",
        ),
    ],
    ids=["no-test", "missing-module", "run-error"],
)
def test_a_run_that_tells_nothing_about_the_tests_exits_two_with_its_cause(
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
    settings: Settings,
    tmp_path: Path,
    files: dict[str, str],
    cause: str,
) -> None:
    proc = _run_tiny(tiny_snapshot(files), tiny_env, settings, tmp_path)
    assert proc.returncode == 2, proc.stderr[-3000:]
    assert cause in _one_line_cause(proc)
    # The result is printed all the same.
    assert "tests" in json.loads(proc.stdout)


@pytest.mark.docker
def test_tests_that_ran_exit_zero_whatever_they_did(
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
    settings: Settings,
    tmp_path: Path,
) -> None:
    files = {
        "tests/test_a.py": "def test_ok():\n    pass\n\n\ndef test_bad():\n    assert 0\n",
        # A module that cannot import beside tests that ran: the tests ran.
        "tests/test_np.py": "import numpy_not_installed_here\n",
    }
    proc = _run_tiny(tiny_snapshot(files), tiny_env, settings, tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert json.loads(proc.stdout)["tests"] == {
        "tests/test_a.py::test_ok": "passed",
        "tests/test_a.py::test_bad": "failed",
        "tests/test_np.py": "error",
    }
    assert "reprobot: error" not in proc.stderr


@pytest.mark.docker
def test_an_environment_that_cannot_be_built_exits_two_naming_the_requirement(
    settings: Settings, tmp_path: Path
) -> None:
    missing = "reprobot-no-such-requirement-xyz"
    project = pyproject("needs", f'dependencies = ["{missing}>=1.0"]\n')
    repo = make_repo(tmp_path / "needs", {"pyproject.toml": project, "needs/__init__.py": ""})
    argv = ["run-tests", "--repo", str(repo), "--name", "test/needs", "--python", "3.11"]
    proc = reprobot(*argv, "--install", "python -m pip install -e .", settings=settings)
    assert proc.returncode == 2
    cause = _one_line_cause(proc)
    assert "the install command failed: python -m pip install -e ." in cause
    assert f"{missing}>=1.0" in cause
    assert proc.stdout == ""


def test_tests_pytest_never_collected_are_named_as_not_counted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    env = EnvImage("reprobot/env-x:1", EnvSpec(python="3.11"), "", True, "0" * 40)
    run = TestRun(outcomes={"t.py::a": Outcome.PASSED}, unmatched=("t.py::forged",))
    _print_run(run, env)
    out = capsys.readouterr().out
    assert "1 passed in 0.0s" in out
    assert "not counted: 1 reported test(s) pytest never collected: t.py::forged" in out
