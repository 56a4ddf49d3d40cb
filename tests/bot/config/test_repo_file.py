"""``.github/reprobot.yml``: settings and the messages for broken files (the environment they
lead to is tested with the detection, ``tests/validation/env/detect``)."""

from __future__ import annotations

from pathlib import Path

import pydantic
import pytest

from reprobot.bot.config.repo_file import (
    ConfigResult,
    LabelNames,
    RepoConfig,
    parse_repo_config,
)
from reprobot.bot.render.config_note import CONFIG_IGNORED
from reprobot.validation import RepoSnapshot, detect_environment
from tests.support.repos import make_repo

FULL = """\
# Reprobot settings
python: "3.11"
install: python -m pip install -e '.[tests]'
test_command: python -m pytest -p no:randomly
test_paths: [tests, ./src/pkg/tests/]
labels:
  reproduced: "bug: reproduced"
  verified: fix-verified
events:
  issues: true
  pull_requests: false
commands_from: [OWNER, member]
comment_on_failure: yes
draft_at_pull_request: no
"""


def _errors(text: str | bytes) -> tuple[str, ...]:
    result = parse_repo_config(text)
    assert result.config == RepoConfig()
    assert result.source == "default"
    return result.errors


def test_no_file_means_defaults() -> None:
    assert parse_repo_config(None) == ConfigResult(RepoConfig(), (), "default")
    config = RepoConfig()
    assert config.labels == LabelNames(reproduced="reproduced", verified="fix-verified")
    assert config.commands_from == ("OWNER", "MEMBER", "COLLABORATOR")
    assert (config.events.issues, config.events.pull_requests, config.events.commands) == (
        True,
        True,
        True,
    )
    assert not config.comment_on_failure
    assert config.draft_at_pull_request


def test_empty_file_is_a_file_of_defaults() -> None:
    assert parse_repo_config("# nothing yet\n") == ConfigResult(RepoConfig(), (), "file")


def test_full_file() -> None:
    result = parse_repo_config(FULL.encode())
    assert result.errors == ()
    assert result.source == "file"
    config = result.config
    assert config.python == "3.11"
    assert config.install == "python -m pip install -e '.[tests]'"
    assert config.test_command == "python -m pytest -p no:randomly"
    assert config.test_paths == ("tests", "src/pkg/tests")
    assert config.labels.reproduced == "bug: reproduced"
    assert not config.events.pull_requests and config.events.commands
    assert config.commands_from == ("OWNER", "MEMBER")
    assert config.comment_on_failure
    assert not config.draft_at_pull_request
    with pytest.raises(pydantic.ValidationError):
        config.python = "3.9"  # type: ignore[misc]


def test_unquoted_python_version() -> None:
    assert parse_repo_config("python: 3.13").config.python == "3.13"
    assert _errors("python: 3.10") == (
        ".github/reprobot.yml: python: Input should be '3.9', '3.11' or '3.13', found '3.10'",
    )


def test_bad_yaml_names_the_line() -> None:
    assert _errors("python: '3.11'\nlabels:\n  reproduced: x\n    verified: y\n") == (
        ".github/reprobot.yml: line 4: mapping values are not allowed here",
    )
    assert _errors("test_paths: [tests\n") == (
        ".github/reprobot.yml: line 2: while parsing a flow sequence, "
        "expected ',' or ']', but got '<stream end>'",
    )


def test_unknown_settings_are_reported_with_a_suggestion() -> None:
    assert _errors("pyhton: '3.11'") == (
        ".github/reprobot.yml: unknown setting 'pyhton' (did you mean 'python'?)",
    )
    assert _errors("labels:\n  reproducd: yes-it-is\n") == (
        ".github/reprobot.yml: unknown setting 'labels.reproducd' (did you mean 'reproduced'?)",
    )
    assert _errors("frobnicate: 1") == (".github/reprobot.yml: unknown setting 'frobnicate'",)


@pytest.mark.parametrize("spelling", ["test-command", "testCommand", "TEST_COMMAND", "tests"])
def test_one_spelling_only(spelling: str) -> None:
    (error,) = _errors(f"{spelling}: pytest")
    assert error.startswith(f".github/reprobot.yml: unknown setting '{spelling}'")


def test_wrong_types() -> None:
    assert _errors("events:\n  issues: maybe\n") == (
        ".github/reprobot.yml: events.issues: Input should be a valid boolean, "
        "unable to interpret input, found 'maybe'",
    )
    assert _errors("test_paths: tests") == (
        ".github/reprobot.yml: test_paths: Input should be a list, found 'tests'",
    )
    assert _errors("commands_from: [OWNER, ANYONE]") == (
        ".github/reprobot.yml: commands_from[1]: Input should be "
        "'OWNER', 'MEMBER', 'COLLABORATOR' or 'CONTRIBUTOR', found 'ANYONE'",
    )
    assert _errors("install: ''") == (
        ".github/reprobot.yml: install: String should have at least 1 character, found ''",
    )


def test_label_longer_than_github_allows() -> None:
    (error,) = _errors("labels:\n  reproduced: " + "r" * 51 + "\n")
    assert error.startswith(
        ".github/reprobot.yml: labels.reproduced: String should have at most 50 characters"
    )
    assert parse_repo_config("labels: {verified: " + "v" * 50 + "}").errors == ()


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("/etc", "'/etc' is not relative to the repository root"),
        ("C:/tests", "'C:/tests' is not relative to the repository root"),
        ("~/tests", "'~/tests' is not relative to the repository root"),
        ("tests/../../secrets", "'tests/../../secrets' leads out of the repository ('..')"),
        ("", "a test path is empty"),
    ],
)
def test_test_paths_stay_inside_the_repository(path: str, problem: str) -> None:
    assert _errors(f"test_paths: ['{path}']") == (f".github/reprobot.yml: test_paths: {problem}",)


def test_every_error_is_reported_and_the_whole_file_ignored() -> None:
    errors = _errors("python: '3.11'\npyhton: '3.9'\nlabels: {verified: ''}\n")
    assert errors == (
        ".github/reprobot.yml: unknown setting 'pyhton' (did you mean 'python'?)",
        ".github/reprobot.yml: labels.verified: String should have at least 1 character, found ''",
    )
    assert CONFIG_IGNORED.endswith("so the defaults apply.")


def test_files_that_are_not_settings() -> None:
    assert _errors("- python: '3.11'\n") == (
        ".github/reprobot.yml: expected a mapping of settings (name: value), found a list",
    )
    assert _errors("just words") == (
        ".github/reprobot.yml: expected a mapping of settings (name: value), "
        "found the value 'just words'",
    )
    assert _errors("1: one") == (".github/reprobot.yml: setting names must be text, found 1",)
    assert _errors("a: 1\n---\nb: 2\n") == (
        ".github/reprobot.yml: line 2: expected a single document in the stream, "
        "but found another document",
    )
    assert _errors(b"python: '3.11'\n# \xff\n") == (".github/reprobot.yml: line 2: not UTF-8 text",)


def test_byte_order_mark_is_accepted() -> None:
    assert parse_repo_config("\ufeffpython: '3.9'\n".encode()).config.python == "3.9"


def test_huge_file_is_refused() -> None:
    text = "# " + "x" * (64 * 1024) + "\n"
    (error,) = _errors(text)
    assert error == (
        f".github/reprobot.yml: the file is {len(text)} bytes long; "
        "Reprobot reads files of at most 65536 bytes"
    )


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("warm_commands: ['']\n", "warm_commands[0]: String should have at least 1 character"),
        ("test_command: tox -e py311\n", "not a runner Reprobot reads outcomes from"),
        ("system_packages: ['gcc; curl evil']\n", "system_packages[0]: String should match"),
    ],
)
def test_a_runner_or_package_reprobot_cannot_use_is_refused(text: str, problem: str) -> None:
    result = parse_repo_config(text)
    assert result.source == "default"
    assert any(problem in e for e in result.errors), result.errors


# --- the App's settings lead to the environment the command line detects ----------------------

GROUPS_PYPROJECT = """\
[project]
name = "grouped"
version = "1"

[project.optional-dependencies]
speedups = ["ujson"]

[dependency-groups]
tests = ["pytest>=8"]
"""
CI = """\
on: [push]
jobs:
  test:
    runs-on: ubuntu-latest
    steps:
      - run: python -m pip install -e .[speedups] --group tests
      - run: python -m pytest -q
"""


def test_the_app_and_the_command_line_detect_the_same(tmp_path: Path) -> None:
    files = {
        "pyproject.toml": GROUPS_PYPROJECT,
        ".github/workflows/ci.yml": CI,
        ".github/reprobot.yml": "install: pip install -e .[speedups]\nlabels:\n  reproduced: ok\n",
    }
    repo = make_repo(tmp_path / "repo", files)
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "o/r")
    config = parse_repo_config(snapshot.read_file(".github/reprobot.yml")).config
    assert detect_environment(snapshot, settings=config) == detect_environment(snapshot)
    assert detect_environment(snapshot).spec.install == "pip install -e .[speedups]"


def test_a_settings_file_with_errors_is_ignored_by_both(tmp_path: Path) -> None:
    files = {"pyproject.toml": GROUPS_PYPROJECT, ".github/reprobot.yml": "python: '2.7'\n"}
    repo = make_repo(tmp_path / "repo", files)
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "o/r")
    result = parse_repo_config(snapshot.read_file(".github/reprobot.yml"))
    assert result.errors
    assert detect_environment(snapshot, settings=result.config) == detect_environment(snapshot)
