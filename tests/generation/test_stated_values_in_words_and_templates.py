"""Values an issue states in words around a code span, or under an issue template's headings,
tied to the statement that showed the wrong one:

- a template's "What happened?" section holding the session, and its "What did you expect to
  happen?" section the right value (bare, in a sentence, or an IPython ``Out[2]:`` line);
- "`Y` instead of `X`" after the session;
- a sentence after the code ("I would expect the output `X` but instead I get `Y`", "returns
  `Y`, but it should return `X`").

End to end on a real project made by the test: each phrasing is read, reproduced in the real
sandbox with an expected-value oracle, and verified against a right fix and a wrong one."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import EnvImage, ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.one_file_fixes import (
    assert_expected_oracle_verifies_only_the_right_fix,
    line_edit,
)
from tests.support.repos import make_repo, pyproject

NAME = "example/tally"
FMT = '    return "%s(%s)" % (name, ", ".join(map(str, reversed(args))))\n'
MEAN = "    return sum(values) // len(values)\n"
SPAN = "    return (0, len(text) // 2)\n"
MODULE = f'''def fmt(name, *args):
    """``name(args...)`` as text."""
{FMT}

def mean(values):
{MEAN}

def span(text):
    """The first and last index of ``text``, the last one past its end."""
{SPAN}'''


def _edit(old: str, new: str) -> Patch:
    return line_edit(MODULE, "tally/__init__.py", old, new)


TEMPLATE = """fmt writes the arguments backwards

### What happened?

```pycon
>>> from tally import fmt
>>> fmt("F", "x", 2)
'F(2, x)'
```

### What did you expect to happen?

'F(x, 2)'

### Anything else we need to know?

_No response_
"""
OBSERVED = """mean drops the fraction

**Observed behaviour**

```pycon
>>> import tally
>>> tally.mean([1, 2])
1
```

**Expected behaviour**

The mean of the values, `1.5`, as `statistics.mean` gives.
"""
SENTENCE = """span stops half way

```python
from tally import span
span("abcdefgh")
```

I would expect the output `(0, 8)` but instead I get `(0, 4)`.
"""
RETURNS = """span stops half way

```python
import tally
tally.span("abcdefgh")
```
returns `(0, 4)`, but it should return `(0, 8)`.
"""
INSTEAD = """fmt writes the arguments backwards

```
>>> import tally
>>> tally.fmt("F", "x", 2)
'F(2, x)'
```
The result is `'F(2, x)'` instead of `'F(x, 2)'`, which breaks our parser.
"""
IPYTHON = """mean drops the fraction

### Describe the bug
The mean is rounded down.

### To Reproduce
```python
In [1]: from tally import mean

In [2]: mean([1, 2])
Out[2]: 1
```

### Expected behavior
```python
Out[2]: 1.5
```
"""

RIGHT_SPAN = _edit(SPAN, "    return (0, len(text))")
WRONG_SPAN = _edit(SPAN, "    return (0, len(text) - 1)")
RIGHT_FMT = _edit(FMT, '    return "%s(%s)" % (name, ", ".join(map(str, args)))')
WRONG_FMT = _edit(FMT, '    return "%s(%s)" % (name, "; ".join(map(str, args)))')
RIGHT_MEAN = _edit(MEAN, "    return sum(values) / len(values)")
WRONG_MEAN = _edit(MEAN, "    return round(sum(values) / len(values) + 0.01, 2)")
CASES = {
    # (issue, the fix that does what it expects, one that changes the value to another)
    "template": (TEMPLATE, RIGHT_FMT, WRONG_FMT),
    "observed": (OBSERVED, RIGHT_MEAN, WRONG_MEAN),
    "instead": (INSTEAD, RIGHT_FMT, WRONG_FMT),
    "ipython": (IPYTHON, RIGHT_MEAN, WRONG_MEAN),
    "sentence": (SENTENCE, RIGHT_SPAN, WRONG_SPAN),
    "returns": (RETURNS, RIGHT_SPAN, WRONG_SPAN),
}


@pytest.fixture(scope="module")
def tally_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("tally") / "tally",
        {
            "pyproject.toml": pyproject("tally", 'requires-python = ">=3.9"\n'),
            "tally/__init__.py": MODULE,
            "tests/__init__.py": "",
            "tests/test_tally.py": (
                "import tally\n\n\ndef test_mean():\n    assert tally.mean([2, 4]) == 3\n"
            ),
        },
    )


@pytest.fixture(scope="module")
def tally_env(docker_client: docker.DockerClient, tally_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(tally_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_stated_value_is_asserted_and_only_a_fix_giving_it_is_verified(
    case: str,
    docker_client: docker.DockerClient,
    tally_repo: Path,
    tally_env: EnvImage,
    settings: Settings,
) -> None:
    text, right, wrong = CASES[case]
    assert_expected_oracle_verifies_only_the_right_fix(
        text, tally_repo, NAME, tally_env, settings, docker_client, right, wrong
    )
