"""A tiny package with a real bug (``parse_size("1.5k")`` raises), its issue, scripted LLM
replies for it, and an LLM client pointed at the local chat-completions server."""

from __future__ import annotations

from pathlib import Path

import openai

from reprobot.generation.issue.report import IssueReport, parse_issue
from reprobot.generation.llm.client import LLMClient, TokenBudget
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.openai_server import API_KEY, OpenAIServer
from tests.support.repos import make_repo

SIZES = '''\
"""Human-readable sizes."""

UNITS = {"k": 1024, "m": 1024**2}


def parse_size(text):
    """"10k" -> 10240."""
    if text[-1] in UNITS:
        return int(text[:-1]) * UNITS[text[-1]]
    return int(text)
'''
EXISTING_TEST = """\
from sizes import parse_size


def test_plain_number():
    assert parse_size("10") == 10
"""
ISSUE_BODY = """\
Fractions with a unit are refused:

```python
>>> from sizes import parse_size
>>> parse_size("1.5k")
Traceback (most recent call last):
  File "<stdin>", line 1, in <module>
  File "/home/me/sizes/__init__.py", line 9, in parse_size
ValueError: invalid literal for int() with base 10: '1.5'
```

I expected 1536.
"""

NEW_TEST_BLOCK = """\
Here is the test.

diff
tests/test_sizes_fraction.py
insert
EOF
from sizes import parse_size


def test_fraction_with_unit():
    assert parse_size("1.5k") == 1536
end diff
"""


def sizes_repo(tmp_path: Path) -> RepoSnapshot:
    """A tiny package with the bug of ``sizes_issue`` and one existing test module."""
    repo = make_repo(
        tmp_path / "sizes",
        {
            "pyproject.toml": '[project]\nname = "sizes"\nversion = "1.0"\n',
            "sizes/__init__.py": SIZES,
            "tests/__init__.py": "",
            "tests/test_sizes.py": EXISTING_TEST,
            "docs/notes.txt": "parse_size notes\n",
        },
    )
    return RepoSnapshot.from_git(repo, "HEAD", "example/sizes")


def sizes_issue(body: str = ISSUE_BODY) -> IssueReport:
    return parse_issue("parse_size fails on fractions like 1.5k", body)


def llm_for(server: OpenAIServer, budget: int = 1_000_000, timeout_s: float = 5.0) -> LLMClient:
    sdk = openai.OpenAI(base_url=server.url, api_key=API_KEY)
    return LLMClient(
        sdk,
        "scripted-model",
        max_tokens=900,
        temperature=0.8,
        budget=TokenBudget(budget),
        timeout_s=timeout_s,
        max_retries=0,
    )
