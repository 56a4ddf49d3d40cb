"""Closing references in pull request bodies and ``/reprobot`` commands in comments."""

from __future__ import annotations

import pytest

from reprobot.bot.github.linked_issues import Command, closing_references, parse_command

REPO = "pallets/flask"

# A pull request template full of HTML comments, filled in by a contributor.
TEMPLATE_BODY = """\
<!--
Before opening a pull request, link the issue it fixes, e.g. "fixes #123".
Fixes #1
-->

Make `url_for` keep the query string.

```python
# fixes #2 (an example, not a reference)
url_for("index", _anchor="x")
```

fixes #5566, fixes #5570
<!-- Ensure each step in CONTRIBUTING.rst is complete, closes #3 -->
- [x] Add tests that demonstrate the correct behavior of the change.
"""


def test_pull_request_template() -> None:
    assert closing_references(TEMPLATE_BODY, REPO) == [5566, 5570]


@pytest.mark.parametrize(
    ("body", "numbers"),
    [
        ("Fixes #12", [12]),
        ("closes #1, fixes #2", [1, 2]),
        ("Closes #3 and closes #4", [3, 4]),
        ("Fixes: #12", [12]),
        ("RESOLVED:#7.", [7]),
        ("close #1 close #1 closed #1", [1]),
        ("fixed #9 then fix #8", [9, 8]),
        ("Fixes #22, #23", [22]),  # GitHub needs a keyword before each one
        ("prefixes #3 and hotfix #4", []),
        ("fixes #18abc", []),
        ("fixes # 5", []),
        ("fixes #0", []),
        ("Fixes pallets/flask#7", [7]),
        ("Fixes Pallets/Flask#7", [7]),
        ("fixes pallets/werkzeug#8", []),
        ("fixes other/flask#8", []),
        ("resolves https://github.com/pallets/flask/issues/9", [9]),
        ("Fixes https://github.example.com/Pallets/flask/issues/10#issuecomment-1", [10]),
        ("fixes https://github.com/pallets/flask/pull/10", []),
        ("fixes https://github.com/pallets/jinja/issues/11", []),
        ("see #5", []),
        ("`fixes #11` is how to write it", []),
        ("``code with ` fixes #12``", []),
        ("~~~\nfixes #13\n~~~\nfixes #14", [14]),
        ("````\n```\nfixes #15\n```\n````\nfixes #16", [16]),
        ("```\nfixes #17 (the fence never closes)", []),
        ("<!-- fixes #18 -->Fixes #19", [19]),
        ("<!-- an unclosed comment fixes #20", []),
        ("", []),
        (None, []),
    ],
)
def test_closing_references(body: str | None, numbers: list[int]) -> None:
    assert closing_references(body, REPO) == numbers


@pytest.mark.parametrize(
    ("body", "command"),
    [
        ("/reprobot verify", Command("verify")),
        ("/reprobot reproduce", Command("reproduce")),
        ("  /Reprobot   REPRODUCE  \n", Command("reproduce")),
        ("Thanks!\n\n/reprobot verify\n", Command("verify")),
        ("/reprobot reproduce\n/reprobot verify", Command("reproduce")),
        ("/reprobot verify please\n/reprobot reproduce", Command("reproduce")),
        ("/reprobot verify please", None),
        ("please /reprobot verify", None),
        ("/reprobot", None),
        ("/reprobot fix", None),
        ("/reprobotverify", None),
        ("> /reprobot verify", None),
        ("  > /reprobot verify", None),
        ("```\n/reprobot verify\n```", None),
        ("<!-- /reprobot verify -->", None),
        ("`/reprobot verify`", None),
        ("", None),
        (None, None),
    ],
)
def test_parse_command(body: str | None, command: Command | None) -> None:
    assert parse_command(body) == command
