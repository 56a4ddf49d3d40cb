"""The ``reprobot`` command: a thin dispatcher over the command modules of each layer on top."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

from reprobot import __version__
from reprobot.bench import register as register_bench
from reprobot.cli import app as cli_app
from reprobot.cli import reproduce as cli_reproduce
from reprobot.cli import sandbox as cli_sandbox
from reprobot.cli import serve as cli_serve
from reprobot.cli import verify as cli_verify
from reprobot.console import printable
from reprobot.errors import ReprobotError
from reprobot.logs import configure_logging
from reprobot.settings import Settings

EXIT_ERROR = 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="reprobot",
        description="Draft tests that reproduce reported bugs, and verify fixes against them.",
    )
    parser.add_argument("--version", action="version", version=f"reprobot {__version__}")
    parser.add_argument("-v", "--verbose", action="store_true", help="log progress to stderr")
    sub = parser.add_subparsers(dest="command", required=True)
    cli_sandbox.register(sub)
    cli_verify.register(sub)
    cli_reproduce.register(sub)
    cli_serve.register(sub)
    cli_app.register(sub)
    register_bench(sub)
    return parser


def error_line(exc: BaseException) -> str:
    """An error as one line a script can read: its cause may quote a project's output (a
    module name, a log line), so control characters go and line breaks become spaces."""
    return " ".join(printable(str(exc)).split())


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    configure_logging(level=10 if args.verbose else 30)
    try:
        settings = Settings()
        code: int = args.handler(args, settings)
    except (ReprobotError, OSError) as exc:
        print(f"reprobot: error: {error_line(exc)}", file=sys.stderr)
        return EXIT_ERROR
    except KeyboardInterrupt:
        return 130
    return code


if __name__ == "__main__":
    sys.exit(main())
