"""What a project's packaging metadata declares for its tests.

Read with the ecosystem's own readers: ``tomllib``, ``configparser``, ``dependency_groups``
(PEP 735, ``include-group`` included), poetry-core (Poetry's version constraints as PEP 508),
``packaging``. Each kind of declaration gives what its tool installs for tests and development:
the extra named for tests (else for development) of PEP 621 and setup.cfg/setup.py; the PEP 735
group named for tests and uv's default groups; Poetry's groups not marked optional; PDM's
development groups; Hatch's test environment.
"""

from __future__ import annotations

import configparser
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from dependency_groups import CyclicDependencyError, resolve

from reprobot.validation.env.detect.plan import InstallPlan, requirement_plan

Reader = Callable[[str], str | None]

# Entries named for tests, most specific first; "dev" only where nothing names tests.
TEST_NAMES = ("test", "tests", "testing")
DEV_NAMES = ("dev", "develop", "development")

# What ``hatch test`` installs when the project does not configure its environment (Hatch's own
# default for ``hatch-test``), less the plugins that change how pytest orders or repeats tests.
_HATCH_TEST_DEFAULT = ("pytest", "pytest-mock", "pytest-rerunfailures", "pytest-xdist")


def _table(data: Any, *keys: str) -> dict[str, Any]:
    for key in keys:
        data = data.get(key) if isinstance(data, dict) else None
    return data if isinstance(data, dict) else {}


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def pick(names: list[str] | set[str] | Mapping[str, Any]) -> str | None:
    """The entry named for tests among ``names``, else one named for development."""
    by_lower = {n.lower(): n for n in names}
    for wanted in TEST_NAMES + DEV_NAMES:
        if wanted in by_lower:
            return by_lower[wanted]
    return None


@dataclass(frozen=True)
class ProjectMeta:
    """A project's manifests, parsed once."""

    pyproject: dict[str, Any] = field(default_factory=dict)
    setup_cfg: configparser.ConfigParser = field(
        default_factory=lambda: configparser.ConfigParser(interpolation=None)
    )
    setup_py: str = ""

    @classmethod
    def read(cls, read: Reader) -> ProjectMeta:
        try:
            pyproject = tomllib.loads(read("pyproject.toml") or "")
        except tomllib.TOMLDecodeError:
            pyproject = {}
        cfg = configparser.ConfigParser(interpolation=None)
        try:
            cfg.read_string(read("setup.cfg") or "")
        except configparser.Error:
            cfg = configparser.ConfigParser(interpolation=None)
        return cls(pyproject, cfg, read("setup.py") or "")

    # --- the project itself ----------------------------------------------------------------

    @property
    def project(self) -> dict[str, Any]:
        return _table(self.pyproject, "project")

    @property
    def poetry(self) -> dict[str, Any]:
        return _table(self.pyproject, "tool", "poetry")

    @property
    def name(self) -> str | None:
        for value in (
            self.project.get("name"),
            self.poetry.get("name"),
            self.setup_cfg.get("metadata", "name", fallback=None),
        ):
            if isinstance(value, str) and value.strip():
                return value.strip()
        found = re.search(r"""\bname\s*=\s*["']([A-Za-z0-9_.-]+)["']""", self.setup_py)
        return found.group(1) if found else None

    def requires_python(self) -> str:
        value = self.project.get("requires-python")
        if isinstance(value, str):
            return value
        poetry_python = _table(self.poetry, "dependencies").get("python")
        if isinstance(poetry_python, str):
            # "python (>=3.9,<4.0)" → ">=3.9,<4.0"
            return re.sub(r"[\s()]", "", _poetry_requirement("python", poetry_python))[6:]
        return self.setup_cfg.get("options", "python_requires", fallback="")

    def classifiers(self) -> list[str]:
        listed = _strings(self.project.get("classifiers")) or _strings(
            self.poetry.get("classifiers")
        )
        if not listed and self.setup_cfg.has_option("metadata", "classifiers"):
            listed = self.setup_cfg.get("metadata", "classifiers").splitlines()
        return listed

    # --- extras ------------------------------------------------------------------------------

    def extras(self) -> set[str]:
        found = set(_table(self.project, "optional-dependencies"))
        found |= set(_table(self.poetry, "extras"))
        if self.setup_cfg.has_section("options.extras_require"):
            found |= set(self.setup_cfg.options("options.extras_require"))
        # setup.py is code: only a literal key of a test or development extra is read from it.
        for name in TEST_NAMES + DEV_NAMES:
            if re.search(rf"""["']{name}["']\s*:""", self.setup_py):
                found.add(name)
        return found

    # --- groups ------------------------------------------------------------------------------

    def dependency_groups(self) -> dict[str, Any]:
        return _table(self.pyproject, "dependency-groups")

    def dependency_group(self, name: str) -> InstallPlan:
        """PEP 735 group ``name``, its includes resolved; empty when it does not resolve."""
        groups = self.dependency_groups()
        if name not in groups:
            return InstallPlan()
        try:
            texts = list(resolve(groups, name))
        except (CyclicDependencyError, LookupError, TypeError, ValueError):
            return InstallPlan()
        return requirement_plan(texts, self.name).said_by(
            f"pyproject.toml [dependency-groups] {name}"
        )

    def uv_default_groups(self) -> list[str]:
        """The groups ``uv sync`` and ``uv run`` install unasked: ``[tool.uv] default-groups``,
        else ``dev``; those the project defines."""
        named = _table(self.pyproject, "tool", "uv").get("default-groups", ["dev"])
        groups = self.dependency_groups()
        if named == "all":
            return list(groups)
        return [g for g in _strings(named) if g in groups]

    def groups_for_tests(self) -> list[str]:
        """The dependency group named for tests and those uv installs by default: a project
        that keeps part of what its tests import in ``dev`` (a certificate helper, a plugin)
        tests with both, as ``uv run pytest`` does."""
        named = pick([g for g in self.dependency_groups() if g.lower() not in DEV_NAMES])
        return list(dict.fromkeys([*([named] if named else []), *self.uv_default_groups()]))

    def poetry_groups(self) -> dict[str, dict[str, Any]]:
        groups = {n: _table(g, "dependencies") for n, g in _table(self.poetry, "group").items()}
        legacy = _table(self.poetry, "dev-dependencies")
        if legacy:
            groups.setdefault("dev", legacy)
        return groups

    def poetry_default_groups(self) -> list[str]:
        """The groups ``poetry install`` installs without being asked: those not optional."""
        tables = _table(self.poetry, "group")
        return [n for n in self.poetry_groups() if not _table(tables, n).get("optional", False)]

    def poetry_group(self, name: str) -> InstallPlan:
        deps = self.poetry_groups().get(name)
        if not deps:
            return InstallPlan()
        texts = [_poetry_requirement(n, c) for n, c in deps.items() if n.lower() != "python"]
        where = f"pyproject.toml [tool.poetry.group.{name}]"
        return requirement_plan([t for t in texts if t], self.name).said_by(where)

    def pdm_groups(self) -> dict[str, list[str]]:
        pdm = _table(self.pyproject, "tool", "pdm")
        return {n: _strings(v) for n, v in _table(pdm, "dev-dependencies").items()}

    def pdm_group(self, name: str) -> InstallPlan:
        texts = self.pdm_groups().get(name)
        if not texts:
            return InstallPlan()
        # PDM writes the project itself as "-e file:///${PROJECT_ROOT}/[test]".
        own = tuple(
            extra.strip()
            for text in texts
            if (m := re.search(r"ROOT\}/?\[([^\]]+)\]", text))
            for extra in m.group(1).split(",")
        )
        plan = requirement_plan([t for t in texts if not t.startswith("-e")], self.name)
        where = f"pyproject.toml [tool.pdm.dev-dependencies] {name}"
        return InstallPlan(plan.extras + own, (), plan.packages, (where,))

    # --- Hatch -------------------------------------------------------------------------------

    def hatch_envs(self) -> dict[str, dict[str, Any]]:
        envs = _table(self.pyproject, "tool", "hatch", "envs")
        return {n: e for n, e in envs.items() if isinstance(e, dict)}

    def hatch_env(self, name: str) -> InstallPlan:
        """What Hatch installs into environment ``name``: its own dependencies and features,
        and those of the environment it inherits from (``default`` unless it says otherwise)."""
        envs = self.hatch_envs()
        if name not in envs and name != "hatch-test":
            return InstallPlan()
        seen: set[str] = set()
        texts: list[str] = []
        extras: list[str] = []
        current: str | None = name
        while current is not None and current not in seen:
            seen.add(current)
            env = envs.get(current, {})
            if current == "hatch-test" and "dependencies" not in env:
                texts += _HATCH_TEST_DEFAULT
            texts += _strings(env.get("dependencies")) + _strings(env.get("extra-dependencies"))
            extras += _strings(env.get("features"))
            # Every environment but these two inherits from "default" unless it names another.
            inherits = None if current in ("default", "hatch-test") else "default"
            template = env.get("template", inherits)
            detached = bool(env.get("detached"))
            current = template if isinstance(template, str) and not detached else None
        plan = requirement_plan(texts, self.name)
        where = f"pyproject.toml [tool.hatch.envs.{name}]"
        return InstallPlan(tuple(extras) + plan.extras, (), plan.packages, (where,))

    # --- the test entries of every kind ------------------------------------------------------

    def declared_for_tests(self) -> InstallPlan:
        """Each kind's entry named for tests (else for development), merged."""
        plans: list[InstallPlan] = []
        extra = pick(self.extras())
        if extra:
            plans.append(InstallPlan(extras=(extra,), sources=(f"the project's extra '{extra}'",)))
        for group in self.groups_for_tests():
            plans.append(self.dependency_group(group))
        # What each tool installs for development unasked: ``poetry install`` every group not
        # marked optional, ``pdm install`` every development group.
        plans += [self.poetry_group(g) for g in self.poetry_default_groups()]
        plans += [self.pdm_group(g) for g in self.pdm_groups()]
        envs = self.hatch_envs()
        hatch = "hatch-test" if "hatch-test" in envs else pick(envs)
        if hatch:
            plans.append(self.hatch_env(hatch))
        out = InstallPlan()
        for plan in plans:
            out = out.merged(plan)
        return out


def _poetry_requirement(name: str, constraint: Any) -> str:
    """A Poetry dependency as PEP 508 text, by poetry-core; "" for a path, a URL, git or a
    constraint poetry-core cannot read."""
    from poetry.core.factory import Factory

    if isinstance(constraint, list):
        # Several constraints by marker: the first, as a reasonable stand-in for one Python.
        constraint = constraint[0] if constraint else "*"
    if isinstance(constraint, dict) and ({"path", "url", "git"} & set(constraint)):
        return ""
    try:
        return str(Factory.create_dependency(name, constraint).to_pep_508())
    except (ValueError, TypeError, KeyError, RuntimeError):
        return ""
