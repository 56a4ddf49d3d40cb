"""The moment an environment's dependencies resolve at: what the package index held then.

A project's unpinned and loosely pinned requirements meant, on the day of its commit, the
releases of that day; the newest releases of today are what broke old environments (NumPy 2
removing ``np.Inf``, docutils 0.18 moving ``roman``). So an environment resolves as of its
trusted commit's date, with one bound from below: the sandbox Pythons are newer than an old
commit's, and the releases made before a Python came out mostly neither build nor run on it.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

# For each sandbox Python: when the compiled core of the ecosystem (NumPy, SciPy, pandas,
# matplotlib, lxml) had shipped wheels for it, a few weeks after the Python's release (3.9.0:
# 2020-10-05, NumPy 1.19.3's cp39 wheels 2020-10-28, pandas 1.1.5 2020-12-07; 3.11.0:
# 2022-10-24, SciPy 1.9.3 2022-10-19, matplotlib 3.6.2 2022-11-02; 3.13.0: 2024-10-07, pandas
# 2.2.3 2024-09-20, matplotlib 3.9.3 2024-11-30). Before it an old commit's environment would
# build its dependencies from source on a Python they were never made for.
FIRST_WHEELS: dict[str, datetime] = {
    "3.9": datetime(2021, 1, 1, tzinfo=UTC),
    "3.11": datetime(2022, 12, 1, tzinfo=UTC),
    "3.13": datetime(2024, 12, 1, tzinfo=UTC),
}

# A commit can require a release uploaded just after it (the version bump lands first): the
# day after the commit is still its day.
_GRACE = timedelta(days=1)


@dataclass(frozen=True)
class AsOf:
    """When an environment's packages resolve, and why then; ``moment`` None: no bound."""

    moment: datetime | None
    commit: datetime | None
    why: str

    def label(self) -> str:
        return self.moment.strftime("%Y-%m-%dT%H:%M:%SZ") if self.moment else ""


def resolution_moment(commit: datetime | None, python: str, enabled: bool = True) -> AsOf:
    """The moment for an environment of ``python`` built from a commit made at ``commit``."""
    if not enabled:
        return AsOf(None, commit, "resolution as of the commit is turned off")
    if commit is None:
        return AsOf(None, None, "the commit's date is unknown")
    floor = FIRST_WHEELS.get(python)
    moment = commit + _GRACE
    if floor is not None and floor > moment:
        return AsOf(floor, commit, f"the first wheels for Python {python} (the commit is older)")
    return AsOf(moment, commit, "the commit's date")


def parse_moment(text: str) -> datetime | None:
    """An ISO 8601 time as written in labels (``2023-08-14T00:00:00Z``), or None."""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00")) if text else None
    except ValueError:
        return None
    if moment is not None and moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return moment
