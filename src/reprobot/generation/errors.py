"""Errors of the drafting layer, under ``ReprobotError``."""

from __future__ import annotations

from reprobot.errors import ReprobotError


class DraftingError(ReprobotError):
    """Drafting could not go on (bad issue input, no usable repository tree)."""


class DiffFormatError(DraftingError):
    """A drafted edit (function-level or unified diff) cannot be read or placed; the message says
    why in words that can go back to the model."""


class LLMError(DraftingError):
    """The LLM endpoint failed after its retries, or answered something unusable."""


class BudgetExhausted(LLMError):
    """The token budget of this issue is spent."""
