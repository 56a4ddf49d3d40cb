"""The names drafts carry, one per drafting method: the no-LLM drafter's variants, in the order
of their table (``variants.VARIANTS``, which ranks them and says what each checks), then the LLM
methods. A builder names its drafts by a member; the table's rows are exactly its members."""

from __future__ import annotations

from enum import StrEnum


class Method(StrEnum):
    ISSUE_EXPECTED = "issue-expected"
    ISSUE_CODE = "issue-code"
    ISSUE_SESSION_RAISES = "issue-session-raises"
    ISSUE_COMMAND = "issue-command"
    ISSUE_WRONG_VALUE = "issue-wrong-value"
    ISSUE_CODE_LAST = "issue-code-last"
    ISSUE_SHOWN_VALUE = "issue-shown-value"
    LLM_AGENT = "llm-agent"
    LLM_ZERO_SHOT = "llm-zero-shot"


# The LLM methods, which rank after every variant of the issue's own code.
LLM_METHODS = (Method.LLM_AGENT, Method.LLM_ZERO_SHOT)
