"""EnvSpec's content hash, manifest selection and fingerprint: what tags environment images."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from reprobot.validation.env.env_image import repo_slug
from reprobot.validation.env.envspec import (
    EnvSpec,
    environment_key,
    manifest_paths,
    manifests_fingerprint,
)
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, git, make_repo

FP = "f" * 64
BASE = "sha256:" + "b" * 64


def key(spec: EnvSpec, fingerprint: str = FP, base: str = BASE) -> str:
    return environment_key(spec, fingerprint, base)


# --- environment_key ------------------------------------------------------------------------


def test_key_is_stable_and_short() -> None:
    one = key(EnvSpec(python="3.9", requirements=("requirements.txt",), env={"A": "1"}))
    two = key(EnvSpec(python="3.9", requirements=("requirements.txt",), env={"A": "1"}))
    assert one == two
    assert len(one) == 20
    assert all(c in "0123456789abcdef" for c in one)


def test_key_ignores_how_defaults_and_dicts_are_spelled() -> None:
    assert key(EnvSpec()) == key(EnvSpec(python="3.11", install="python -m pip install -e ."))
    assert key(EnvSpec(env={"A": "1", "B": "2"})) == key(EnvSpec(env={"B": "2", "A": "1"}))


@pytest.mark.parametrize(
    "changed",
    [
        EnvSpec(python="3.9"),
        EnvSpec(python="3.13"),
        EnvSpec(requirements=("requirements.txt",)),
        EnvSpec(pip_packages=("numpy==1.26.4",)),
        EnvSpec(pre_install=("apt-get install -y libxml2-dev",)),
        EnvSpec(install="python -m pip install -e '.[test]'"),
        EnvSpec(test_cmd="pytest -x"),
        EnvSpec(env={"DJANGO_SETTINGS_MODULE": "app.settings"}),
    ],
)
def test_every_field_changes_the_key(changed: EnvSpec) -> None:
    assert key(changed) != key(EnvSpec())


def test_order_of_requirements_matters() -> None:
    a = EnvSpec(requirements=("a.txt", "b.txt"))
    b = EnvSpec(requirements=("b.txt", "a.txt"))
    assert key(a) != key(b)


def test_fingerprint_and_base_change_the_key() -> None:
    spec = EnvSpec()
    assert key(spec, fingerprint="0" * 64) != key(spec)
    assert key(spec, base="sha256:" + "c" * 64) != key(spec)


def test_parts_do_not_run_into_each_other() -> None:
    # "ab" + "c" and "a" + "bc" must not hash alike.
    spec = EnvSpec()
    assert environment_key(spec, "ab", "c") != environment_key(spec, "a", "bc")


def test_canonical_json_is_sorted_and_compact() -> None:
    text = EnvSpec(env={"B": "2", "A": "1"}).canonical_json()
    assert " " not in text.replace("python -m pip install -e .", "")
    assert text.index('"env"') < text.index('"install"') < text.index('"python"')
    assert '"env":{"A":"1","B":"2"}' in text


def test_spec_is_frozen_and_strict() -> None:
    with pytest.raises(ValidationError):
        EnvSpec.model_validate({"python": "3.10"})
    with pytest.raises(ValidationError):
        EnvSpec.model_validate({"pyhton": "3.9"})
    spec = EnvSpec()
    with pytest.raises(ValidationError):
        spec.python = "3.9"  # type: ignore[misc]


# --- manifest_paths -------------------------------------------------------------------------


def test_manifest_paths_selection() -> None:
    files = [
        "setup.py",
        "pyproject.toml",
        "setup.cfg",
        "tox.ini",
        "requirements.txt",
        "requirements-dev.txt",
        "requirements.in",
        "requirements/test.txt",
        "requirements/base.in",
        "requirements/sub/deep.txt",
        "docs/requirements.txt",
        "sub/setup.py",
        "sub/pyproject.toml",
        "dev-requirements.txt",
        "README.md",
        "src/pkg/__init__.py",
        "requirements.txt.bak",
    ]
    assert manifest_paths(files, EnvSpec()) == [
        "pyproject.toml",
        "requirements-dev.txt",
        "requirements.in",
        "requirements.txt",
        "requirements/base.in",
        "requirements/test.txt",
        "setup.cfg",
        "setup.py",
        "tox.ini",
    ]


def test_manifest_paths_adds_the_specs_requirements_that_exist() -> None:
    files = ["setup.py", "ci/deps.txt", "dev-requirements.txt"]
    spec = EnvSpec(requirements=("ci/deps.txt", "dev-requirements.txt", "absent.txt"))
    assert manifest_paths(files, spec) == ["ci/deps.txt", "dev-requirements.txt", "setup.py"]


def test_manifest_paths_without_manifests() -> None:
    assert manifest_paths(["main.py", "README"], EnvSpec()) == []


# --- manifests_fingerprint on real repositories ----------------------------------------------

FILES = {
    "pyproject.toml": "[project]\nname = 'x'\nversion = '1'\n",
    "requirements.txt": "requests==2.31.0\n",
    "src/x/__init__.py": "VALUE = 1\n",
    "README.md": "hello\n",
}


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo", FILES)


def _fp(repo: Path, ref: str = "HEAD", spec: EnvSpec | None = None) -> str:
    return manifests_fingerprint(RepoSnapshot.from_git(repo, ref), spec or EnvSpec())


def test_fingerprint_is_stable_across_commits_that_leave_manifests_alone(repo: Path) -> None:
    before = _fp(repo)
    commit_files(repo, {"src/x/__init__.py": "VALUE = 2\n", "README.md": "changed\n"}, "code")
    commit_files(repo, {"docs/requirements.txt": "sphinx\n", "sub/setup.py": "x\n"}, "more")
    assert _fp(repo) == before
    assert len(before) == 64


def test_fingerprint_is_the_same_for_the_same_content_in_another_repository(
    repo: Path, tmp_path: Path
) -> None:
    other = make_repo(tmp_path / "other", FILES)
    assert _fp(other) == _fp(repo)


@pytest.mark.parametrize(
    "change",
    [
        {"pyproject.toml": "[project]\nname = 'x'\nversion = '2'\n"},
        {"requirements.txt": "requests==2.32.0\n"},
        {"setup.cfg": "[metadata]\nname = x\n"},
        {"requirements/test.txt": "pytest\n"},
        {"tox.ini": "[tox]\n"},
    ],
)
def test_any_manifest_change_changes_the_fingerprint(repo: Path, change: dict[str, str]) -> None:
    before = _fp(repo)
    commit_files(repo, change, "manifest")
    assert _fp(repo) != before
    # The older commit still hashes as before.
    assert _fp(repo, "HEAD~1") == before


def test_renaming_a_manifest_changes_the_fingerprint(repo: Path) -> None:
    before = _fp(repo)
    git(repo, "mv", "requirements.txt", "requirements-base.txt")
    git(repo, "commit", "-q", "-m", "rename")
    assert _fp(repo) != before


def test_spec_requirements_take_part_in_the_fingerprint(repo: Path) -> None:
    commit_files(repo, {"ci/deps.txt": "a\n"}, "ci deps")
    spec = EnvSpec(requirements=("ci/deps.txt",))
    before = _fp(repo, spec=spec)
    assert before != _fp(repo)
    commit_files(repo, {"ci/deps.txt": "b\n"}, "ci deps changed")
    assert _fp(repo, spec=spec) != before


# --- repo_slug ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("repo_name", "slug"),
    [
        ("Owner/Name", "owner-name"),
        ("psf/requests", "psf-requests"),
        ("a_b/c.d", "a-b-c-d"),
        ("--x--/--y--", "x-y"),
        ("///", "repo"),
        ("o/" + "n" * 100, ("o-" + "n" * 100)[:60]),
    ],
)
def test_repo_slug(repo_name: str, slug: str) -> None:
    assert repo_slug(repo_name) == slug
