"""The LLM methods of one issue, in order: zero-shot sampling, then the agent.

Both share one code index and one token budget. A failing endpoint costs only the method it hit
(recorded as a rejection); a spent budget ends both, since any further request would be refused.
"""

from __future__ import annotations

import structlog

from reprobot.generation.drafter.test_style import PYTEST, TestStyle
from reprobot.generation.drafts import Draft, RunDraft
from reprobot.generation.errors import LLMError
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.llm import agent as llm_agent
from reprobot.generation.llm import zero_shot as llm_zero_shot
from reprobot.generation.llm.client import LLMClient
from reprobot.generation.llm.retrieval import CodeIndex
from reprobot.settings import Settings
from reprobot.validation import RepoSnapshot

log = structlog.get_logger(__name__)


def llm_drafts(
    issue: IssueReport,
    snapshot: RepoSnapshot,
    llm: LLMClient,
    run_draft: RunDraft,
    settings: Settings,
    style: TestStyle = PYTEST,
) -> tuple[list[Draft], list[tuple[str, str]]]:
    """Drafts of both LLM methods for ``issue`` on ``snapshot``, asked for in ``style`` (the
    shape the project's runner collects), and (method, reason) for each method or reply that
    produced none. Never raises LLMError."""
    # The client is usually built once per process; the budget is per issue.
    llm = llm.for_issue()
    index = CodeIndex.build(snapshot)
    drafts: list[Draft] = []
    rejected: list[tuple[str, str]] = []

    if settings.llm_samples > 0:
        try:
            found, refused = llm_zero_shot.zero_shot_drafts(
                issue, snapshot, index, llm, settings.llm_samples, style
            )
            drafts += found
            rejected += refused
        except LLMError as exc:  # BudgetExhausted included: the agent is then skipped below
            rejected.append((llm_zero_shot.METHOD, str(exc)))

    if settings.llm_agent_steps > 0:
        # A spent budget (BudgetExhausted above, or sampling that stopped at it) ends both.
        if llm.budget.remaining <= 0:
            spent = (
                f"not run: the time budget of {llm.budget.seconds:.0f} s for model work is spent"
                if llm.budget.seconds_left() == 0
                else f"not run: the token budget of {llm.budget.limit} tokens is spent"
            )
            rejected.append((llm_agent.METHOD, spent))
        else:
            try:
                found, refused = llm_agent.agent_drafts(
                    issue, snapshot, index, llm, run_draft, settings.llm_agent_steps, style
                )
                drafts += found
                rejected += refused
            except LLMError as exc:
                rejected.append((llm_agent.METHOD, str(exc)))

    log.info(
        "llm.drafts",
        drafts=len(drafts),
        rejected=len(rejected),
        tokens=llm.budget.spent,
        token_budget=llm.budget.limit,
    )
    return drafts, rejected
