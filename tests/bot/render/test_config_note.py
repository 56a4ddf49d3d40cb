"""The note on a comment of a repository whose configuration file has errors."""

from __future__ import annotations

from reprobot.bot.render.config_note import CONFIG_IGNORED, config_errors_note


def test_errors_note_echoes_safely() -> None:
    assert config_errors_note([]) == ""
    note = config_errors_note([".github/reprobot.yml: unknown setting '@admins`x`'"] + ["e"] * 12)
    assert "@\u200badmins" in note and "@admins" not in note
    assert "- ``.github/reprobot.yml: unknown setting '@\u200badmins`x`'``\n" in note
    assert "- … and 3 more" in note
    assert note.endswith(CONFIG_IGNORED)
