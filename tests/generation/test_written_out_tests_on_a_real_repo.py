"""Tests an issue writes out, end to end on a real project made by the test: a reporter's
proposed regression test, a pytest function asking for pytest's fixtures and the project's own,
is drafted as the project's test as written (not wrapped in another test that never calls it),
reproduced in the real sandbox, and verified against a right fix and not a wrong one. Drafted
without the sandbox: a pytest issue's example module whose runner session the issue shows, a
``TestCase`` method pasted alone, fixtures nobody offers, and a project whose runner is not
pytest."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.generation.drafter.draft import draft_from_issue
from reprobot.generation.drafter.test_style import style_for
from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.one_file_fixes import line_edit
from tests.support.repos import make_repo, pyproject

NAME = "example/kv"
LOAD = "    return path.read_text()[:-1]\n"
MODULE = f"""import os


def save(path, data):
    path.write_text(data + os.environ.get("KV_SUFFIX", ""))


def load(path):
{LOAD}"""
CONFTEST = (
    "import pytest\n\n\n@pytest.fixture\ndef store(tmp_path):\n    return tmp_path / 'store'\n"
)
RIGHT = line_edit(MODULE, "kv/__init__.py", LOAD, "    return path.read_text()")
WRONG = line_edit(MODULE, "kv/__init__.py", LOAD, "    return path.read_text() + '!'")

PROPOSED = """load drops the last character

A round trip loses the last character of what was saved. A regression test could be:

```python
from kv import load, save


def test_round_trip(store, monkeypatch):
    monkeypatch.delenv("KV_SUFFIX", raising=False)
    save(store, "abc")
    assert load(store) == "abc"


test_round_trip()
```
"""


def _issue_with(block: str, after: str = "") -> str:
    return f"load drops the last character\n\n```python\n{block}```\n{after}"


@pytest.fixture(scope="module")
def kv_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("kv") / "kv",
        {
            "pyproject.toml": pyproject("kv", 'requires-python = ">=3.9"\n'),
            "kv/__init__.py": MODULE,
            "tests/__init__.py": "",
            "tests/conftest.py": CONFTEST,
            "tests/test_kv.py": (
                "from kv import save\n\n\ndef test_save(store):\n"
                "    save(store, 'x')\n    assert store.exists()\n"
            ),
        },
    )


@pytest.fixture(scope="module")
def kv_env(docker_client: docker.DockerClient, kv_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(kv_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


def test_a_proposed_regression_test_is_run_as_written_and_verifies_the_right_fix(
    docker_client: docker.DockerClient, kv_repo: Path, kv_env: EnvImage, settings: Settings
) -> None:
    base = RepoSnapshot.from_git(kv_repo, "HEAD", NAME)
    result = reproduce(read_issue(PROPOSED), base, kv_env, settings, client=docker_client)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.draft.method == "issue-code"
    # The reporter's test at the module's top level, its fixtures pytest's and the project's;
    # the script's own call of it left to pytest.
    added = [line[1:] for line in result.test_patch.splitlines() if line.startswith("+")]
    assert "def test_round_trip(store, monkeypatch):" in added
    assert "test_round_trip()" not in added
    assert all(t.endswith("::test_round_trip") for t in result.failing_tests)
    tests = Patch(result.test_patch, name="tests.diff")

    assert verify(docker_client, kv_env, base, tests, fix=RIGHT).status == "verified"
    assert verify(docker_client, kv_env, base, tests, fix=WRONG).status == "not_verified"


def _drafts(repo: Path, text: str, test_cmd: str = "pytest") -> tuple[list[str], list[str]]:
    """(the issue-code drafts' added texts, why drafts were skipped) at issue time."""
    base = RepoSnapshot.from_git(repo, "HEAD", NAME)
    drafted = draft_from_issue(read_issue(text), base, style=style_for(test_cmd))
    texts = [
        "\n".join(line[1:] for line in d.patch.diff.splitlines() if line.startswith("+"))
        for d in drafted.drafts
        if d.method == "issue-code"
    ]
    return texts, [why for _, why in drafted.skipped]


def test_tests_the_issue_writes_out_stay_as_written_only_where_pytest_runs_them(
    kv_repo: Path,
) -> None:
    written, _ = _drafts(kv_repo, PROPOSED)
    assert written and "\ndef test_round_trip(store, monkeypatch):" in written[0]

    # A runner's session shown for the module: its report is the problem, not the test.
    session = "\n```\n============ test session starts ============\ncollected 1 item\n```\n"
    example = "from kv import load\n\n\ndef test_example(tmp_path):\n    load(tmp_path)\n"
    shown, _ = _drafts(kv_repo, _issue_with(example, session))
    assert all("\ndef test_example(" not in text for text in shown)

    # A TestCase method pasted alone is no pytest function.
    method = "from kv import load\n\n\ndef test_load(self):\n    load(self.path)\n"
    pasted, _ = _drafts(kv_repo, _issue_with(method))
    assert all("\ndef test_load(self):" not in text for text in pasted)

    # Fixtures neither pytest nor the project offers: skipped, and said why.
    unknown = "from kv import load\n\n\ndef test_load(db, store):\n    load(store)\n"
    none, skipped = _drafts(kv_repo, _issue_with(unknown))
    assert not none
    assert "the issue's tests ask for fixtures the project does not offer: db" in skipped

    # A parametrized argument is no fixture.
    marked = (
        "import pytest\nfrom kv import load\n\n\n@pytest.mark.parametrize('data', ['a', 'bc'])\n"
        "def test_load(data, store):\n    load(store)\n"
    )
    parametrized, _ = _drafts(kv_repo, _issue_with(marked))
    assert parametrized and "\ndef test_load(data, store):" in parametrized[0]

    # Under the unittest family's runner.
    _, under_unittest = _drafts(kv_repo, PROPOSED, "python -m unittest discover")
    assert (
        "the issue's tests are pytest functions; the project's runner does not collect them"
        in under_unittest
    )
