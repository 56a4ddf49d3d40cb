"""Which sandbox Python runs a project's tests, from what the project says it runs on."""

from __future__ import annotations

import re
from collections.abc import Collection

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from reprobot.validation.env.envspec import SUPPORTED_PYTHONS

# The middle one: old pins still find wheels for it, new syntax still parses.
PREFERRED = "3.11"


def _key(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in version.split("."))


def listed_in_classifiers(classifiers: Collection[str]) -> set[str]:
    return {
        m.group(1)
        for c in classifiers
        if (m := re.match(r"Programming Language :: Python :: (3\.\d+)$", c.strip()))
    }


def admitted(requires_python: str) -> list[str]:
    """The sandbox Pythons ``requires-python`` admits; all of them when it says nothing
    readable or admits none of them (a bound below 3.9 says nothing of the sandbox's)."""
    try:
        specifier = SpecifierSet(requires_python or "")
    except InvalidSpecifier:
        return list(SUPPORTED_PYTHONS)
    allowed = [v for v in SUPPORTED_PYTHONS if specifier.contains(v + ".0", prereleases=True)]
    return allowed or list(SUPPORTED_PYTHONS)


def choose_python(listed: Collection[str], requires_python: str = "") -> str:
    """The sandbox Python for a project tested on ``listed`` versions (a CI matrix, the
    classifiers) that ``requires-python`` admits.

    Among the admitted ones it lists: 3.11 when listed, else the newest. When it lists none of
    them: the admitted one nearest a listed version; on a tie, one between the listed ones,
    else the newer (a project tested on 3.12 alone may use syntax 3.11 lacks). Nothing listed:
    3.11 when admitted, else the newest admitted.
    """
    candidates = admitted(requires_python)
    ours = [v for v in candidates if v in listed]
    if ours:
        return PREFERRED if PREFERRED in ours else ours[-1]
    versions = [v for v in listed if re.fullmatch(r"3\.\d+", v)]
    if not versions:
        return PREFERRED if PREFERRED in candidates else candidates[-1]

    minors = [_key(v)[1] for v in versions]

    def distance(candidate: str) -> tuple[int, bool, int]:
        minor = _key(candidate)[1]
        between = min(minors) <= minor <= max(minors)
        return (min(abs(minor - m) for m in minors), not between, -minor)

    return min(candidates, key=distance)
