"""Output for a person at the command line: consoles that do not cut lines when output is a
file, and progress on standard error: a line when a slow step starts and one when it ends, with
its elapsed time, and a live spinner with a clock in between where a terminal is attached."""

from __future__ import annotations

import contextlib
import re
import time
from collections.abc import Iterator

from rich.console import Console
from rich.progress import Progress as RichProgress
from rich.progress import SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from reprobot.progress import elapsed

# Wide enough that a step's line, a path or a table row is never broken when output is a file.
PLAIN_WIDTH = 240


# Terminal control sequences (CSI, OSC, and other ESC sequences), the control characters that
# are neither a tab nor a line break, C1 included, and the bidirectional controls (embeddings,
# overrides, isolates and marks): text from an issue, a project's output or a sandbox must not
# move a reader's cursor, retitle a window, hide what precedes it, or read in another order than
# it runs. Each alternative is linear: no repeated group can match the same characters two ways.
_CONTROLS = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?"
    r"|\x1b[@-Z\\-_]?"
    r"|[\x00-\x08\x0b-\x1f\x7f-\x9f]"
    r"|[\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]"
)


def printable(text: str) -> str:
    """``text`` without terminal control sequences, control characters (tabs and line breaks
    stay) and bidirectional controls: the one sanitiser of untrusted text wherever Reprobot
    writes it (comments, checks, pages, drafted test files, the console)."""
    return _CONTROLS.sub("", text)


def untrusted(text: str) -> Text:
    """Text from an untrusted source as rich shows it: no markup read, no control sequence."""
    return Text(printable(text))


def console(stderr: bool = False) -> Console:
    """A console as wide as the terminal, or ``PLAIN_WIDTH`` when output is not one (rich's
    default of 80 columns cuts tables and breaks long lines in logs)."""
    probe = Console(stderr=stderr)
    if probe.is_terminal:
        return probe
    return Console(stderr=stderr, width=PLAIN_WIDTH, soft_wrap=True)


class ConsoleProgress:
    """``reprobot.progress.Progress`` for a person at the command line."""

    def __init__(self, out: Console, verbose: bool = False) -> None:
        self.out = out
        self.verbose = verbose

    @contextlib.contextmanager
    def step(self, what: str, kind: str = "") -> Iterator[None]:
        started = time.monotonic()
        self.out.print(f"… {what}", markup=False, highlight=False)
        try:
            if self.out.is_terminal:
                with RichProgress(
                    SpinnerColumn(),
                    TextColumn("{task.description}"),
                    TimeElapsedColumn(),
                    console=self.out,
                    transient=True,
                ) as live:
                    live.add_task(what, total=None)
                    yield
            else:
                yield
        except BaseException:
            took = elapsed(time.monotonic() - started)
            self.out.print(f"✗ {what}: failed after {took}", markup=False, highlight=False)
            raise
        took = elapsed(time.monotonic() - started)
        self.out.print(f"✓ {what} ({took})", markup=False, highlight=False)

    def detail(self, what: str, kind: str = "", seconds: float | None = None) -> None:
        if self.verbose:
            self.out.print(f"  {what}", markup=False, highlight=False)


def progress_for(args: object) -> ConsoleProgress:
    """The progress of a command: on standard error, with detail when ``-v`` was given."""
    return ConsoleProgress(console(stderr=True), verbose=bool(getattr(args, "verbose", False)))
