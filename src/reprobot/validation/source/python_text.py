"""What may go wrong when parsing Python text nobody vouches for: a repository's files, an
issue's code, a model's output.

``ast.parse`` raises more than ``SyntaxError``: ``ValueError`` for a NUL byte,
``RecursionError`` or ``MemoryError`` for deeply nested or huge code, and on CPython 3.11 a
``SystemError`` ("AST constructor recursion depth mismatch") where it should have raised
``RecursionError``. Each of them means "this text cannot be read", never a crash.
"""

from __future__ import annotations

UNPARSABLE: tuple[type[Exception], ...] = (
    SyntaxError,
    ValueError,
    RecursionError,
    MemoryError,
    SystemError,
)
# The same, bar SyntaxError: for callers that report a SyntaxError's line and message.
UNREADABLE: tuple[type[Exception], ...] = UNPARSABLE[1:]
