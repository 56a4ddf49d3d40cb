"""Oracles that reject wrong fixes, end to end: a real project whose ``median`` returns the upper
middle value of an even-length list, issues stating the bug in the usual phrasings, each
reproduced in the real sandbox; then the right fix and two wrong ones verified against the chosen
test. A test resting only on "the reported wrong value is gone" never gives "verified"."""

from __future__ import annotations

import json
from pathlib import Path

import docker
import pytest

from reprobot.bot.render.verdict import render_verdict
from reprobot.cli.main import main
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import Reproduction, reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.oracles import OracleKind
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.repos import TINY_PYPROJECT, make_repo

NAME = "example/stats"
BUGGY = """def median(values):
    ordered = sorted(values)
    return ordered[len(ordered) // 2]
"""


def _fix(body: str) -> Patch:
    """A fix of ``median`` as a diff of stats/__init__.py."""
    old = BUGGY.splitlines()
    new = ["def median(values):", "    ordered = sorted(values)", *body.splitlines()]
    lines = [
        "--- a/stats/__init__.py",
        "+++ b/stats/__init__.py",
        f"@@ -1,{len(old)} +1,{len(new)} @@",
        *(f" {line}" for line in old[:2]),
        *(f"-{line}" for line in old[2:]),
        *(f"+{line}" for line in new[2:]),
    ]
    return Patch("\n".join(lines) + "\n", name="fix.diff")


RIGHT = _fix(
    "    middle = len(ordered) // 2\n"
    "    if len(ordered) % 2:\n"
    "        return ordered[middle]\n"
    "    return (ordered[middle - 1] + ordered[middle]) / 2"
)
# Wrong fixes: the lower middle value, and the old value as a float.
LOWER = _fix("    return ordered[(len(ordered) - 1) // 2]")
AS_FLOAT = _fix("    return float(ordered[len(ordered) // 2])")
# Right for even lengths, wrong for odd ones: the issue's test passes, the project's own fails.
EVEN_ONLY = _fix(
    "    middle = len(ordered) // 2\n    return (ordered[middle - 1] + ordered[middle]) / 2"
)

SESSION = """
```python
>>> from stats import median
>>> median([1, 2, 3, 4])
3
```
"""
PHRASINGS = {
    "expected-alone": f"median of an even number of values\n{SESSION}\nExpected `2.5`.\n",
    "instead-of": f"median of an even number of values\n{SESSION}\nExpected 2.5 instead of 3.\n",
    "title-and-should": (
        "median([7, 8, 9, 10]) is 9\n\nThe median of an even-length list takes the upper middle "
        "value. It should be 8.5.\n"
    ),
}
# Only the wrong value is stated: the drafted test can only check that it is gone.
WRONG_VALUE_ONLY = (
    "median([7, 8, 9, 10]) is 9\n\nThe median of an even-length list takes the upper value.\n"
)

# Two computations the issue says should agree: the median of a list, and of that list with its
# median added. No value is called wrong and none is stated as expected.
DISAGREEING = (
    "Inconsistent median when the median is added to the list\n\n"
    "```pycon\n>>> from stats import median\n>>> a = [1, 2, 3, 4]\n>>> b = a + [2.5]\n"
    ">>> median(a)\n3\n>>> median(b)\n2.5\n```\n"
)
# Plain code, the printed values written as comments.
COMMENTED = (
    "Wrong median of an even number of values\n\n```python\nfrom stats import median\n"
    "median([1, 2, 3])  # 2\nmedian([1, 2, 3, 4])  # 3\n```\n"
)

# A script, and what it printed in a block of its own.
SCRIPT_THEN_OUTPUT = (
    "Wrong median of an even number of values\n\n```python\nfrom stats import median\n"
    "print('odd:')\nprint(median([1, 2, 3]))\nprint('even:')\nprint(median([1, 2, 3, 4]))\n```"
    "\n\nI get this output:\n\n```\nodd:\n2\neven:\n3\n```\n"
)
# Values shown, none called wrong: only a fix can tell which one the issue is about.
UNREMARKED = (
    "Median of four values\n\nIs this intended?\n\n```pycon\n>>> from stats import median\n"
    ">>> median([1, 2, 3])\n2\n>>> median([1, 2, 3, 4])\n3\n```\n"
)


@pytest.fixture(scope="module")
def stats_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("stats") / "stats",
        {
            "pyproject.toml": TINY_PYPROJECT.replace('"tiny"', '"stats"'),
            "stats/__init__.py": BUGGY,
            "tests/__init__.py": "",
            "tests/test_stats.py": (
                "from stats import median\n\n\ndef test_odd():\n    assert median([3, 1, 2]) == 2\n"
            ),
        },
    )


@pytest.fixture(scope="module")
def stats_env(docker_client: docker.DockerClient, stats_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(stats_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


def _reproduced(
    text: str,
    client: docker.DockerClient,
    repo: Path,
    env: EnvImage,
    settings: Settings,
) -> tuple[RepoSnapshot, Reproduction]:
    base = RepoSnapshot.from_git(repo, "HEAD", NAME)
    return base, reproduce(read_issue(text), base, env, settings, client=client)


def _only_the_right_fix_verifies(
    client: docker.DockerClient, env: EnvImage, base: RepoSnapshot, tests: Patch
) -> bool:
    statuses = {
        name: verify(client, env, base, tests, fix=fix).status
        for name, fix in (("right", RIGHT), ("lower", LOWER), ("as-float", AS_FLOAT))
    }
    return statuses == {"right": "verified", "lower": "not_verified", "as-float": "not_verified"}


@pytest.mark.parametrize("phrasing", list(PHRASINGS))
def test_a_stated_expected_value_rejects_wrong_fixes(
    phrasing: str,
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    base, result = _reproduced(PHRASINGS[phrasing], docker_client, stats_repo, stats_env, settings)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.oracle.kind is OracleKind.EXPECTED, result.to_json()["candidates"]
    assert "pytest.approx(" in result.chosen.oracle.assertion
    # Drafts that ran side by side needed distinct modules; the chosen one keeps the plain name.
    stem = "median" if phrasing == "title-and-should" else "median_even_number_values"
    assert result.chosen.draft.test_files == (f"tests/test_{stem}.py",)
    assert all(t.startswith(f"tests/test_{stem}.py::") for t in result.failing_tests)
    # Every candidate keeps its drafted test, the rejected ones too.
    drafted = [c for c in result.to_json()["candidates"] if c["outcome"] != "no-draft"]
    assert drafted and all(c["test_patch"] for c in drafted)
    if phrasing == "instead-of":
        # The session's wrong value and the expected one each gave a draft, side by side.
        assert {c["method"] for c in drafted} >= {"issue-wrong-value", "issue-expected"}
    tests = Patch(result.test_patch, name="tests.diff")

    assert _only_the_right_fix_verifies(docker_client, stats_env, base, tests)


def test_a_test_that_only_checks_the_wrong_value_is_gone_never_verifies(
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    base = RepoSnapshot.from_git(stats_repo, "HEAD", NAME)
    result = reproduce(
        read_issue(WRONG_VALUE_ONLY), base, stats_env, settings, client=docker_client
    )
    assert result.reproduced
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.oracle.kind is OracleKind.WEAK
    assert result.chosen.draft.method == "issue-wrong-value"
    tests = Patch(result.test_patch, name="tests.diff")

    # The right fix and a wrong one both pass it: neither is called verified.
    for fix in (RIGHT, LOWER):
        verdict = verify(docker_client, stats_env, base, tests, fix=fix)
        assert verdict.success is False
        assert verdict.status == "weak"
        assert any(t.fail_to_pass for t in verdict.transitions.values())

    # The comment says so, and what the test checks.
    monkeypatch.setenv("REPROBOT_CACHE_DIR", str(settings.cache_dir))
    (tmp_path / "tests.diff").write_text(result.test_patch)
    (tmp_path / "fix.diff").write_text(LOWER.diff)
    (tmp_path / "spec.json").write_text(stats_env.spec.model_dump_json())
    common = ["--repo", str(stats_repo), "--name", NAME, "--spec", str(tmp_path / "spec.json")]
    common += ["--base", "HEAD", "--tests", str(tmp_path / "tests.diff")]
    common += ["--fix", str(tmp_path / "fix.diff")]
    main(["verify", *common, "--markdown"])
    out = capsys.readouterr().out
    markdown = out[out.index("### ") :]  # after the progress lines
    assert markdown.startswith(
        "### ⚠️ Not verified: the reproducing test passes with this change, but only checks "
        "that the reported wrong value is gone"
    )
    assert "checks only that a value is no longer the one reported" in markdown
    assert "median([7, 8, 9, 10])" in markdown
    main(["verify", *common, "--json"])
    out = capsys.readouterr().out
    data = json.loads(out.strip().splitlines()[-1])
    assert data["status"] == "weak" and data["success"] is False
    assert {o["kind"] for o in data["oracles"].values()} == {"weak"}


def test_patch_aware_drafting_keeps_only_tests_the_fix_turns_green(
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    base = RepoSnapshot.from_git(stats_repo, "HEAD", NAME)
    issue = read_issue(PHRASINGS["title-and-should"])
    right = reproduce(issue, base, stats_env, settings, client=docker_client, fix=RIGHT)
    assert right.reproduced and right.patch_aware and right.to_json()["patch_aware"] is True
    assert right.chosen is not None and right.chosen.oracle is not None
    assert right.chosen.oracle.kind is OracleKind.EXPECTED

    # A wrong fix leaves the issue's expected value unmet: that test is not chosen, and the
    # only one it turns green checks no more than that the wrong value is gone.
    lower = reproduce(issue, base, stats_env, settings, client=docker_client, fix=LOWER)
    assert lower.chosen is not None and lower.chosen.oracle is not None
    assert lower.chosen.oracle.kind is OracleKind.WEAK
    reasons = [c.reason for c in lower.candidates if c.draft.method == "issue-expected"]
    assert reasons == ["fails on R for the issue's reason, but still fails with the fix"]
    tests = Patch(lower.test_patch, name="tests.diff")
    assert verify(docker_client, stats_env, base, tests, fix=LOWER).status == "weak"


def test_a_fix_that_breaks_the_projects_own_tests_of_the_changed_file_is_not_verified(
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    base, result = _reproduced(
        PHRASINGS["expected-alone"], docker_client, stats_repo, stats_env, settings
    )
    assert result.reproduced
    tests = Patch(result.test_patch, name="tests.diff")

    # The reproducing test alone accepts the even-only fix ...
    alone = verify(docker_client, stats_env, base, tests, fix=EVEN_ONLY, guard=False)
    assert alone.status == "verified" and alone.guard_modules == ()
    # ... the project's tests of stats/__init__.py, run before and after it, do not.
    guarded = verify(docker_client, stats_env, base, tests, fix=EVEN_ONLY)
    assert guarded.status == "not_verified" and guarded.success is False
    assert guarded.guard_modules == ("tests/test_stats.py",)
    assert guarded.transitions["tests/test_stats.py::test_odd"].kind == "P->F"
    assert any(t.fail_to_pass for t in guarded.transitions.values())
    assert "1 existing test(s) of tests/test_stats.py pass before this change and fail with it" in (
        guarded.reasons
    )
    assert render_verdict(guarded).startswith("### ❌ Not verified: 1 test fails with this change")
    # The right fix keeps them passing and stays verified.
    right = verify(docker_client, stats_env, base, tests, fix=RIGHT)
    assert right.status == "verified" and right.guard_modules == ("tests/test_stats.py",)
    assert "tests/test_stats.py::test_odd" not in right.transitions
    # The right fix, with the project's test module left uncollectable: its tests are broken,
    # not removed.
    mangled = Patch(
        RIGHT.diff
        + "--- a/tests/test_stats.py\n+++ b/tests/test_stats.py\n@@ -1 +1 @@\n"
        + "-from stats import median\n+from stats import median, +\n",
        name="fix.diff",
    )
    broken = verify(docker_client, stats_env, base, tests, fix=mangled)
    assert broken.status == "not_verified", broken.reasons
    assert broken.transitions["tests/test_stats.py::test_odd"].kind == "P->E"


def test_two_computations_the_issue_says_should_agree_reject_wrong_fixes(
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    base, result = _reproduced(DISAGREEING, docker_client, stats_repo, stats_env, settings)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.draft.method == "issue-expected"
    assert result.chosen.oracle.kind is OracleKind.EXPECTED
    assert result.chosen.oracle.assertion == "_agree(median(a), median(b))"
    tests = Patch(result.test_patch, name="tests.diff")
    assert _only_the_right_fix_verifies(docker_client, stats_env, base, tests)


@pytest.mark.parametrize("text", [COMMENTED, SCRIPT_THEN_OUTPUT], ids=["comments", "output-block"])
def test_values_a_script_shows_are_what_it_printed(
    text: str,
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    """Printed values shown as comments next to the code, or in a block of output after it."""
    base, result = _reproduced(text, docker_client, stats_repo, stats_env, settings)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    # The title calls the last value shown wrong: the test checks that it is gone, no more;
    # "3", not the "2" shown before it.
    assert result.chosen.draft.method == "issue-wrong-value"
    assert result.chosen.oracle.kind is OracleKind.WEAK
    assert "3" in result.failure_excerpt
    assert "assert '3' not in" in result.test_patch
    tests = Patch(result.test_patch, name="tests.diff")
    assert verify(docker_client, stats_env, base, tests, fix=RIGHT).status == "weak"


def test_knowing_the_fix_picks_the_shown_value_it_changes(
    docker_client: docker.DockerClient,
    stats_repo: Path,
    stats_env: EnvImage,
    settings: Settings,
) -> None:
    base = RepoSnapshot.from_git(stats_repo, "HEAD", NAME)
    issue = read_issue(UNREMARKED)
    # At issue time nothing says which value is wrong: no test.
    assert not reproduce(issue, base, stats_env, settings, client=docker_client).reproduced

    result = reproduce(issue, base, stats_env, settings, client=docker_client, fix=RIGHT)
    assert result.reproduced and result.patch_aware, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.draft.method == "issue-shown-value"
    assert result.chosen.oracle.kind is OracleKind.WEAK
    # The value the fix changes ("3"), not the one it keeps ("2").
    assert "assert '3' not in" in result.test_patch
    assert "assert '2' not in" not in result.test_patch
    tests = Patch(result.test_patch, name="tests.diff")
    # A weak oracle: a wrong fix that also changes the value is not called wrong, nor right.
    for fix in (RIGHT, LOWER):
        assert verify(docker_client, stats_env, base, tests, fix=fix).status == "weak"
