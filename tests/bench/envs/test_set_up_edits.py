"""An environment table's set-up edits of the tree (``pre_install``), read with the host's sed in
its sandbox mode, and a candidate fix without them, on real git repositories in tmp_path."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from reprobot.bench.envs.set_up_edits import set_up_edits, without_set_up_edits
from reprobot.validation import Patch, RepoSnapshot, diff_between
from tests.support.repos import commit_files, git, make_repo

TOX = "[testenv]\ncommands=\n    pytest --durations 25 {posargs}\n"
SETUP = "install_requires = [\n    'Jinja2>=2.3',\n    'packaging',\n]\n"
TOML = '[build-system]\nrequires = ["setuptools",\n            "wheel"]\n'

# The shapes SWE-bench's environment table gives its steps in.
STEPS = (
    "sed -i 's/pytest/pytest -rA/' tox.ini",
    "sed -i 's/Jinja2>=2.3/Jinja2<3.0/' setup.py",
    "sed -i \"s/'packaging',/'packaging', 'markupsafe<=2.0.1',/\" setup.py",
    "grep -q 'absent-name' setup.py && sed -i 's/packaging/PACKAGING/' setup.py",
    'sed -i \'s/requires = \\["setuptools",/requires = \\["setuptools==68.0.0",/\' pyproject.toml',
    "apt-get update && apt-get install -y graphviz",
    "echo 'en_US UTF-8' > /etc/locale.gen",
)


def files() -> dict[str, str]:
    return {"tox.ini": TOX, "setup.py": SETUP, "pyproject.toml": TOML, "pkg/mod.py": "X = 1\n"}


def reader(tree: dict[str, str]) -> Callable[[str], bytes | None]:
    def read(path: str) -> bytes | None:
        return tree[path].encode() if path in tree else None

    return read


def test_the_edits_are_sed_s_own_and_nothing_else_runs() -> None:
    edits = set_up_edits(STEPS, reader(files()))
    assert edits == {
        "tox.ini": TOX.replace("pytest", "pytest -rA").encode(),
        "setup.py": SETUP.replace("Jinja2>=2.3", "Jinja2<3.0")
        .replace("'packaging',", "'packaging', 'markupsafe<=2.0.1',")
        .encode(),
        "pyproject.toml": TOML.replace('"setuptools",', '"setuptools==68.0.0",').encode(),
    }


def test_a_guard_that_holds_lets_its_edit_through() -> None:
    step = "grep -q 'Jinja2>=2.3' setup.py && sed -i 's/Jinja2>=2.3/Jinja2>=2.3,<3/' setup.py"
    assert set_up_edits([step], reader(files())) == {
        "setup.py": SETUP.replace("Jinja2>=2.3", "Jinja2>=2.3,<3").encode()
    }


def test_an_alternative_runs_when_the_guard_fails() -> None:
    step = (
        "grep -q 'Jinja2>=9' setup.py && sed -i 's/Jinja2>=9/Jinja2>=9,<10/' setup.py "
        "|| sed -i 's/Jinja2>=2.3/Jinja2>=2.3,<3/' setup.py"
    )
    assert set_up_edits([step], reader(files())) == {
        "setup.py": SETUP.replace("Jinja2>=2.3", "Jinja2>=2.3,<3").encode()
    }


def test_a_step_that_could_do_more_than_edit_the_tree_edits_nothing(tmp_path: Path) -> None:
    copy, pwned = tmp_path / "copy", tmp_path / "pwned"
    steps = [
        "sed -i 's/pytest/x/' ../outside.ini",  # outside the tree
        "sed -i 's/pytest/x/' /etc/passwd",
        f"sed -i 's/pytest/x/w {copy}' tox.ini",  # sed's own write: refused in sandbox mode
        f"sed -i '1e touch {pwned}' tox.ini",  # sed's own command execution: refused
        "sed -i 's/pytest/x/' tox.ini; rm -rf pkg",  # more than a chain of edits
        "sed -i 's/pytest/x/' tox.ini | tee log",
        "sed -i --follow-symlinks 's/pytest/x/' tox.ini",  # an option not read
        "sed -i 's/pytest/x/' absent.ini",
        "grep -q pytest tox.ini",  # a guard with no edit
    ]
    for step in steps:
        assert set_up_edits([step], reader(files())) == {}, step
    assert not copy.exists() and not pwned.exists()


def repo_with(tmp_path: Path, edited: dict[str, str]) -> tuple[RepoSnapshot, Patch]:
    repo = make_repo(tmp_path / "repo", files())
    base = RepoSnapshot.from_git(repo, git(repo, "rev-parse", "HEAD"))
    head = RepoSnapshot.from_git(repo, commit_files(repo, edited, "agent's tree"))
    return base, diff_between(base, head)


def test_a_fix_loses_only_the_files_it_leaves_as_the_set_up_makes_them(tmp_path: Path) -> None:
    tree = files()
    edits = set_up_edits(STEPS, reader(tree))
    base, fix = repo_with(
        tmp_path,
        {
            "tox.ini": edits["tox.ini"].decode(),  # exactly the set-up's
            "setup.py": edits["setup.py"].decode() + "# and more\n",  # the set-up's and more
            "pkg/mod.py": "X = 2\n",
        },
    )
    kept, left_out = without_set_up_edits(base, fix, edits)
    assert left_out == ("tox.ini",)
    assert sorted(kept.files) == ["pkg/mod.py", "setup.py"]
    # Nothing to leave out: the same patch back.
    assert without_set_up_edits(base, kept, edits) == (kept, ())
    assert without_set_up_edits(base, fix, {}) == (fix, ())
