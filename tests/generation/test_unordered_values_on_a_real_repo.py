"""Expected values whose items the project prints in an order of its own, end to end on a real
project made by the test: a sum whose terms the reporter wrote in another order than the fixed
code prints them, and a set printed in the order of the hash seed. Each is reproduced in the
real sandbox and the right fix is verified: compared as written, the drafted test would fail on
the fixed code too, and the issue would carry a false "reproduced" label. A fix that gives other
items is still not verified."""

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

NAME = "example/algebra"
SQUARE = '    return Sum([f"{a}**2", str(b * b)])\n'
NAMES = '    return Names(expression.replace(" ", "").split("+"))\n'
MODULE = f"""import re


class Sum:
    def __init__(self, terms):
        self.terms = terms

    def __repr__(self):
        return " + ".join(self.terms)


class Names:
    def __init__(self, names):
        self.names = set(names)

    def __repr__(self):
        return "{{" + ", ".join(self.names) + "}}"


def square_of_sum(a, b):
{SQUARE}

def free_names(expression):
{NAMES}"""


def _edit(old: str, new: str) -> Patch:
    return line_edit(MODULE, "algebra/__init__.py", old, new)


# The fixed code prints the square's terms by falling degree, the set in the hash seed's order.
SQUARE_RIGHT = _edit(SQUARE, '    return Sum([f"{a}**2", f"{2 * b}*{a}", str(b * b)])')
SQUARE_WRONG = _edit(SQUARE, '    return Sum([f"{a}**2", f"{b}*{a}", str(b * b)])')
NAMES_RIGHT = _edit(NAMES, '    return Names(re.findall(r"[a-z]\\w*", expression))')
NAMES_WRONG = _edit(NAMES, '    return Names(re.findall(r"[a-y]\\w*", expression))')

SUM_ISSUE = """square_of_sum drops the middle term

```pycon
>>> from algebra import square_of_sum
>>> square_of_sum("x", 3)
x**2 + 9
```

Expected `9 + 6*x + x**2`.
"""
SET_ISSUE = """free_names misses names inside products

```pycon
>>> from algebra import free_names
>>> free_names("x + y*z")
{y*z, x}
```

Expected `{z, y, x}`.
"""


@pytest.fixture(scope="module")
def algebra_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("algebra") / "algebra",
        {
            "pyproject.toml": pyproject("algebra", 'requires-python = ">=3.9"\n'),
            "algebra/__init__.py": MODULE,
            "tests/__init__.py": "",
            "tests/test_algebra.py": (
                "from algebra import square_of_sum\n\n\ndef test_zero():\n"
                "    assert repr(square_of_sum('x', 0)).startswith('x**2 + ')\n"
            ),
        },
    )


@pytest.fixture(scope="module")
def algebra_env(
    docker_client: docker.DockerClient, algebra_repo: Path, settings: Settings
) -> EnvImage:
    snapshot = RepoSnapshot.from_git(algebra_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


@pytest.mark.parametrize(
    ("issue", "right", "wrong"),
    [(SUM_ISSUE, SQUARE_RIGHT, SQUARE_WRONG), (SET_ISSUE, NAMES_RIGHT, NAMES_WRONG)],
    ids=["sum", "set"],
)
def test_an_expected_value_in_another_order_verifies_the_right_fix(
    issue: str,
    right: Patch,
    wrong: Patch,
    docker_client: docker.DockerClient,
    algebra_repo: Path,
    algebra_env: EnvImage,
    settings: Settings,
) -> None:
    base = RepoSnapshot.from_git(algebra_repo, "HEAD", NAME)
    result = reproduce(read_issue(issue), base, algebra_env, settings, client=docker_client)
    assert result.reproduced, result.to_json()["candidates"]
    assert result.chosen is not None and result.chosen.oracle is not None
    assert result.chosen.oracle.kind is OracleKind.EXPECTED, result.test_patch
    assert "_any_order(" in result.test_patch
    tests = Patch(result.test_patch, name="tests.diff")

    assert verify(docker_client, algebra_env, base, tests, fix=right).status == "verified"
    assert verify(docker_client, algebra_env, base, tests, fix=wrong).status == "not_verified"
