"""Drafting reproducing tests: reading the issue, the no-LLM drafter, edit formats, the LLM
methods, and the pool that runs, matches and selects candidates (``pool.reproduce``).

What the layers above use of it is exported here, and they import it from here only."""

from __future__ import annotations

from reprobot.generation.drafter.test_writer import generated_messages
from reprobot.generation.issue.file import read_issue
from reprobot.generation.issue.report import parse_issue
from reprobot.generation.llm.setup import bind_llm_drafter
from reprobot.generation.pool.confidence import MAX_SCORE as MAX_CONFIDENCE
from reprobot.generation.pool.confidence import Confidence
from reprobot.generation.pool.confidence import of_records as confidence_of_records
from reprobot.generation.pool.failure_match import parse_failure
from reprobot.generation.pool.reproduce import LLMDrafter, Reproduction, reproduce
from reprobot.generation.repo.linter import LINT_PASSES, NO_LINTER_SETTINGS, lint_summary

__all__ = [
    "LINT_PASSES",
    "MAX_CONFIDENCE",
    "NO_LINTER_SETTINGS",
    "Confidence",
    "LLMDrafter",
    "Reproduction",
    "bind_llm_drafter",
    "confidence_of_records",
    "generated_messages",
    "lint_summary",
    "parse_failure",
    "parse_issue",
    "read_issue",
    "reproduce",
]
