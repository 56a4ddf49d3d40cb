"""Report pages: a verdict or a reproduction as a stored document and as HTML, with untrusted
text (test names, failures, logs, diffs) shown as text whatever it holds."""

from __future__ import annotations

import base64
import hashlib
import re
import time
from html.parser import HTMLParser
from pathlib import Path

import pytest
from pydantic import SecretStr

from reprobot.bot.pages.diff_view import diff_files
from reprobot.bot.pages.documents import VerdictPage, clean, verdict_page
from reprobot.bot.pages.html import EarlierHead, page_csp, render_page, write_page
from reprobot.bot.pages.links import PageLinks, page_key
from reprobot.bot.pages.route import page_html
from reprobot.bot.store.engine import make_engine, migrate
from reprobot.bot.store.pages import Pages
from reprobot.errors import ReprobotError
from reprobot.settings import Settings
from reprobot.validation.results.testrun import FileCoverage, Outcome, TestRun
from reprobot.validation.source.patch import Patch
from reprobot.validation.verify import Verdict, grade

P, F = Outcome.PASSED, Outcome.FAILED
BASE, HEAD = "b" * 40, "c" * 40
FIX = (
    "--- a/m.py\n+++ b/m.py\n@@ -1,3 +1,5 @@\n"
    " def f(x):\n"
    "-    return x\n"
    "+    if x < 0:\n"
    "+        return -x\n"
    "+    return x * 1\n"
    " \n"
)
OLD = b"def f(x):\n    return x\n\n"
NEW = b"def f(x):\n    if x < 0:\n        return -x\n    return x * 1\n\n"
TESTS = (
    "--- /dev/null\n+++ b/test_m.py\n@@ -0,0 +1,2 @@\n+def test_neg():\n+    assert f(-1) == 1\n"
)
HOSTILE_ID = 'test_m.py::test_neg[<script>alert("id")</script>]'
HOSTILE_FAILURE = (
    "E   assert -1 == 1\n<img src=x onerror=alert(1)>\n\x1b[31mred\x1b[0m \ud800 </pre><b>bold</b>"
)


def _verdict() -> Verdict:
    before = TestRun(
        outcomes={HOSTILE_ID: F, "test_m.py::test_pos": P},
        failures={HOSTILE_ID: HOSTILE_FAILURE},
        coverage={"m.py": FileCoverage(statements=frozenset({1, 2}), executed=frozenset({1, 2}))},
        log_excerpt="<script>document.title='log'</script>\x1b]0;retitled\x07",
    )
    after = TestRun(
        outcomes={HOSTILE_ID: P, "test_m.py::test_pos": P},
        # Line 3 (return -x) ran; line 4 (return x * 1) did not.
        coverage={
            "m.py": FileCoverage(statements=frozenset({1, 2, 3, 4}), executed=frozenset({1, 2, 3}))
        },
    )
    return grade(before, after, Patch(FIX), {"m.py": OLD}, {"m.py": NEW}, BASE, HEAD)


def _page() -> VerdictPage:
    return verdict_page(_verdict(), repo="acme/durations", tests_diff=TESTS, pull=7, issues=[3])


def test_changed_lines_are_marked_run_or_not_run() -> None:
    verdict = _verdict()
    (file,) = diff_files(FIX, verdict.change_coverage)
    marks = {(ln.kind, ln.old, ln.new): ln.mark for h in file.hunks for ln in h.lines}
    assert marks[("removed", 2, None)] == "run"
    assert marks[("added", None, 2)] == "run"
    assert marks[("added", None, 3)] == "run"
    assert marks[("added", None, 4)] == "not run"
    assert marks[("context", 1, 1)] == ""
    assert (file.covered, file.executable) == (3, 4)
    # Each line is highlighted on its own: its spans close on the line.
    for line in (ln for h in file.hunks for ln in h.lines):
        assert line.html.count("<span") == line.html.count("</span>")


def test_a_renamed_file_and_a_diff_that_does_not_parse() -> None:
    renamed = "--- a/old.py\n+++ b/new.py\n@@ -1 +1 @@\n-a = 1\n+a = 2\n"
    (file,) = diff_files(renamed)
    assert (file.path, file.old_path) == ("new.py", "old.py")
    (broken,) = diff_files("--- a/x.py\n+++ b/x.py\n@@ -1,5 +1,5 @@\n-only one line\n")
    assert broken.path == "(unparsed diff)"
    assert [ln.text for ln in broken.hunks[0].lines][-1] == "-only one line"


def test_untrusted_text_is_made_printable_valid_and_bounded() -> None:
    assert clean("a\x1b[31mb\x1b[0m\x07c", 100) == "abc"
    assert clean("x\ud800y", 100) == "x?y"
    assert len(clean("z" * 10_000, 100)) < 200
    # A traceback keeps its end, where it says what went wrong.
    assert clean("frame\n" * 5_000 + "E   ValueError: boom", 100, keep="tail").endswith("boom")


def test_the_verdict_page_says_what_the_comment_says_and_marks_the_lines() -> None:
    page = _page()
    html = render_page(page)
    assert "Verified: 1 reproducing test fails before this change and passes with it" in html
    assert page.coverage.covered == 3 and page.coverage.executable == 4
    assert "the tests execute 3 of 4 executable changed lines (75%)" in html
    assert html.count('class="mark not-run"') == 1
    assert html.count('class="mark run"') == 3
    assert "fail → pass (reproduced, then fixed)" in html
    assert "pull request #7" in html and "#3" in html


def test_hostile_text_renders_as_text() -> None:
    html = render_page(_page())
    for raw in ("<script>alert", "<img src=x", "<b>bold</b>", "</pre><b>", "<script>document"):
        assert raw not in html
    assert "&lt;img src=x onerror=alert(1)&gt;" in html
    # Terminal sequences are gone whole, an OSC title's text included.
    assert "\x1b" not in html and "retitled" not in html
    assert "\ud800" not in html
    html.encode("utf-8")  # every code point is encodable
    # Exactly one script element, Reprobot's own, and one style element.
    assert len(re.findall(r"<script\b", html)) == 1
    assert len(re.findall(r"<style\b", html)) == 1


class _Inline(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.inside: str | None = None
        self.bodies: dict[str, str] = {}
        self.attributes: list[tuple[str, str | None]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.attributes += attrs
        if tag in ("script", "style"):
            self.inside = tag
            self.bodies[tag] = ""

    def handle_endtag(self, tag: str) -> None:
        self.inside = None

    def handle_data(self, data: str) -> None:
        if self.inside:
            self.bodies[self.inside] += data


def test_the_policy_allows_exactly_the_pages_own_style_and_script() -> None:
    html = render_page(_page())
    parser = _Inline()
    parser.feed(html)
    policy = page_csp()
    assert policy.startswith("default-src 'none'")
    for tag, directive in (("style", "style-src"), ("script", "script-src")):
        digest = base64.b64encode(hashlib.sha256(parser.bodies[tag].encode()).digest()).decode()
        assert f"{directive} 'sha256-{digest}'" in policy
    # No inline handler or style attribute, which the policy would block.
    names = {name for name, _ in parser.attributes}
    assert not any(name.startswith("on") for name in names)
    assert "style" not in names


def test_a_stored_document_renders_the_same_page() -> None:
    page = _page()
    again = VerdictPage.model_validate_json(page.model_dump_json())
    assert render_page(again) == render_page(page)


def test_earlier_heads_are_linked() -> None:
    html = render_page(_page(), earlier=(EarlierHead("/pages/tok", "d" * 40, "not_verified"),))
    assert '<a href="/pages/tok">dddddddddddd</a> (not verified)' in html


def _links(key: bytes = b"k" * 32, max_age_s: float = 3600) -> PageLinks:
    return PageLinks(key, "https://reprobot.example.org/", max_age_s)


def test_a_link_names_its_page_until_it_expires_and_not_when_altered(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    links = _links()
    url = links.url("page-id")
    assert url.startswith("https://reprobot.example.org/pages/")
    token = url.rsplit("/", 1)[1]
    assert links.page_id(token) == "page-id"
    # Altered (its signature, its time, its id), or signed with another key: no page. The
    # characters changed are whole ones: a base64 string's last character also carries padding
    # bits, so some changes to it decode to the same bytes, the same signature.
    payload, stamp, signature = token.split(".")
    flip = {"A": "B"}
    for altered in (
        f"{payload}.{stamp}.{flip.get(signature[0], 'A')}{signature[1:]}",
        f"{payload}.{flip.get(stamp[0], 'A')}{stamp[1:]}.{signature}",
        f"{flip.get(payload[0], 'A')}{payload[1:]}.{stamp}.{signature}",
    ):
        assert altered != token
        assert links.page_id(altered) is None
    assert _links(b"o" * 32).page_id(token) is None
    assert links.page_id("") is None and links.page_id("a.b.c") is None
    # An hour and a second later, the link has expired.
    later = time.time() + 3601
    monkeypatch.setattr(time, "time", lambda: later)
    assert links.page_id(token) is None


def test_the_page_key_is_its_own_or_derived_from_the_webhook_secret() -> None:
    derived = page_key(Settings(webhook_secret=SecretStr("hook")))
    assert derived not in (b"hook", b"") and len(derived) == 32
    assert page_key(Settings(webhook_secret=SecretStr("other"))) != derived
    own = page_key(Settings(webhook_secret=SecretStr("hook"), page_secret=SecretStr("pages")))
    assert own == b"pages"


def test_the_route_finds_a_stored_page_and_nothing_else(tmp_path: Path) -> None:
    engine = make_engine(f"sqlite:///{tmp_path}/app.sqlite3")
    migrate(engine)
    pages = Pages(engine)
    links = _links()
    document = _page()
    first = pages.save("verdict", "acme/durations", 7, "d" * 40, "not_verified", "{}")
    stored = pages.save(
        "verdict", "acme/durations", 7, HEAD, "verified", document.model_dump_json()
    )
    html = page_html(pages, links, links.token(stored.id))
    assert html is not None and "Verified: 1 reproducing test" in html
    # The earlier head is linked with a token of its own, which the route reads.
    (earlier,) = re.findall(r'href="https://reprobot.example.org/pages/([^"]+)"', html)
    assert links.page_id(earlier) == first.id
    # A link to no page, an unsigned id, a page whose document does not read, an oversized
    # token: all the same nothing.
    assert page_html(pages, links, links.token("no-such-page")) is None
    assert page_html(pages, links, stored.id) is None
    assert page_html(pages, links, links.token(first.id)) is None
    assert page_html(pages, links, "a" * 5000) is None
    engine.dispose()
    # Another process on the same store (the App restarted) serves the same page. Its links
    # are signed anew, with the second they were made in: they are compared by what they open.
    again = make_engine(f"sqlite:///{tmp_path}/app.sqlite3")
    served = page_html(Pages(again), links, links.token(stored.id))
    again.dispose()
    assert served is not None
    (link,) = re.findall(r'href="https://reprobot.example.org/pages/([^"]+)"', served)
    assert links.page_id(link) == first.id
    assert served.replace(link, earlier) == html


def test_a_page_that_cannot_be_written_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(ReprobotError, match="cannot write the page to"):
        write_page(tmp_path / "no-such-folder" / "page.html", "<p>")
