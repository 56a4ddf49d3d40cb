"""The LLM methods bound to a configured endpoint, in the shape ``reproduce`` takes them."""

from __future__ import annotations

from reprobot.generation.drafter.test_style import TestStyle
from reprobot.generation.drafts import Draft, RunDraft
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.llm.client import LLMClient, make_client
from reprobot.generation.llm.methods import llm_drafts
from reprobot.generation.pool.reproduce import LLMDrafter
from reprobot.settings import Settings
from reprobot.validation import RepoSnapshot


def llm_drafter_for(llm: LLMClient, settings: Settings) -> LLMDrafter:
    def draft(
        issue: IssueReport, snapshot: RepoSnapshot, run_draft: RunDraft, style: TestStyle
    ) -> tuple[list[Draft], list[tuple[str, str]]]:
        return llm_drafts(issue, snapshot, llm, run_draft, settings, style)

    return draft


def bind_llm_drafter(settings: Settings) -> LLMDrafter | None:
    """None when no endpoint and model are configured: then no LLM is ever called."""
    llm = make_client(settings)
    return llm_drafter_for(llm, settings) if llm is not None else None
