"""What a verified change may contain: the allowlist as a table of pure cases."""

from __future__ import annotations

import pytest

from reprobot.validation.source.allowlist import (
    describe,
    review_paths,
    settings_change_is_harmless,
)
from reprobot.validation.source.git_changes import EXECUTABLE, REGULAR, SYMLINK, FileChange

BASE_FILES = [
    "pyproject.toml",
    "setup.cfg",
    "src/pkg/__init__.py",
    "src/pkg/mod.py",
    "tests/test_mod.py",
    "docs/index.rst",
    "CHANGES.rst",
]
TEXT = b"x = 1\n"
PYC = "mod.cpython-311.pyc"
HIDDEN = "x = 1 \u202e# hidden\n"
BLOBS: dict[str, bytes] = {"text": TEXT, "binary": b"\x00\x01\x02", "latin": b"caf\xe9\n"}


def _content(blob: str | None) -> bytes | None:
    return None if blob is None else BLOBS.get(blob, blob.encode())


def _change(path: str, status: str = "M", **kw: object) -> FileChange:
    fields: dict[str, object] = {
        "status": status,
        "path": path,
        "old_mode": None if status == "A" else REGULAR,
        "new_mode": None if status == "D" else REGULAR,
        "old_blob": None if status == "A" else "text",
        "new_blob": None if status == "D" else "text",
    }
    fields.update(kw)
    return FileChange(**fields)  # type: ignore[arg-type]


def _why(change: FileChange) -> str | None:
    found = review_paths([change], _content, BASE_FILES)
    return found[0].why if found else None


@pytest.mark.parametrize(
    "change",
    [
        _change("src/pkg/mod.py"),
        _change("src/pkg/new_module.py", "A"),
        _change("src/pkg/sub/__init__.py", "A"),
        _change("src/pkg/__init__.py"),
        _change("tests/test_mod.py"),
        _change("tests/test_new_feature.py", "A"),
        _change("tests/test_mod.py", "D", old_blob="text"),
        _change("docs/index.rst"),
        _change("docs/usage/new_page.md", "A"),
        _change("CHANGES.rst"),
        _change("changelog.d/1234.bugfix", "A"),
        _change("src/pkg/data/table.csv", "A"),
        _change("src/pkg/py.typed", "A"),
        _change("src/pkg/mod.pyi", "A"),
        _change("README", "M"),
        _change("src/pkg/cli.py", "A", new_mode=EXECUTABLE),
    ],
    ids=lambda c: f"{c.status}-{c.path}",
)
def test_a_readable_change_of_source_docs_or_data_is_allowed(change: FileChange) -> None:
    assert _why(change) is None


@pytest.mark.parametrize(
    ("change", "why"),
    [
        # Code that is not in the diff's text.
        (
            _change("src/pkg/__pycache__/mod.cpython-311.pyc", "A", new_blob="binary"),
            "build output",
        ),
        (_change("src/pkg/mod.pyc", "A", new_blob="binary"), "a .pyc file"),
        (_change("src/pkg/_speedups.so", "A", new_blob="binary"), "a .so file"),
        (_change("src/pkg/blob.zip", "A", new_blob="binary"), "a .zip file"),
        (_change("src/pkg/mod.py", new_blob="binary"), "not text a reviewer reads"),
        (_change("src/pkg/mod.py", new_blob="latin"), "not text a reviewer reads"),
        (_change(".gitattributes", "A"), "git's own settings"),
        # Build and packaging code, and what runs before the tests.
        (_change("pkg.egg-info/entry_points.txt", "A"), "package metadata"),
        (_change("setup.py"), "runs before the tests or while the project is built"),
        (_change("conftest.py", "A"), "runs before the tests"),
        (_change("tests/conftest.py", "D"), "runs before the tests"),
        (_change("src/pkg/evil.pth", "A"), "a .pth file"),
        (_change("requirements-dev.txt"), "build, packaging or test settings"),
        (_change("MANIFEST.in"), "build, packaging or test settings"),
        (_change(".github/reprobot.yml", "A"), "Reprobot settings"),
        (_change("pytest.ini", "A"), "a .ini file"),
        (_change(".coveragerc", "A"), "no known kind"),
        (_change("backend/build.cfg", "A"), "a .cfg file"),
        # Shadowing.
        (_change("pkg_helpers.py", "A"), "a new top-level module"),
        (_change("src/json_tools.py", "A"), "a new top-level module"),
        (_change("vendor/pkg/__init__.py", "A"), "a new top-level package"),
        (_change("tests/__init__.py", "A"), "the package file of a test folder"),
        (_change("tests/test_mod/__init__.py", "A"), "the package file of a test folder"),
        (_change("tests/json.py", "A"), "named like a module"),
        (_change("tests/reprobot_report.py", "A"), "named like a module"),
        (_change("tests/pytest.py", "A"), "named like a module"),
        # What git itself reads differently.
        (_change("src/pkg/link.py", "A", new_mode=SYMLINK), "a symbolic link"),
        (_change("src/pkg/mod.py", new_mode=EXECUTABLE), "its mode changes"),
        (_change("src/pkg/mod.py", "T"), "a change of kind T"),
        (_change("src/pkg/mod\u202e.py", "A"), "control or invisible characters"),
        (
            _change("src/pkg/mod.py", new_blob="x = 1 \u202e# hidden\n"),
            "invisible character U+202E",
        ),
    ],
)
def test_anything_else_needs_review_with_its_reason(change: FileChange, why: str) -> None:
    found = _why(change)
    assert found is not None and why in found, found


def test_a_rename_is_judged_on_both_its_paths() -> None:
    away = _change("tests/test_mod.py", "R", old_path="conftest.py")
    assert review_paths([away], _content, BASE_FILES)[0].path == "conftest.py"
    moved = _change("src/pkg/other.py", "R", old_path="src/pkg/mod.py")
    assert review_paths([moved], _content, BASE_FILES) == ()


PYPROJECT = b"""\
[build-system]
requires = ["setuptools"]

[project]
name = "pkg"
version = "1.0"
dependencies = ["attrs"]

[tool.ruff]
line-length = 100
"""


TOX = b"[tox]\nenvlist = py311\n"
PLUGIN = b'\n[project.entry-points.pytest11]\nx = "pkg.x"\n'
PYTEST_OPTIONS = b"\n[tool.pytest.ini_options]\naddopts = '-p x'\n"
DYNAMIC = b'\n[tool.setuptools.dynamic]\nversion = {attr = "x"}\n'


@pytest.mark.parametrize(
    ("name", "old", "new", "harmless"),
    [
        # A linter's section, added or changed; a version bump.
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace(b"100", b"88"), True),
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace(b'"1.0"', b'"1.1"'), True),
        ("pyproject.toml", PYPROJECT, PYPROJECT + b"\n[tool.mypy]\nstrict = true\n", True),
        ("setup.cfg", None, b"[flake8]\nmax-line-length = 100\n", True),
        ("setup.cfg", b"[metadata]\nversion = 1.0\n", b"[metadata]\nversion = 1.1\n", True),
        (
            "tox.ini",
            b"[tox]\nenvlist = py311\n",
            b"[tox]\nenvlist = py311\n\n[isort]\nx = 1\n",
            True,
        ),
        # What builds, installs or configures the tests.
        ("pyproject.toml", PYPROJECT, PYPROJECT.replace(b'"attrs"', b'"attrs", "evil"'), False),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + b'\n[project.entry-points.pytest11]\nx = "pkg.x"\n',
            False,
        ),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + b"\n[tool.pytest.ini_options]\naddopts = '-p x'\n",
            False,
        ),
        (
            "pyproject.toml",
            PYPROJECT,
            PYPROJECT + b'\n[tool.setuptools.dynamic]\nversion = {attr = "x"}\n',
            False,
        ),
        ("setup.cfg", None, b"[options.entry_points]\npytest11 =\n    x = pkg.x\n", False),
        ("setup.cfg", None, b"[tool:pytest]\naddopts = -p pkg.x\n", False),
        ("pyproject.toml", PYPROJECT, b"[not toml", False),
    ],
)
def test_settings_may_change_only_in_linters_sections_or_the_version(
    name: str, old: bytes | None, new: bytes, harmless: bool
) -> None:
    assert settings_change_is_harmless(name, old, new) is harmless


def test_the_concerns_are_said_in_one_phrase() -> None:
    changes = [_change(f"src/pkg/m{i}.pyc", "A", new_blob="binary") for i in range(7)]
    text = describe(review_paths(changes, _content, BASE_FILES))
    assert text.startswith("it changes 7 file(s) a verified change may not contain: src/pkg/m0.pyc")
    assert text.endswith("; and 2 more")
