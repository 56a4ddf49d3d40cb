"""Names a reporter took from the project's test fixtures become parameters of the drafted test:
the fixture reader on hand-made sources, then a draft run by pytest on a real repository."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from reprobot.generation.drafter.draft import draft_from_issue
from reprobot.generation.issue.report import parse_issue
from reprobot.generation.repo.fixtures import (
    asked_fixtures,
    fixture_names,
    tree_fixtures,
    visible_fixtures,
)
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo, pyproject

CONFTEST = """\
import pytest
from pytest import fixture

from shop import Cart


@pytest.fixture
def cart():
    return Cart()


@fixture(name="priced")
def _priced_cart(cart):
    cart.add("tea", 3)
    return cart


@pytest.fixture(scope="session")
def shop_name():
    return "corner"


def helper():
    return 1
"""


def test_fixture_names_reads_decorators_and_renames() -> None:
    assert fixture_names(CONFTEST) == {"cart", "priced", "shop_name"}
    assert fixture_names("def broken(:\n") == set()


def test_fixtures_are_visible_from_the_folders_below_their_conftest() -> None:
    sources = {
        "conftest.py": "import pytest\n\n@pytest.fixture\ndef root_level():\n    pass\n",
        "tests/conftest.py": CONFTEST,
        "tests/unit/conftest.py": "import pytest\n\n@pytest.fixture\ndef unit_only():\n    pass\n",
        "other/conftest.py": "import pytest\n\n@pytest.fixture\ndef elsewhere():\n    pass\n",
    }
    assert visible_fixtures("tests/unit/test_new.py", sources) == {
        "root_level",
        "cart",
        "priced",
        "shop_name",
        "unit_only",
    }
    assert visible_fixtures("tests/test_new.py", sources) == {
        "root_level",
        "cart",
        "priced",
        "shop_name",
    }
    assert visible_fixtures("test_top.py", sources) == {"root_level"}


SHOP = """\
class Cart:
    def __init__(self):
        self.items = {}

    def add(self, name, price):
        self.items[name] = price

    def total(self, discount=None):
        return sum(self.items.values()) * (1 - discount)
"""
ISSUE = (
    "Cart.total fails without a discount",
    "Calling `total()` on a cart with no discount raises:\n\n"
    "```python\ncart.add('tea', 3)\ncart.total()\n```\n\n"
    '```\nTraceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
    "TypeError: unsupported operand type(s) for -: 'int' and 'NoneType'\n```\n",
)


def test_a_fixture_the_snippet_uses_is_requested_and_the_draft_reproduces(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path / "shop",
        {
            "pyproject.toml": pyproject("shop"),
            "src/shop/__init__.py": SHOP,
            "tests/conftest.py": CONFTEST,
            "tests/test_cart.py": "def test_add(cart):\n    cart.add('a', 1)\n",
        },
    )
    out = draft_from_issue(parse_issue(*ISSUE), RepoSnapshot.from_git(repo, "HEAD", "acme/shop"))
    (d,) = [d for d in out.drafts if d.method == "issue-code"]
    assert not [why for _, why in out.skipped if "not found" in why]
    assert "(cart):" in d.patch.diff
    work = tmp_path / "work"
    git(tmp_path, "clone", "-q", str(repo), str(work))
    subprocess.run(
        ["git", "-C", str(work), "apply", "-"], input=d.patch.diff, text=True, check=True
    )
    env = {**os.environ, "PYTHONPATH": str(work / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", *d.test_files],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    # It fails with the issue's exception, not for a name the snippet never bound.
    assert "TypeError: unsupported operand" in proc.stdout, proc.stdout
    assert "NameError" not in proc.stdout


def test_what_written_out_tests_ask_for_and_what_the_tree_defines() -> None:
    module = (
        "import pytest\n\n\n@pytest.fixture\ndef own():\n    return 1\n\n\n"
        "@pytest.mark.parametrize('a, b', [(1, 2)])\n"
        "def test_x(a, b, own, caplog, store):\n    pass\n\n\n"
        "@pytest.mark.parametrize(['c'], [(1,)])\n"
        "def test_y(c, *, monkeypatch):\n    pass\n\n\n"
        "def helper(unrelated):\n    pass\n"
    )
    assert asked_fixtures(module) == {"caplog", "store", "monkeypatch"}
    assert asked_fixtures("def test_x(:\n") == set()
    plugin = "from _pytest.fixtures import fixture\n\n\n@fixture\ndef caplog(request):\n    pass\n"
    tree = {"src/_pytest/logging.py": plugin, "src/_pytest/other.py": "def caplog():\n    pass\n"}
    assert tree_fixtures(tree) == {"caplog"}
