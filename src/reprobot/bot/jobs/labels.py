"""Labels the App sets: added once, removed only when the App added them, and never added
again after a person removed them."""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.store.records import Records

COLORS = {"reproduced": "d93f0b", "verified": "0e8a16"}
DESCRIPTIONS = {
    "reproduced": "Reprobot has a test that reproduces this issue",
    "verified": "Reprobot's reproducing tests fail before this change and pass with it",
}


def apply_label(
    api: RepoAPI,
    records: Records,
    number: int,
    name: str,
    current: Sequence[str],
    role: str,
) -> bool:
    """Add ``name`` to ``number`` (creating the repository label when missing); True if added."""
    if name in current:
        # Already there: whoever put it there, the App did not, and will not take it away.
        return False
    if records.label_state(api.repo, number, name) == "added":
        # The App added it and it is gone: a person removed it, and that decision stands.
        return False
    api.ensure_label(name, COLORS[role], DESCRIPTIONS[role])
    api.add_label(number, name)
    records.set_label_state(api.repo, number, name, "added")
    return True


def withdraw_label(
    api: RepoAPI, records: Records, number: int, name: str, current: Sequence[str]
) -> bool:
    """Remove ``name`` from ``number`` if the App put it there; True if removed."""
    if name not in current or records.label_state(api.repo, number, name) != "added":
        return False
    api.remove_label(number, name)
    records.set_label_state(api.repo, number, name, "removed")
    return True
