"""Issues read for more than a session's values, end to end on a real project made by the test:
a setting the issue proposes to change, a crash of the project's command on text ``echo`` pipes
in, an operation the issue calls incomplete, and a truth value it calls wrong. Each is reproduced
in the real sandbox, then verified against a right fix and a wrong one."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.generation.issue.file import read_issue
from reprobot.generation.pool.reproduce import reproduce
from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.oracles import OracleKind
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.verify import verify
from tests.support.one_file_fixes import line_edit
from tests.support.repos import make_repo, pyproject

NAME = "example/tally"
SEPARATOR = 'DEFAULT_SEPARATOR = ","\n'
COUNT = "    fields = sys.stdin.read().strip().split(DEFAULT_SEPARATOR)\n"
MODULE = f"""import re
import sys

{SEPARATOR}

def main():
{COUNT}    if not fields[-1]:
        raise RuntimeError("Dropped an empty field: " + repr(fields))
    print(len(fields))
    return 0


def squeeze(path):
    return path.replace("//", "/")
"""


def _edit(old: str, new: str) -> Patch:
    """A change of one line of tally/__init__.py."""
    return line_edit(MODULE, "tally/__init__.py", old, new)


SQUEEZE = '    return path.replace("//", "/")\n'
SEMICOLON = _edit(SEPARATOR, 'DEFAULT_SEPARATOR = ";"')
TAB = _edit(SEPARATOR, 'DEFAULT_SEPARATOR = "\\t"')
# Empty fields dropped: the crash is gone.
DROP_EMPTY = _edit(
    COUNT, "    fields = [f for f in sys.stdin.read().strip().split(DEFAULT_SEPARATOR) if f]"
)
# Every run of slashes becomes one: complete. Runs of two or three only: still short of it.
SQUEEZE_ALL = _edit(SQUEEZE, '    return re.sub("/+", "/", path)')
SQUEEZE_SOME = _edit(SQUEEZE, '    return re.sub("/{2,3}", "/", path)')

PROPOSAL = """Use a semicolon as the default separator

Currently it is:

> DEFAULT_SEPARATOR = ","

Files exported with a European locale separate fields with semicolons. Using
`DEFAULT_SEPARATOR = ";"` instead would read them as they are.
"""
PIPED = """tally crashes on a trailing separator

```console
(.venv) ?main ~/src/tally> echo "a,b," | tally -
Traceback (most recent call last):
  File "/home/me/src/tally/tally/__init__.py", line 8, in main
    raise RuntimeError("Dropped an empty field: " + repr(fields))
RuntimeError: Dropped an empty field: ['a', 'b', '']
```
"""


@pytest.fixture(scope="module")
def tally_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("tally") / "tally",
        {
            "pyproject.toml": pyproject(
                "tally", 'requires-python = ">=3.9"\n\n[project.scripts]\ntally = "tally:main"\n'
            ),
            "tally/__init__.py": MODULE,
            "tests/__init__.py": "",
            "tests/test_tally.py": "import tally\n\n\ndef test_import():\n    assert tally.main\n",
        },
    )


@pytest.fixture(scope="module")
def tally_env(docker_client: docker.DockerClient, tally_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(tally_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


def _reproduced_by(
    text: str,
    shape: str,
    client: docker.DockerClient,
    repo: Path,
    env: EnvImage,
    settings: Settings,
) -> tuple[RepoSnapshot, Patch]:
    """The base and the chosen test of the issue ``text``, which ``issue-expected`` drafted in
    the shape its note names (``shape``, words of the note) and which checks a result."""
    base = RepoSnapshot.from_git(repo, "HEAD", NAME)
    result = reproduce(read_issue(text), base, env, settings, client=client)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.draft.method == "issue-expected"
    assert shape in result.chosen.draft.note, result.chosen.draft.note
    assert result.chosen.oracle.kind is OracleKind.EXPECTED
    return base, Patch(result.test_patch, name="tests.diff")


def test_a_proposed_setting_verifies_only_the_proposed_value(
    docker_client: docker.DockerClient,
    tally_repo: Path,
    tally_env: EnvImage,
    settings: Settings,
) -> None:
    base, tests = _reproduced_by(
        PROPOSAL, "as the issue proposes", docker_client, tally_repo, tally_env, settings
    )

    assert verify(docker_client, tally_env, base, tests, fix=SEMICOLON).status == "verified"
    assert verify(docker_client, tally_env, base, tests, fix=TAB).status == "not_verified"


def test_a_crash_on_piped_text_is_run_through_the_projects_command(
    docker_client: docker.DockerClient,
    tally_repo: Path,
    tally_env: EnvImage,
    settings: Settings,
) -> None:
    base = RepoSnapshot.from_git(tally_repo, "HEAD", NAME)
    result = reproduce(read_issue(PIPED), base, tally_env, settings, client=docker_client)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.draft.method == "issue-command"
    assert "input='a,b,\\n'" in result.test_patch
    assert "RuntimeError" in result.failure_excerpt
    tests = Patch(result.test_patch, name="tests.diff")

    # The test only checks that the crash is gone: the fix passes it, but is not verified.
    verdict = verify(docker_client, tally_env, base, tests, fix=DROP_EMPTY)
    assert verdict.status == "weak"
    assert any(t.fail_to_pass for t in verdict.transitions.values())


INCOMPLETE = """squeeze stops incomplete

Squeezing a path leaves it incomplete when it has long runs of slashes:

```python
>>> from tally import squeeze
>>> squeeze("a////b")
'a//b'
```
"""


def test_an_operation_called_incomplete_verifies_only_a_complete_result(
    docker_client: docker.DockerClient,
    tally_repo: Path,
    tally_env: EnvImage,
    settings: Settings,
) -> None:
    base, tests = _reproduced_by(
        INCOMPLETE, "must be complete", docker_client, tally_repo, tally_env, settings
    )

    assert verify(docker_client, tally_env, base, tests, fix=SQUEEZE_ALL).status == "verified"
    # "a////b" becomes "a//b" again, by another route: still incomplete.
    assert verify(docker_client, tally_env, base, tests, fix=SQUEEZE_SOME).status == "not_verified"


COMPARED = """squeeze gives a wrong result for long runs of slashes

```python
>>> from tally import squeeze
>>> squeeze("a////b") == "a/b"
False
```
"""


def test_a_truth_value_called_wrong_verifies_only_the_other_one(
    docker_client: docker.DockerClient,
    tally_repo: Path,
    tally_env: EnvImage,
    settings: Settings,
) -> None:
    base, tests = _reproduced_by(
        COMPARED, ": the issue calls", docker_client, tally_repo, tally_env, settings
    )
    assert verify(docker_client, tally_env, base, tests, fix=SQUEEZE_ALL).status == "verified"
    assert verify(docker_client, tally_env, base, tests, fix=SQUEEZE_SOME).status == "not_verified"
