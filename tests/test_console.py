"""Progress and console output for a person: a line per slow step with its time, detail on
request, and nothing cut when output is a file."""

from __future__ import annotations

import io

import pytest
from rich.console import Console
from rich.table import Table

from reprobot.console import PLAIN_WIDTH, ConsoleProgress, console, printable, untrusted
from reprobot.progress import SILENT, elapsed


@pytest.mark.parametrize(
    ("seconds", "text"),
    [
        (0.04, "0.0 s"),
        (12.34, "12.3 s"),
        (59.94, "59.9 s"),
        (125, "2 min 05 s"),
        (3725, "1 h 02 min"),
    ],
)
def test_elapsed_reads_at_a_glance(seconds: float, text: str) -> None:
    assert elapsed(seconds) == text


def test_silent_progress_says_nothing_and_lets_errors_through() -> None:
    with SILENT.step("anything"):
        SILENT.detail("more")
    with pytest.raises(RuntimeError, match="boom"), SILENT.step("failing"):
        raise RuntimeError("boom")


def plain() -> tuple[Console, io.StringIO]:
    out = io.StringIO()
    return Console(file=out, width=200), out


def test_a_step_is_told_when_it_starts_and_when_it_ends() -> None:
    out, text = plain()
    with ConsoleProgress(out).step("building the environment"):
        assert text.getvalue() == "… building the environment\n"
    start, end = text.getvalue().splitlines()
    assert start == "… building the environment"
    assert end.startswith("✓ building the environment (") and end.endswith(" s)")


def test_a_failed_step_says_so_and_the_error_goes_on() -> None:
    out, text = plain()
    with pytest.raises(ValueError, match="no"), ConsoleProgress(out).step("bootstrapping"):
        raise ValueError("no")
    assert text.getvalue().splitlines()[-1].startswith("✗ bootstrapping: failed after ")


def test_detail_only_when_asked_for() -> None:
    out, text = plain()
    ConsoleProgress(out).detail("sandbox run 1")
    assert text.getvalue() == ""
    ConsoleProgress(out, verbose=True).detail("sandbox run 1: 1 failed in 1.2 s")
    assert text.getvalue() == "  sandbox run 1: 1 failed in 1.2 s\n"


def test_on_a_terminal_a_live_clock_runs_and_the_lines_stay() -> None:
    text = io.StringIO()
    out = Console(file=text, width=100, force_terminal=True, color_system=None)
    with ConsoleProgress(out).step("drafting"):
        pass
    assert "… drafting" in text.getvalue()
    assert "✓ drafting (" in text.getvalue()


def test_a_console_that_is_not_a_terminal_cuts_nothing() -> None:
    out = console()  # pytest captures standard output: not a terminal
    assert not out.is_terminal
    assert out.width == PLAIN_WIDTH
    long_id = "tests/test_parse_duration_durations_more_than_one_2.py::test_" + "x" * 60
    table = Table("method", "file", "why")
    table.add_row("issue-expected (chosen)", long_id, "fails with the issue's ValueError")
    with out.capture() as captured:
        out.print(table)
    assert long_id in captured.get()


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("a\x1b[31mred\x1b[0m b", "ared b"),
        ("x\x1b]0;a new window title\x07y", "xy"),
        ("x\x1b]8;;http://example.invalid\x1b\\link\x1b]8;;\x1b\\", "xlink"),
        ("unterminated \x1b]0;title", "unterminated "),
        ("tab\tline\nnext\r\n", "tab\tline\nnext\n"),
        ("bell\x07 back\x08space del\x7f c1\x9b", "bell backspace del c1"),
        ("é ü ✓ [bold]not markup[/]", "é ü ✓ [bold]not markup[/]"),
        # Bidirectional controls (Trojan Source): the text reads in the order it is stored.
        ("if admin:\u202e ;nimda\u2066 x\u2069\u200f\u061c", "if admin: ;nimda x"),
        # A zero-width space is not a control: mentions are neutralised with it.
        ("@\u200bteam", "@\u200bteam"),
    ],
)
def test_untrusted_text_loses_its_control_sequences(text: str, shown: str) -> None:
    assert printable(text) == shown
    rendered = untrusted(text)
    assert rendered.plain == shown
    assert rendered.spans == []


def test_printable_is_linear_on_hostile_input() -> None:
    # An unterminated sequence repeated: each alternative consumes what it matched once.
    hostile = "\x1b[" + "1;" * 200_000 + "\x1b]" + "x" * 200_000
    assert printable(hostile) == ""
