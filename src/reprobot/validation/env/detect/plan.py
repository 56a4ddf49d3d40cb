"""``InstallPlan``: what one source says a project's tests need installed, and where it said so."""

from __future__ import annotations

from dataclasses import dataclass, field

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

# Tools a CI job installs to drive the tests or publish, not dependencies of the tests: a run
# in the sandbox needs none of them (the sandbox brings its own pytest and coverage).
TOOLS = frozenset(
    canonicalize_name(n)
    for n in (
        "pip",
        "setuptools",
        "wheel",
        "build",
        "twine",
        "tox",
        "tox-gh-actions",
        "tox-uv",
        "nox",
        "hatch",
        "uv",
        "poetry",
        "pdm",
        "pipenv",
        "virtualenv",
        "pre-commit",
        "codecov",
        "coveralls",
    )
)


@dataclass(frozen=True)
class InstallPlan:
    """The project's extras, requirement files and further requirements its tests need.

    ``packages`` are PEP 508 requirements (never the project itself: a requirement on it with
    extras becomes those extras). ``sources`` says, for a person, where each part was read.
    """

    extras: tuple[str, ...] = ()
    requirement_files: tuple[str, ...] = ()
    packages: tuple[str, ...] = ()
    sources: tuple[str, ...] = field(default=(), compare=False)

    def __bool__(self) -> bool:
        return bool(self.extras or self.requirement_files or self.packages)

    def merged(self, other: InstallPlan) -> InstallPlan:
        return InstallPlan(
            extras=_unique(self.extras + other.extras),
            requirement_files=_unique(self.requirement_files + other.requirement_files),
            packages=_unique(self.packages + other.packages),
            sources=_unique(self.sources + other.sources),
        )

    def said_by(self, source: str) -> InstallPlan:
        return InstallPlan(self.extras, self.requirement_files, self.packages, (source,))


def _unique(items: tuple[str, ...]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(items))


def merge_all(plans: list[InstallPlan]) -> InstallPlan:
    out = InstallPlan()
    for plan in plans:
        out = out.merged(plan)
    return out


def requirement_plan(texts: list[str], project: str | None) -> InstallPlan:
    """The plan of requirement strings: each a package, but for tools, text that is no
    requirement, and the project itself (whose extras are kept)."""
    extras: list[str] = []
    packages: list[str] = []
    own = canonicalize_name(project) if project else None
    for text in texts:
        try:
            req = Requirement(text.strip())
        except InvalidRequirement:
            continue
        name = canonicalize_name(req.name)
        if own is not None and name == own:
            extras += sorted(req.extras)
        elif name not in TOOLS:
            packages.append(str(req))
    return InstallPlan(extras=tuple(extras), packages=tuple(packages))
