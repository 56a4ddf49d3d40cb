"""A code block, what it showed in a block or an "Actual" section of its own, and the value an
"Expected" section right after it states: the statement must show the expected value. End to end
on a real project made by the test: each phrasing is read, reproduced in the real sandbox with an
expected-value oracle, and verified against a right fix and a wrong one. One reporter uses their
own short name for the package without importing it (``shf``)."""

from __future__ import annotations

from pathlib import Path

import docker
import pytest

from reprobot.generation.drafter.snippets import code_programs
from reprobot.generation.issue.file import read_issue
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

NAME = "example/shelf"
TOP = "        return Shelf(self.items[:n])\n"
KIND = "    return Label if isinstance(spec, str) else str\n"
PACK = "    return Box(list(items))\n"
MODULE = f"""from collections import OrderedDict


class Label:
    pass


class Box:
    def __init__(self, items):
        self.items = items

    def __repr__(self):
        return "<shelf.Box ()>\\nsize(%d)" % len(self.items)


class Shelf:
    def __init__(self, items, tags=None):
        self.items = list(items)
        self.tags = OrderedDict(tags or {{}})

    def top(self, n, keep_tags=False):
{TOP}

def kind_of(spec):
{KIND}

def pack(items, skip_empty=False):
{PACK}"""


def _edit(old: str, new: str) -> Patch:
    return line_edit(MODULE, "shelf/__init__.py", old, new)


RETURNS = """Shelf.top does not honor `keep_tags`

#### Code Sample

```python
from shelf import Shelf
s = Shelf([1, 2, 3], tags={'owner': 'me'})
out = s.top(2, keep_tags=True)
out.tags
```
returns
```
OrderedDict()
```

#### Expected Output
```
OrderedDict([('owner', 'me')])
```
"""
SECTIONS = """kind_of gives the wrong class for a tuple of names

Running the code (`shf` is how I import shelf):
```
print(shf.kind_of(('a', 'b')))
```
#### Expected result:
<class 'shelf.Label'>

#### Actual result:
<class 'str'>
"""
DISPLAY = """pack ignores skip_empty

```python
from shelf import pack
pack(['a', '', 'b'], skip_empty=True)
```
Returns

```
<shelf.Box ()>
size(3)
```

#### Expected Output
```
<shelf.Box ()>
size(2)
```

#### Versions
shelf 0.1
"""

CASES = {
    # (issue, the fix that does what it expects, one that changes the value to another)
    "returns": (
        RETURNS,
        _edit(TOP, "        return Shelf(self.items[:n], self.tags if keep_tags else None)"),
        _edit(TOP, "        return Shelf(self.items[:n], {k: None for k in self.tags})"),
    ),
    "sections": (
        SECTIONS,
        _edit(KIND, "    return Label if isinstance(spec, (str, tuple)) else str"),
        _edit(KIND, "    return Label if isinstance(spec, str) else type(spec)"),
    ),
    "display": (
        DISPLAY,
        _edit(PACK, "    return Box([i for i in items if i or not skip_empty])"),
        _edit(PACK, "    return Box(list(items)[:1])"),
    ),
}


@pytest.mark.parametrize(
    ("text", "shown", "expected"),
    [
        (RETURNS, "OrderedDict()", "OrderedDict([('owner', 'me')])"),
        (SECTIONS, "<class 'str'>", "<class 'shelf.Label'>"),
        (DISPLAY, "<shelf.Box ()>\nsize(3)", "<shelf.Box ()>\nsize(2)"),
    ],
    ids=["returns", "sections", "display"],
)
def test_the_statement_carries_what_it_showed_and_what_is_expected(
    text: str, shown: str, expected: str
) -> None:
    (program, *_) = code_programs(read_issue(text))
    last = program.steps[-1]
    assert (last.output, last.expected) == (shown, expected)
    # The blocks of values that read as Python are not code.
    assert not any(s.source.startswith("OrderedDict") for s in program.steps)


@pytest.fixture(scope="module")
def shelf_repo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_repo(
        tmp_path_factory.mktemp("shelf") / "shelf",
        {
            "pyproject.toml": pyproject("shelf", 'requires-python = ">=3.9"\n'),
            "shelf/__init__.py": MODULE,
            "tests/__init__.py": "",
            "tests/test_shelf.py": "import shelf\n\n\ndef test_import():\n    assert shelf.Shelf\n",
        },
    )


@pytest.fixture(scope="module")
def shelf_env(docker_client: docker.DockerClient, shelf_repo: Path, settings: Settings) -> EnvImage:
    snapshot = RepoSnapshot.from_git(shelf_repo, "HEAD", NAME)
    return ensure_environment(docker_client, EnvSpec(python="3.11"), snapshot, settings)


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_expected_value_is_asserted_and_only_a_fix_giving_it_is_verified(
    case: str,
    docker_client: docker.DockerClient,
    shelf_repo: Path,
    shelf_env: EnvImage,
    settings: Settings,
) -> None:
    text, right, wrong = CASES[case]
    assert_expected_oracle_verifies_only_the_right_fix(
        text, shelf_repo, NAME, shelf_env, settings, docker_client, right, wrong
    )
