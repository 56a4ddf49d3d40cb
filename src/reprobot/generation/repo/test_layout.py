"""Where a repository keeps its tests, and where a new reproducing test belongs.

A new test goes next to the existing test file most related to the issue, so that it shares that
directory's ``conftest.py`` fixtures and the import style that works from there.
"""

from __future__ import annotations

import configparser
import fnmatch
import itertools
import re
import tomllib
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from reprobot.generation.issue.report import IssueReport
from reprobot.validation import RepoSnapshot

_SKIP_DIRS = frozenset(
    {"docs", "doc", "examples", "example", "benchmarks", "bench", "build", "dist", "node_modules"}
    | {"site-packages", "venv", ".venv", "env", ".tox", ".nox", "fixtures", "data", "testdata"}
)
_WORD = re.compile(r"[a-z][a-z0-9]*")
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")
DEFAULT_PYTHON_FILES = ("test_*.py", "*_test.py")
_TEST_FOLDERS = frozenset({"tests", "test", "testing"})
_NOT_MODULES = frozenset({"setup.py", "conftest.py", "noxfile.py", "tasks.py", "fabfile.py"})


@dataclass(frozen=True)
class TestLayout:
    """The test files of a tree, the directories holding them, and its importable packages."""

    __test__ = False  # not a pytest test class, whatever its name says

    test_files: tuple[str, ...]
    test_dirs: tuple[str, ...]  # most test files first
    packages: tuple[str, ...]  # top-level import names (``src/`` layouts included)
    # Modules of the code under test, as import names (``pkg.sub.mod``) to their file path.
    modules: dict[str, str]
    python_files: tuple[str, ...] = DEFAULT_PYTHON_FILES

    @property
    def main_dir(self) -> str:
        return self.test_dirs[0] if self.test_dirs else "tests"


def is_test_file(path: str, patterns: Sequence[str] = DEFAULT_PYTHON_FILES) -> bool:
    """pytest's collection rule for module names (``python_files``, default ``test_*.py`` and
    ``*_test.py``)."""
    name = PurePosixPath(path).name
    if not name.endswith(".py"):
        return False
    for pattern in patterns:
        if "/" in pattern:
            if fnmatch.fnmatchcase(path, pattern) or fnmatch.fnmatchcase(path, "*/" + pattern):
                return True
        elif fnmatch.fnmatchcase(name, pattern):
            return True
    return False


def python_files_setting(manifests: Mapping[str, str]) -> tuple[str, ...]:
    """The ``python_files`` patterns of the project's pytest configuration (in pytest's order of
    precedence), or the defaults."""
    return pytest_list_setting(manifests, "python_files") or DEFAULT_PYTHON_FILES


def pytest_list_setting(manifests: Mapping[str, str], key: str) -> tuple[str, ...]:
    """A list option (``python_files``, ``norecursedirs``) of the project's pytest
    configuration, from the first configuration file that sets it; empty when none does."""
    for name in CONFIG_FILES:
        text = manifests.get(name)
        if not text:
            continue
        if name == "pyproject.toml":
            value: object = _toml_option(text, key)
        else:
            value = _ini_option(text, _INI_SECTIONS[name], key)
        if isinstance(value, str):
            value = value.split()
        if isinstance(value, list) and (patterns := tuple(str(v) for v in value if v)):
            return patterns
    return ()


def _toml_option(text: str, key: str) -> object:
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return None
    options = data.get("tool", {}).get("pytest", {}).get("ini_options", {})
    return options.get(key) if isinstance(options, dict) else None


def _ini_option(text: str, sections: tuple[str, ...], key: str) -> str | None:
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    for section in sections:
        if parser.has_option(section, key):
            return parser.get(section, key)
    return None


CONFIG_FILES = ("pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
_INI_SECTIONS = {
    "pytest.ini": ("pytest", "tool:pytest"),
    "tox.ini": ("pytest",),
    "setup.cfg": ("tool:pytest",),
}


def _skipped(path: str) -> bool:
    parts = PurePosixPath(path).parts[:-1]
    return any(part.startswith(".") or part.lower() in _SKIP_DIRS for part in parts)


def _not_collected(path: str, norecurse: Sequence[str]) -> bool:
    """A test file pytest's own collection never reaches: below a folder ``norecursedirs``
    names, or inside a package that a test folder holds as data (``pkg/tests/sample/tests/``:
    a fixture project, not the project's tests; ``sympy/testing/tests/`` is a test folder)."""
    folder = PurePosixPath(path).parent
    for raw in norecurse:
        pattern = raw.rstrip("/")
        if "/" in pattern:
            if any(fnmatch.fnmatchcase(str(p), pattern) for p in (folder, *folder.parents)):
                return True
        elif any(fnmatch.fnmatchcase(part, pattern) for part in folder.parts):
            return True
    marks = [k for k, part in enumerate(folder.parts) if part in _TEST_FOLDERS]
    return any(later - earlier > 1 for earlier, later in itertools.pairwise(marks))


def _module_name(path: str, roots: Iterable[str]) -> str | None:
    for root in roots:
        prefix = f"{root}/" if root else ""
        if path.startswith(prefix) and path.endswith(".py"):
            rel = path[len(prefix) : -3]
            parts = rel.split("/")
            if parts[-1] == "__init__":
                parts = parts[:-1]
            if parts and all(p.isidentifier() for p in parts):
                return ".".join(parts)
    return None


def detect_layout(
    files: Iterable[str],
    patterns: Sequence[str] = DEFAULT_PYTHON_FILES,
    norecurse: Sequence[str] = (),
) -> TestLayout:
    """The layout of a tree given its file list, ``python_files`` patterns and
    ``norecursedirs`` (pure)."""
    files = [f for f in files if not _skipped(f)]
    tests = sorted(
        f for f in files if is_test_file(f, patterns) and not _not_collected(f, norecurse)
    )
    dirs = Counter(str(PurePosixPath(t).parent) for t in tests)
    test_dirs = tuple(
        d if d != "." else "" for d, _ in sorted(dirs.items(), key=lambda kv: (-kv[1], kv[0]))
    )
    inits = {str(PurePosixPath(f).parent) for f in files if f.endswith("/__init__.py")}
    roots = ["src", ""] if any(i.startswith("src/") for i in inits) else [""]
    packages: list[str] = []
    for init in sorted(inits):
        parts = PurePosixPath(init).parts
        if roots[0] == "src" and parts[0] == "src" and len(parts) == 2:
            packages.append(parts[1])
        elif len(parts) == 1 and parts[0] != "src" and parts[0] not in ("tests", "test", "testing"):
            packages.append(parts[0])
    # Single-module projects (``requests.py`` style) count too.
    for f in files:
        top_level = "/" not in f and f.endswith(".py") and not is_test_file(f, patterns)
        if top_level and f not in _NOT_MODULES:
            packages.append(f[:-3])
    modules: dict[str, str] = {}
    for f in files:
        if f.endswith(".py") and not is_test_file(f, patterns):
            name = _module_name(f, roots)
            if name and name.split(".")[0] in packages:
                modules[name] = f
    return TestLayout(tuple(tests), test_dirs, tuple(dict.fromkeys(packages)), modules)


def read_texts(snapshot: RepoSnapshot, names: Iterable[str]) -> dict[str, str]:
    """The text of each of a few top-level files (configuration, manifests) that exists."""
    return {
        name: data.decode("utf-8", "replace")
        for name in names
        if (data := snapshot.read_file(name)) is not None
    }


def layout_of(snapshot: RepoSnapshot, more_patterns: Sequence[str] = ()) -> TestLayout:
    """The tree's layout by its pytest configuration's ``python_files``, and ``more_patterns``
    that the project's runner collects too (Django's ``tests.py``)."""
    config = read_texts(snapshot, CONFIG_FILES)
    patterns = tuple(dict.fromkeys([*python_files_setting(config), *more_patterns]))
    norecurse = pytest_list_setting(config, "norecursedirs")
    layout = detect_layout(snapshot.list_files(), patterns, norecurse)
    return TestLayout(
        layout.test_files, layout.test_dirs, layout.packages, layout.modules, patterns
    )


def words(text: str) -> set[str]:
    """Lower-case words of identifiers and paths (``parse_durationError``: parse, duration,
    error)."""
    return {w for w in _WORD.findall(_CAMEL.sub(" ", text).lower()) if len(w) > 2}


def issue_modules(issue: IssueReport, layout: TestLayout) -> list[str]:
    """Files of the code under test the issue points at: traceback frames, mentioned paths and
    dotted names that are modules of the tree, most specific first."""
    by_suffix = {path: path for path in layout.modules.values()}
    found: list[str] = []
    for traceback in issue.tracebacks:
        for frame in reversed(traceback.frames):
            normalized = frame.file.replace("\\", "/")
            for path in by_suffix:
                # Installed code runs from site-packages/pkg/..., the tree has src/pkg/...
                importable = path.removeprefix("src/")
                if normalized.endswith(("/" + path, "/" + importable)) or normalized == path:
                    found.append(path)
    for mentioned in issue.mentioned_paths:
        for path in by_suffix:
            if path.endswith(mentioned) or mentioned.endswith(path):
                found.append(path)
    for name in issue.identifiers:
        parts = name.split(".")
        # A bare package name ("sympy") points at everything, so at nothing in particular.
        for k in range(len(parts), 1, -1):
            module = ".".join(parts[:k])
            if module in layout.modules:
                found.append(layout.modules[module])
                break
    return list(dict.fromkeys(found))


def _same_word(a: str, b: str) -> bool:
    # "matrix" and "matrices", "skip" and "skipping": a shared stem of five letters will do.
    return a == b or (len(a) >= 5 and len(b) >= 5 and a[:5] == b[:5])


def _shared(left: set[str], right: set[str]) -> int:
    return sum(1 for a in left if any(_same_word(a, b) for b in right))


def related_test_files(
    issue: IssueReport,
    layout: TestLayout,
    limit: int = 5,
    texts: Mapping[str, str] | None = None,
) -> list[str]:
    """Existing test files most related to the issue, best first: by the words their names share
    with the modules the issue points at and with its title and names, and (given ``texts``) by
    the issue's names their code uses."""
    if not layout.test_files:
        return []
    api = {n.rpartition(".")[2] for n in issue.identifiers}
    api = {n for n in api if len(n) >= 4}
    modules = issue_modules(issue, layout)
    module_words = Counter[str]()
    for rank, path in enumerate(modules[:6]):
        for word in words(PurePosixPath(path).stem) | words(str(PurePosixPath(path).parent)):
            module_words[word] += 6 - rank
    packages = set(layout.packages)
    issue_words = (words(issue.title) | {w for n in issue.identifiers for w in words(n)}) - packages
    scored = []
    for test in layout.test_files:
        stem_words = words(PurePosixPath(test).stem.removeprefix("test_").removesuffix("_test"))
        dir_words = words(str(PurePosixPath(test).parent))
        score = 3.0 * sum(module_words[w] for w in stem_words)
        score += sum(module_words[w] for w in dir_words) * 0.5
        score += _shared(stem_words, issue_words) + 0.5 * _shared(dir_words, issue_words)
        if texts is not None and api and (text := texts.get(test)):
            score += 2.0 * sum(1 for name in api if name in text)
        if score > 0:
            scored.append((-score, len(test), test))
    return [t for _, _, t in sorted(scored)[:limit]]


def new_test_path(
    issue: IssueReport,
    layout: TestLayout,
    stem: str,
    taken: Iterable[str] = (),
    related: Sequence[str] | None = None,
    folder: str | None = None,
) -> str:
    """A path for a new test module named ``test_<stem>...`` that does not exist yet, in
    ``folder`` when given, else in the directory of the most related test file (or the main
    test directory)."""
    if folder is None:
        if related is None:
            related = related_test_files(issue, layout, limit=1)
        folder = str(PurePosixPath(related[0]).parent) if related else layout.main_dir
    folder = "" if folder == "." else folder
    existing = set(layout.test_files) | set(taken)
    for k in range(1000):
        name = f"test_{stem}.py" if k == 0 else f"test_{stem}_{k + 1}.py"
        path = f"{folder}/{name}" if folder else name
        if path not in existing:
            return path
    raise ValueError("no free test file name")  # unreachable with a sane ``taken``
