"""``reprobot bench repos`` end to end in the real sandbox: one tiny repository whose suite works
(run as its largest test file only, past ``--max-tests``), one whose build fails, one with no
clone; each is a row, the build failure with its cause, and a second run reuses the rows."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.repos.command import find_clone
from reprobot.cli.main import main
from reprobot.settings import Settings
from tests.support.repos import git, make_repo, pyproject

PYPROJECT = pyproject(
    "works",
    'requires-python = ">=3.9"\nclassifiers = ["Programming Language :: Python :: 3.11"]\n',
)
LARGER = """\
import pytest

from works import add


def test_add():
    assert add(1, 2) == 3


def test_add_text():
    assert add("a", "b") == "ab"


@pytest.mark.skip(reason="not today")
def test_skipped():
    pass
"""
SMALLER = "def test_never_selected():\n    assert False\n"


@pytest.fixture
def cache_env(settings: Settings, monkeypatch: pytest.MonkeyPatch) -> None:
    # The command builds its own Settings; share the test session's cache (images, locks, logs).
    monkeypatch.setenv("REPROBOT_CACHE_DIR", str(settings.cache_dir))
    monkeypatch.setenv("REPROBOT_RUN_TIMEOUT_S", "300")


@pytest.fixture
def listed(tmp_path: Path) -> Path:
    repos = tmp_path / "repos"
    works = make_repo(
        repos / "test+works",
        {
            "pyproject.toml": PYPROJECT,
            "works/__init__.py": "def add(a, b):\n    return a + b\n",
            "tests/test_larger.py": LARGER,
            "tests/test_smaller.py": SMALLER,
        },
    )
    broken = make_repo(
        repos / "broken",
        {
            "pyproject.toml": PYPROJECT,
            "works/__init__.py": "",
            ".github/reprobot.yml": 'python: "3.11"\ninstall: "echo installing && exit 3"\n',
        },
    )
    listing = tmp_path / "list.txt"
    listing.write_text(
        "# two clones and one missing\n"
        f"test/works {git(works, 'rev-parse', 'HEAD')}\n"
        + json.dumps({"repo": "test/broken", "commit": git(broken, "rev-parse", "HEAD")})
        + "\ntest/gone\n",
        encoding="utf-8",
    )
    return listing


def _bench(listing: Path, out: Path) -> int:
    return main(
        [
            "bench",
            "repos",
            "--list",
            str(listing),
            "--repos",
            str(listing.parent / "repos"),
            "--out",
            str(out),
            "--workers",
            "2",
            "--max-tests",
            "1",
        ]
    )


@pytest.mark.usefixtures("cache_env")
def test_first_contact_of_a_list(
    docker_client: docker.DockerClient,
    listed: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "out"
    assert _bench(listed, out) == 0
    printed = capsys.readouterr().out
    report = json.loads((out / "report.json").read_text(encoding="utf-8"))
    rows = {r["repo"]: r for r in report["repositories"]}
    assert list(rows) == ["test/works", "test/broken", "test/gone"]

    works = rows["test/works"]
    assert works["works"], works["why_not"]
    assert works["build_ok"] and works["build_s"] > 0 and works["size_mb"] > 100
    assert works["python"] == "3.11"
    assert works["test_cmd"] == "pytest"
    assert works["sources"]["python"].startswith("the project's classifiers")
    assert works["selection"] == "largest 1 of 2 test files"
    assert (works["collected"], works["passed"], works["failed"], works["skipped"]) == (3, 2, 0, 1)
    logs = out / "logs" / "test__works"
    assert json.loads((logs / "detection.json").read_text())["spec"]["python"] == "3.11"
    outcomes = json.loads((logs / "outcomes.json").read_text())
    assert outcomes["selected_files"] == ["tests/test_larger.py"]
    assert outcomes["tests"]["tests/test_larger.py::test_add"] == "passed"
    assert (logs / "tests.log").is_file()

    broken = rows["test/broken"]
    assert not broken["build_ok"] and not broken["works"]
    assert "the install command failed" in broken["build_cause"]
    assert "\n" not in broken["build_cause"]
    assert broken["sources"]["install"].startswith(".github/reprobot.yml")
    assert "installing" in (out / "logs" / "test__broken" / "build.log").read_text()

    assert rows["test/gone"]["failure"].startswith("no clone of test/gone under")

    assert report["summary"]["works"] == 1
    assert report["summary"]["median_build_s"] == works["build_s"]
    assert "**Works: 1 of 3 (33%)**" in printed
    assert "| test/works | `" in printed
    assert (out / "report.md").read_text(encoding="utf-8") == printed.rstrip("\n") + "\n"

    # A second run reuses both rows instead of building and running again.
    assert _bench(listed, out) == 0
    assert "2 finished earlier, 0 to run" in capsys.readouterr().err


def test_clones_are_found_as_mirrors_and_as_bench_swt_names_them(tmp_path: Path) -> None:
    for name in ("o+a", "b", "o__c"):
        (tmp_path / name).mkdir()
    assert find_clone(tmp_path, "o/a") == tmp_path / "o+a"
    assert find_clone(tmp_path, "o/b") == tmp_path / "b"
    assert find_clone(tmp_path, "o/c") == tmp_path / "o__c"
    with pytest.raises(DatasetError, match=r"looked for o\+d, o__d and d"):
        find_clone(tmp_path, "o/d")
