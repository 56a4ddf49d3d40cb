"""The list ``bench repos`` reads: text lines, JSON lines, comments, and what it refuses."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.repos.repo_list import HEAD, RepoEntry, load_repo_list, parse_repo_list

SHA = "e382e72789f8d791991c489d4322aa04e660b952"


def test_text_and_json_lines_with_comments() -> None:
    text = (
        "# the dev list\n"
        "\n"
        f"pytest-dev/pluggy {SHA}  # pinned\n"
        '{"repo": "tkem/cachetools", "commit": "28d4506f"}\n'
        "benjaminp/six\n"
        '{"repo": "pallets/markupsafe"}\n'
    )
    assert parse_repo_list(text) == [
        RepoEntry("pytest-dev/pluggy", SHA),
        RepoEntry("tkem/cachetools", "28d4506f"),
        RepoEntry("benjaminp/six", HEAD),
        RepoEntry("pallets/markupsafe", HEAD),
    ]
    assert RepoEntry("jaraco/jaraco.functools").name == "jaraco.functools"


@pytest.mark.parametrize(
    ("line", "says"),
    [
        ("pluggy " + SHA, "is not owner/name"),
        ("pytest-dev/pluggy not-a-sha", "is not a commit sha"),
        ("pytest-dev/pluggy a b", "expected 'owner/name [commit]'"),
        ('{"repo": 3}', "expected"),
        ('{"repo": "a/b", "commit": 3}', "must be a string"),
        ("{not json", "not JSON"),
    ],
)
def test_a_malformed_line_is_named(line: str, says: str) -> None:
    with pytest.raises(DatasetError, match="line 2") as info:
        parse_repo_list(f"# header\n{line}\n", "list.txt")
    assert says in str(info.value)
    assert "list.txt" in str(info.value)


def test_a_repository_listed_twice_is_refused() -> None:
    with pytest.raises(DatasetError, match=r"line 3: a/B is listed already \(line 1\)"):
        parse_repo_list("a/b\n# again\na/B\n")


def test_the_dev_list_is_well_formed() -> None:
    listed = load_repo_list(Path(__file__).parents[3] / "benchmarks" / "repos_dev.txt")
    assert len(listed) >= 40
    assert all(len(e.commit) == 40 for e in listed)
    assert RepoEntry("pytest-dev/pluggy", SHA) in listed
