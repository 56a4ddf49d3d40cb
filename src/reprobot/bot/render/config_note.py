"""The note a comment carries when the repository's ``.github/reprobot.yml`` has errors."""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.bot.render.markdown import inline_code, trim
from reprobot.validation import CONFIG_PATH

CONFIG_IGNORED = (
    f"Because of these errors Reprobot ignores the whole of {CONFIG_PATH}, so the defaults apply."
)
_MAX_LISTED_ERRORS = 10


def config_errors_note(errors: Sequence[str]) -> str:
    """A short markdown note listing ``errors`` (at most ten) and saying the defaults apply;
    empty when there is no error. Every message is echoed as inline code."""
    if not errors:
        return ""
    lines = [f"**Configuration:** {inline_code(CONFIG_PATH)} has errors:", ""]
    lines += [f"- {inline_code(trim(e, 300, keep='head'))}" for e in errors[:_MAX_LISTED_ERRORS]]
    if len(errors) > _MAX_LISTED_ERRORS:
        lines.append(f"- … and {len(errors) - _MAX_LISTED_ERRORS} more")
    lines += ["", CONFIG_IGNORED]
    return "\n".join(lines)
