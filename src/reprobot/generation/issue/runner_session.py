"""Whether an issue shows a test runner's session: its report of running tests (pytest's
"test session starts", a summary line, an ``INTERNALERROR>``; unittest's "Ran 3 tests").

Tests an issue writes out are then what the runner ran, its report the problem: a pytest issue's
example module. Without one, tests the issue writes out are its own proposal of a regression
test, to be run as the project's tests."""

from __future__ import annotations

import re

from reprobot.generation.issue.report import IssueReport

_SESSION = re.compile(
    r"test session starts|short test summary info|^INTERNALERROR>|^collected \d+ items?\b"
    r"|^=+ .{0,200}?\b\d+ (?:passed|failed|errors?|skipped|xfailed)\b|^Ran \d+ tests? in ",
    re.MULTILINE,
)


def shows_runner_session(issue: IssueReport) -> bool:
    """Whether the issue's text holds a test runner's report of a session."""
    return _SESSION.search(issue.body) is not None
