"""A reasonable ``EnvSpec`` for a repository that brings no Reprobot configuration."""

from __future__ import annotations

import configparser
import re
import tomllib

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from reprobot.validation.env.envspec import SUPPORTED_PYTHONS, EnvSpec
from reprobot.validation.env.runner_detect import detect_system_packages, detect_test_command
from reprobot.validation.source.snapshot import RepoSnapshot

_TEST_EXTRAS = ("test", "tests", "testing", "dev")
_REQUIREMENT_CANDIDATES = (
    "requirements/tests.txt",
    "requirements/test.txt",
    "requirements/dev.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "dev-requirements.txt",
    "requirements.txt",
)


def _version_tuple(text: str) -> tuple[int, ...]:
    return tuple(int(p) for p in text.split("."))


def choose_python(requires_python: str, classifiers: list[str]) -> str:
    """A supported Python for the project.

    The newest one its classifiers list; without classifiers, 3.11 when ``requires-python``
    admits it (a middle version: old pins still find wheels, new syntax still parses), else the
    newest one it admits.
    """
    listed = {
        m.group(1)
        for c in classifiers
        if (m := re.match(r"Programming Language :: Python :: (3\.\d+)$", c.strip()))
    }
    ours = [v for v in SUPPORTED_PYTHONS if v in listed]
    if ours:
        return ours[-1]
    if listed:
        newest = max(listed, key=_version_tuple)
        older = [v for v in SUPPORTED_PYTHONS if _version_tuple(v) <= _version_tuple(newest)]
        return older[-1] if older else SUPPORTED_PYTHONS[0]
    try:
        admitted = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        return "3.11"
    allowed = [v for v in SUPPORTED_PYTHONS if admitted.contains(v + ".0", prereleases=True)]
    if "3.11" in allowed or not allowed:
        return "3.11"
    return allowed[-1]


def _pyproject(snapshot: RepoSnapshot) -> dict[str, object]:
    raw = snapshot.read_file("pyproject.toml")
    if not raw:
        return {}
    try:
        project = tomllib.loads(raw.decode("utf-8", "replace")).get("project", {})
    except tomllib.TOMLDecodeError:
        return {}
    return project if isinstance(project, dict) else {}


def _setup_cfg(snapshot: RepoSnapshot) -> configparser.ConfigParser:
    parser = configparser.ConfigParser(interpolation=None)
    raw = snapshot.read_file("setup.cfg")
    if raw:
        try:
            parser.read_string(raw.decode("utf-8", "replace"))
        except configparser.Error:
            return configparser.ConfigParser(interpolation=None)
    return parser


def detect_env_spec(snapshot: RepoSnapshot) -> EnvSpec:
    """Guess Python version, requirements, install and test commands and the compilers its
    extensions need from the repository's manifests."""
    files = set(snapshot.list_files())
    project = _pyproject(snapshot)
    cfg = _setup_cfg(snapshot)
    classifiers = [str(c) for c in project.get("classifiers", []) or []]  # type: ignore[attr-defined]
    if not classifiers and cfg.has_option("metadata", "classifiers"):
        classifiers = cfg.get("metadata", "classifiers").splitlines()
    requires = str(project.get("requires-python", "") or "")
    if not requires and cfg.has_option("options", "python_requires"):
        requires = cfg.get("options", "python_requires")
    extras: set[str] = set((project.get("optional-dependencies") or {}).keys())  # type: ignore[attr-defined]
    if cfg.has_section("options.extras_require"):
        extras |= set(cfg.options("options.extras_require"))
    setup_py = (snapshot.read_file("setup.py") or b"").decode("utf-8", "replace")
    extras |= {e for e in _TEST_EXTRAS if re.search(rf"""["']{e}["']\s*:""", setup_py)}
    extra = next((e for e in _TEST_EXTRAS if e in extras), None)
    installable = bool({"pyproject.toml", "setup.py", "setup.cfg"} & files)
    install = (
        f"python -m pip install -e '.[{extra}]'"
        if extra and installable
        else "python -m pip install -e ."
        if installable
        else "true"
    )
    requirements = next((r for r in _REQUIREMENT_CANDIDATES if r in files), None)

    def read(path: str) -> str | None:
        raw = snapshot.read_file(path)
        return raw.decode("utf-8", "replace") if raw is not None else None

    return EnvSpec(
        python=choose_python(requires, classifiers),
        requirements=(requirements,) if requirements else (),
        install=install,
        test_cmd=detect_test_command(files, read),
        system_packages=detect_system_packages(files, read),
    )
