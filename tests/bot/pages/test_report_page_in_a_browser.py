"""Report pages in a real browser (headless Chromium): hostile test names, failures and logs stay
text, the page's own script runs under its policy, and nothing is fetched from anywhere."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from reprobot.bot.pages.html import render_page
from tests.bot.pages.test_report_page import HOSTILE_FAILURE, HOSTILE_ID, _page
from tests.support.browser import Chromium

pytestmark = pytest.mark.browser
ARTIFACTS = Path(__file__).resolve().parents[3] / "test-artifacts" / "pages"


@pytest.fixture(scope="module")
def chromium(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Chromium]:
    browser = Chromium(tmp_path_factory.mktemp("chromium"))
    yield browser
    browser.close()


def test_hostile_text_renders_as_text_in_a_real_browser(chromium: Chromium, tmp_path: Path) -> None:
    page_file = tmp_path / "page.html"
    page_file.write_text(render_page(_page()), encoding="utf-8")
    tab = chromium.tab()
    load = tab.load(page_file.as_uri(), 1280, 900)
    tab.screenshot(ARTIFACTS / "hostile-desktop.png")
    assert load.dialogs == []
    assert load.problems == []
    # The page's only request is itself: no script, style, image or font from anywhere.
    assert load.requests == [page_file.as_uri()]
    assert load.title == "acme/durations #7: verified · Reprobot"
    assert tab.evaluate("document.querySelectorAll('img, iframe, b').length") == 0
    assert tab.evaluate("document.scripts.length") == 1
    # What the test's name and its failure said is on the page, as text.
    tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    text = tab.evaluate("document.body.innerText")
    assert HOSTILE_ID in text
    assert "<img src=x onerror=alert(1)>" in text and "</pre><b>bold</b>" in HOSTILE_FAILURE
    assert "</pre><b>bold</b>" in text
    # The page's own script ran under the policy: the copy button shows.
    assert tab.evaluate("document.querySelector('button.copy').hidden") is False


def test_a_page_fits_a_phone(chromium: Chromium, tmp_path: Path) -> None:
    page_file = tmp_path / "page.html"
    page_file.write_text(render_page(_page()), encoding="utf-8")
    tab = chromium.tab()
    load = tab.load(page_file.as_uri(), 390, 844, mobile=True)
    tab.screenshot(ARTIFACTS / "hostile-phone.png")
    assert load.problems == []
    # Nothing wider than the screen: long ids and lines wrap or scroll inside their box.
    assert tab.evaluate("document.documentElement.scrollWidth") <= 390
    # Code, diffs and tracebacks keep their lines and indentation, each in a box of its own
    # that scrolls sideways, at least 300 px wide: not a narrow column of wrapped fragments.
    tab.evaluate("document.querySelectorAll('details').forEach(d => d.open = true)")
    boxes = tab.evaluate(
        "[...document.querySelectorAll('pre, .file')].map(e => [e.tagName, "
        "Math.round(e.getBoundingClientRect().width), getComputedStyle(e).whiteSpace])"
    )
    assert boxes
    narrow = [box for box in boxes if box[1] < 300]
    assert narrow == [], boxes
    assert {box[2] for box in boxes if box[0] == "PRE"} == {"pre"}
    cells = tab.evaluate(
        "[...document.querySelectorAll('table.diff td.src')]"
        ".map(e => getComputedStyle(e).whiteSpace)"
    )
    assert set(cells) == {"pre"}
