"""structlog set-up: key/value events on stderr, JSON when asked (as the App runs)."""

from __future__ import annotations

import logging
import sys

import structlog


class _CurrentStderr:
    """Whatever ``sys.stderr`` is when a line is written, not when logging was configured (a
    test runner or a daemon may swap it)."""

    def write(self, text: str) -> int:
        return sys.stderr.write(text)

    def flush(self) -> None:
        sys.stderr.flush()


def configure_logging(json_output: bool = False, level: int = logging.INFO) -> None:
    processors: list[structlog.types.Processor] = [
        structlog.contextvars.merge_contextvars,
        structlog.processors.add_log_level,
        structlog.processors.TimeStamper(fmt="iso"),
    ]
    if json_output:
        # A logged exception's traceback becomes text in the event ("exception").
        processors += [structlog.processors.format_exc_info, structlog.processors.JSONRenderer()]
    else:
        processors.append(structlog.dev.ConsoleRenderer(colors=False))
    structlog.configure(
        processors=processors,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        # One write a line (message and newline together): stderr writes through to its file, so
        # processes sharing one log (a worker's threads, several workers on one sink) would
        # otherwise interleave a message with another's before its newline.
        logger_factory=structlog.WriteLoggerFactory(file=_CurrentStderr()),  # type: ignore[arg-type]
        cache_logger_on_first_use=False,
    )
