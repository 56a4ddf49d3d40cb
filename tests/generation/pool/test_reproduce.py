"""``reproduce`` and ``reprobot reproduce`` end to end: real issues of the example project,
drafted, run on R in the real sandbox, and the chosen test verified against the real fix."""

from __future__ import annotations

import ast
import io
import json
import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import docker
import pytest

from reprobot.cli.main import main
from reprobot.generation.drafts import DraftOutcome
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import drafting_limits, reproduce
from reprobot.generation.repo.linter import lint, project_linter
from reprobot.settings import Settings
from reprobot.validation import HASH_SEED, SECOND_HASH_SEED, patched_sources
from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.example_patches import FIX
from tests.support.repos import EXAMPLE, commit_files, git

ISSUE = (EXAMPLE / "ISSUE.md").read_text()

# The code runs fine on R, and the session's printed value is not said to be wrong anywhere.
NOT_A_BUG = """format_duration output looks fine

```python
from durations import format_duration
print(format_duration(90))
```

```python
>>> from durations import format_duration
>>> format_duration(90)
'1m30s'
```
"""

BROKEN_SNIPPET = """parse_duration crashes on my config

```python
from durations import parse_duration
parse_duration(settings.TIMEOUT)
```

```
Traceback (most recent call last):
  File "app.py", line 2, in <module>
ValueError: invalid literal for int() with base 10: '1h30'
```
"""


def _snapshot(example_repo: Path) -> RepoSnapshot:
    return RepoSnapshot.from_git(example_repo, "HEAD", "example/durations")


def _applies(repo: Path, diff: str) -> bool:
    proc = subprocess.run(
        ["git", "-C", str(repo), "apply", "--check", "-"],
        input=diff.encode(),
        capture_output=True,
        check=False,
    )
    return proc.returncode == 0


def test_reproduces_the_example_issue_and_the_fix_turns_it_green(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
) -> None:
    base = _snapshot(example_repo)
    result = reproduce(read_issue(ISSUE), base, example_env, settings, client=docker_client)
    assert result.reproduced
    assert result.chosen is not None
    # The issue states the value it expects, so the chosen test checks that value.
    assert result.chosen.draft.method == "issue-expected"
    assert "ValueError" in result.failure_excerpt and "1h30" in result.failure_excerpt
    assert all(t.startswith("tests/") for t in result.failing_tests)
    assert _applies(example_repo, result.test_patch)
    assert 1 <= result.sandbox_runs <= settings.draft_max_runs
    # Every other candidate says why it was not chosen.
    assert all(c.reason for c in result.candidates)
    verdict = verify(docker_client, example_env, base, Patch(result.test_patch), fix=Patch(FIX))
    assert verdict.success
    assert set(result.failing_tests) <= {
        t for t, tr in verdict.transitions.items() if tr.kind == "F->P"
    }


def test_the_chosen_test_passes_the_projects_linter(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
    tmp_path: Path,
) -> None:
    # The project's flake8 allows 60 characters a line: the drafted header (the issue's title)
    # and the reporter's spacing do not pass as drafted; tidied, the chosen test does.
    repo = tmp_path / "durations"
    subprocess.run(["git", "clone", "-q", str(example_repo), str(repo)], check=True)
    commit_files(repo, {"setup.cfg": "[flake8]\nmax-line-length = 60\n"}, "lint settings")
    base = RepoSnapshot.from_git(repo, "HEAD", "example/durations")
    spaced = ISSUE.replace("format_duration(5400)", "format_duration( 5400 )")
    result = reproduce(read_issue(spaced), base, example_env, settings, client=docker_client)
    assert result.chosen is not None
    (path,) = result.chosen.draft.test_files
    data = patched_sources(base, [Patch(result.test_patch)], [path])[path]
    assert data is not None
    text = data.decode()
    linter = project_linter(base)
    assert linter is not None and lint(linter, path, text) == ()
    assert all(len(line) <= 60 for line in text.splitlines())
    # As kept, it is what the confirmation ran, and the fix still turns it green.
    verdict = verify(docker_client, example_env, base, Patch(result.test_patch), fix=Patch(FIX))
    assert verdict.success


def test_an_issue_that_shows_no_failure_is_not_reproduced(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
) -> None:
    result = reproduce(
        read_issue(NOT_A_BUG), _snapshot(example_repo), example_env, settings, client=docker_client
    )
    assert not result.reproduced
    assert result.test_patch == ""
    assert result.candidates
    assert {c.outcome for c in result.candidates} == {DraftOutcome.PASSES}


def test_a_snippet_that_fails_by_itself_is_rejected_as_broken(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
) -> None:
    result = reproduce(
        read_issue(BROKEN_SNIPPET),
        _snapshot(example_repo),
        example_env,
        settings,
        client=docker_client,
    )
    assert not result.reproduced
    broken = [c for c in result.candidates if c.outcome is DraftOutcome.BROKEN]
    assert broken and "NameError" in broken[0].reason
    # The unresolvable name is reported before anything ran, too.
    assert any("settings" in reason for _, reason in result.rejected)


def _cli(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    code = main(args)
    return code, capsys.readouterr().out


def test_cli_json_contract_and_exit_codes(
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REPROBOT_CACHE_DIR", str(settings.cache_dir))
    monkeypatch.setenv("REPROBOT_RUN_TIMEOUT_S", "300")
    for name in ("REPROBOT_LLM_BASE_URL", "REPROBOT_LLM_MODEL", "REPROBOT_LLM_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE)
    common = ["--repo", str(example_repo), "--name", "example/durations"]
    common += ["--spec", str(_spec_file(tmp_path, example_env))]
    code, out = _cli(["reproduce", *common, "--issue", str(issue), "--json"], capsys)
    assert code == 0
    data = json.loads(out)
    assert data["reproduced"] is True
    assert _applies(example_repo, data["test_patch"])
    assert data["failing_tests"]
    assert {"method", "outcome", "reason"} <= set(data["candidates"][0])
    # The same through standard input, as GitHub's issue JSON.
    monkeypatch.setattr("sys.stdin", io.StringIO(json.dumps(_as_github_json(ISSUE))))
    code, out = _cli(["reproduce", *common, "--issue", "-", "--json"], capsys)
    assert code == 0 and json.loads(out)["reproduced"] is True
    quiet = tmp_path / "quiet.md"
    quiet.write_text(NOT_A_BUG)
    quiet_page = tmp_path / "quiet.html"
    code, out = _cli(
        ["reproduce", *common, "--issue", str(quiet), "--json", "--html", str(quiet_page)], capsys
    )
    assert code == 1
    assert json.loads(out) | {} and json.loads(out)["test_patch"] == ""
    # Not reproduced, the page says so and lists what was tried.
    assert "🔍 Could not reproduce this issue" in quiet_page.read_text()
    assert "What was tried" in quiet_page.read_text()
    # Human output names the chosen test and the failure.
    page = tmp_path / "reproduction.html"
    code, out = _cli(["reproduce", *common, "--issue", str(issue), "--html", str(page)], capsys)
    assert code == 0 and "Reproduced" in out and "ValueError" in out
    html = page.read_text()
    assert "🔁 Reproduced at" in html and "ValueError" in html
    assert data["failing_tests"][0] in html and "example/durations" in html
    # The printed diff is the JSON's, unwrapped, so it can be copied into `git apply`.
    assert data["test_patch"] in out
    assert main(["reproduce", "--repo", str(tmp_path), "--issue", str(issue)]) == 2


def test_cli_clones_a_repository_url(
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("REPROBOT_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("REPROBOT_RUN_TIMEOUT_S", "300")
    issue = tmp_path / "issue.md"
    issue.write_text(ISSUE)
    args = ["reproduce", "--repo", f"file://{example_repo}", "--name", "example/durations"]
    args += ["--spec", str(_spec_file(tmp_path, example_env)), "--issue", str(issue), "--json"]
    code, out = _cli(args, capsys)
    assert code == 0, out
    assert (
        json.loads(out)["base_sha"]
        == subprocess.run(
            ["git", "-C", str(example_repo), "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    )
    assert list((tmp_path / "cache" / "repos").iterdir())


def _spec_file(tmp_path: Path, env: EnvImage) -> Path:
    path = tmp_path / "spec.json"
    path.write_text(env.spec.model_dump_json())
    return path


def _as_github_json(text: str) -> dict[str, str]:
    title, _, body = text.partition("\n")
    return {"title": title, "body": body}


# The issue's call hangs on R: its drafted test runs into the drafting deadline, not the run's.
HANGS = """tiny.spin never returns

```python
from tiny.spin import spin
spin(3)
```

```
Traceback (most recent call last):
  File "app.py", line 2, in <module>
ValueError: spin count must be even
```
"""


def test_a_drafting_run_has_a_short_deadline_of_its_own(
    docker_client: docker.DockerClient,
    tiny_env: EnvImage,
    tiny_snapshot: Callable[[dict[str, str]], RepoSnapshot],
    settings: Settings,
) -> None:
    snapshot = tiny_snapshot({"tiny/spin.py": "def spin(n):\n    while True:\n        pass\n"})
    quick = settings.model_copy(update={"draft_run_timeout_s": 8.0, "run_timeout_s": 300.0})
    assert drafting_limits(quick).timeout_s == 8.0
    assert drafting_limits(settings.model_copy(update={"run_timeout_s": 5.0})).timeout_s == 5.0
    started = time.monotonic()
    result = reproduce(read_issue(HANGS), snapshot, tiny_env, quick, client=docker_client)
    assert not result.reproduced
    assert result.candidates
    assert {c.outcome for c in result.candidates} == {DraftOutcome.ERROR}, [
        (c.outcome, c.reason, c.draft.patch.diff[:300]) for c in result.candidates
    ]
    assert all("deadline" in c.reason for c in result.candidates), [
        c.reason for c in result.candidates
    ]
    # Each candidate gave up at the drafting deadline, far from the run's 300 s.
    assert time.monotonic() - started < 120


# A function whose output order is the hash seed's draw: the set's order is what it returns.
UNIT_NAMES = """\
UNITS = {"days", "hours", "minutes", "seconds", "weeks"}


def unit_names():
    return list(UNITS)
"""


def _order_under(seed: int) -> list[str]:
    code = 'print(repr(list({"days", "hours", "minutes", "seconds", "weeks"})))'
    out = subprocess.run(
        [sys.executable, "-c", code],
        env={**os.environ, "PYTHONHASHSEED": str(seed)},
        capture_output=True,
        text=True,
        check=True,
    )
    return list(ast.literal_eval(out.stdout))


def test_a_failure_the_hash_seed_decides_never_reproduces(
    docker_client: docker.DockerClient,
    example_repo: Path,
    example_env: EnvImage,
    settings: Settings,
    tmp_path: Path,
) -> None:
    # The reporter saw the order of one seed and expects the order another seed happens to
    # give: the drafted test fails under the first and passes under the second, so its failure
    # is the draw's, not a bug's.
    first, second = _order_under(HASH_SEED), _order_under(SECOND_HASH_SEED)
    assert first != second  # the sandbox's Python is the same release as this one
    repo = tmp_path / "durations"
    git(tmp_path, "clone", "-q", str(example_repo), str(repo))
    commit_files(repo, {"src/durations/names.py": UNIT_NAMES}, "unit names")
    issue = (
        "unit_names() returns the units in the wrong order\n\n"
        "```python\n>>> from durations.names import unit_names\n>>> unit_names()\n"
        f"{first!r}\n```\n\nIt should return `{second!r}`.\n"
    )

    result = reproduce(
        read_issue(issue),
        RepoSnapshot.from_git(repo, "HEAD"),
        example_env,
        settings,
        client=docker_client,
    )

    assert not result.reproduced, result.test_patch
    reasons = [c.reason for c in result.candidates]
    assert any("the failure depends on the hash seed" in r for r in reasons), reasons
