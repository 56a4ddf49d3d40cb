"""Whether an issue shows a test runner's session."""

from __future__ import annotations

import pytest

from reprobot.generation.issue.file import read_issue
from reprobot.generation.issue.runner_session import shows_runner_session


@pytest.mark.parametrize(
    ("output", "shown"),
    [
        ("============================= test session starts ==========", True),
        ("collected 1 item\n\ntest_a.py F", True),
        ("INTERNALERROR> Traceback (most recent call last):", True),
        ("=================== 1 failed, 2 passed in 0.12s ===================", True),
        ("=========================== short test summary info ============================", True),
        ("Ran 3 tests in 0.001s\n\nFAILED (failures=1)", True),
        # A package listing, a plain traceback, prose counting tests.
        ("Package    Version\n---------- -------\npytest     7.1.1", False),
        ('Traceback (most recent call last):\n  File "a.py", line 1\nValueError: x', False),
        ("I ran 3 tests and 2 passed", False),
    ],
)
def test_which_outputs_are_a_runners_session(output: str, shown: bool) -> None:
    code = "```python\ndef test_a():\n    assert f()\n```"
    issue = read_issue(f"Title\n\n{code}\n\n```\n{output}\n```\n")
    assert shows_runner_session(issue) is shown
