"""Syntax highlighting of source lines as HTML, one fragment per line (Pygments).

Done once, when a page's document is made: lexing is the slow part of a page (Pygments takes
about a tenth of a second per thousand lines), and a stored document is then rendered at request
time without lexing. Each fragment is Pygments' escaped output, with its spans closed on the line,
so lines can be shown one by one beside their numbers and marks."""

from __future__ import annotations

from collections.abc import Sequence

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexer import Lexer
from pygments.lexers import TextLexer, get_lexer_for_filename
from pygments.util import ClassNotFound

# Longer lines are shown as they are, unlexed: a minified or generated line says nothing
# highlighted and costs the most to lex.
_LONGEST_LEXED = 2_000


def _plain() -> Lexer:
    lexer: Lexer = TextLexer(stripnl=False, ensurenl=False)
    return lexer


def lexer_for(path: str) -> Lexer:
    try:
        lexer: Lexer = get_lexer_for_filename(path, stripnl=False, ensurenl=False)
    except ClassNotFound:
        return _plain()
    return lexer


def highlight_lines(lines: Sequence[str], path: str) -> list[str]:
    """``lines`` (without line breaks) as HTML fragments, as many as given."""
    if not lines:
        return []
    lexer = lexer_for(path)
    if any(len(line) > _LONGEST_LEXED for line in lines):
        lexer = _plain()
    # A line break inside a line would shift every later fragment; none survives splitlines(),
    # but a form feed or a lone carriage return might.
    flat = [line.replace("\r", " ").replace("\f", " ").replace("\n", " ") for line in lines]
    html = highlight("\n".join(flat) + "\n", lexer, HtmlFormatter(nowrap=True))
    fragments = html.split("\n")[: len(flat)]
    if len(fragments) != len(flat):
        # Never expected; fall back to escaped text rather than misalign the lines.
        plain = highlight("\n".join(flat) + "\n", _plain(), HtmlFormatter(nowrap=True))
        return plain.split("\n")[: len(flat)]
    return fragments


def style_rules(selector: str, style: str) -> str:
    """Pygments' CSS for ``style`` under ``selector``."""
    return str(HtmlFormatter(style=style).get_style_defs(selector))  # type: ignore[no-untyped-call]
