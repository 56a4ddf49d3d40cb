"""Which test commands a sandbox can run and report on, read on the host.

pytest runs with Reprobot's plugin; the unittest family (``python -m unittest``, a Django
project's ``manage.py test``, ``python -m django test``, ``django-admin test``, and Django's own
``tests/runtests.py``) runs under Reprobot's unittest reporter. Both report per-test outcomes in
the same form. Any other command (``tox``, ``nox``, a project's own script) reports nothing
Reprobot can trust, so a spec never uses one as it is.
"""

from __future__ import annotations

import re
import shlex
from pathlib import PurePosixPath
from typing import Literal

Family = Literal["pytest", "unittest"]

ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
PYTHON_PROGRAM = re.compile(r"^python(\d(\.\d+)?)?$")


def command_words(command: str) -> list[str]:
    """The words of a test command after its leading ``NAME=value`` assignments."""
    words = shlex.split(command)
    while words and ASSIGNMENT.match(words[0]):
        words = words[1:]
    return words


Runner = Literal["pytest", "unittest", "django"]


def runner_of(command: str) -> Runner | None:
    """``pytest``; ``django`` (``manage.py test``, ``python -m django test``, ``django-admin
    test``, ``tests/runtests.py``); ``unittest`` (``python -m unittest``); or None."""
    try:
        words = command_words(command)
    except ValueError:
        return None
    if not words:
        return None
    name = PurePosixPath(words[0]).name
    if name in ("pytest", "py.test"):
        return "pytest"
    rest = words[1:] if PYTHON_PROGRAM.match(name) else words
    while PYTHON_PROGRAM.match(name) and rest and rest[0].startswith("-") and rest[0] != "-m":
        rest = rest[2:] if rest[0] in ("-W", "-X") else rest[1:]
    if rest[:2] == ["-m", "pytest"]:
        return "pytest"
    if rest[:2] == ["-m", "unittest"]:
        return "unittest"
    if rest[:3] == ["-m", "django", "test"]:
        return "django"
    if rest and PurePosixPath(rest[0]).name == "django-admin" and rest[1:2] == ["test"]:
        return "django"
    if rest and PurePosixPath(rest[0]).name == "manage.py" and rest[1:2] == ["test"]:
        return "django"
    if rest and PurePosixPath(rest[0]).name == "runtests.py":
        return "django"
    return None


def runner_family(command: str) -> Family | None:
    """``pytest``, ``unittest`` (the unittest family, Django's runners included) or None."""
    runner = runner_of(command)
    if runner is None or runner == "pytest":
        return runner
    return "unittest"
