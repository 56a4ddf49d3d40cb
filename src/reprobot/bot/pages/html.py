"""A page's document as one self-contained HTML file (Jinja2 templates, autoescaped).

The page makes no request of its own: styles and its one script are inline, allowed by their
hashes in the page's Content-Security-Policy, which allows nothing else (no other script, no
image, no frame, no form), so text that slipped through as markup still could not run."""

from __future__ import annotations

import base64
import hashlib
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined, select_autoescape
from markupsafe import Markup, escape

from reprobot.bot.pages.diff_view import DiffFile
from reprobot.bot.pages.documents import Page
from reprobot.bot.pages.highlight import style_rules
from reprobot.errors import ReprobotError


@dataclass(frozen=True)
class EarlierHead:
    """A link to the page of an earlier head of the same pull request."""

    href: str
    head: str
    status: str


def _resource(name: str) -> str:
    return (files("reprobot.bot.pages") / "templates" / name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"


@dataclass(frozen=True)
class _Assets:
    css: str
    script: str
    csp: str


@cache
def _assets() -> _Assets:
    dark = style_rules(".src", "github-dark")
    css = (
        _resource("page.css")
        + style_rules(".src", "default")
        + "\n@media (prefers-color-scheme: dark) {\n"
        + dark
        + "\n}\n"
    )
    script = _resource("copy.js")
    # frame-ancestors only counts in a header (a browser ignores it in the page's <meta>, with
    # an error on its console): the App's route adds it there.
    csp = (
        "default-src 'none'; "
        f"style-src {_csp_hash(css)}; script-src {_csp_hash(script)}; "
        "base-uri 'none'; form-action 'none'"
    )
    return _Assets(css=css, script=script, csp=csp)


def page_csp() -> str:
    """The Content-Security-Policy of every page, as its <meta> states it."""
    return _assets().csp


def page_csp_header() -> str:
    """The policy the App sends with a page: the page's own, and no framing by other sites."""
    return _assets().csp + "; frame-ancestors 'none'"


# A hunk's columns (``DiffHunk``): one letter per line for its kind and its mark.
_SIGN = {"a": "+", "r": "-", "c": " "}
_KIND_CLASS = {"a": "added", "r": "removed", "c": "context"}
_MARK_CELL = {
    " ": '<td class="mark"></td>',
    "r": '<td class="mark run">run</td>',
    "n": '<td class="mark not-run">not run</td>',
}


def _diff_rows(file: DiffFile, marks: bool) -> Markup:
    """The rows of a file's diff table. Built here rather than in the template: a page may show
    thousands of lines, and a template loop costs several times this per line."""
    rows = []
    blank_mark = '<td class="mark"></td>' if marks else ""
    for hunk in file.hunks:
        if hunk.header:
            rows.append(
                '<tr class="hunk"><td class="no"></td><td class="no"></td>'
                f'{blank_mark}<td class="src">{escape(hunk.header)}</td></tr>'
            )
        for code, mark_code, old, new, text, html in zip(
            hunk.kinds, hunk.marks, hunk.old, hunk.new, hunk.text, hunk.html, strict=True
        ):
            mark = _MARK_CELL[mark_code] if marks else ""
            # ``html`` is only ever Pygments' escaped output, made by ``highlight_lines`` when the
            # document was (documents are Reprobot's own records, never taken from a request);
            # ``text`` is escaped here.
            source = html if html else escape(text)
            rows.append(
                f'<tr class="{_KIND_CLASS[code]}"><td class="no">{"" if old is None else old}'
                f'</td><td class="no">{"" if new is None else new}</td>'
                f'{mark}<td class="src">{_SIGN[code]}{source}</td></tr>'
            )
    return Markup("\n".join(rows))


@cache
def _environment() -> Environment:
    env = Environment(
        loader=PackageLoader("reprobot.bot.pages", "templates"),
        autoescape=select_autoescape(default=True, default_for_string=True),
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["diff_rows"] = _diff_rows
    return env


def write_page(path: Path, html: str) -> None:
    """Write a rendered page to ``path``, or say clearly why it could not be written."""
    try:
        path.write_text(html, encoding="utf-8")
    except OSError as exc:
        raise ReprobotError(f"cannot write the page to {path}: {exc}") from exc


def render_page(page: Page, earlier: tuple[EarlierHead, ...] = ()) -> str:
    """The HTML of ``page``."""
    assets = _assets()
    template = _environment().get_template(f"{page.kind}.html.j2")
    return template.render(
        page=page,
        earlier=earlier,
        css=Markup(assets.css),
        script=Markup(assets.script),
        csp=assets.csp,
    )
