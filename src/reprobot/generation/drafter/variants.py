"""The table of the no-LLM drafter's variants, best first: the order selection ranks candidates
in on equal strength and relevance, and the order drafts are made in. Adding a variant is its
builder (a function from a ``Reading`` to ``Produced``, in the module of its concern) and one
row here; ``tests/generation/drafter/test_variants.py`` holds the documentation to this table.

``checks`` is what a variant's assertion checks, strongest first: an expected value or exception
the issue states, then the crash gone, then only the wrong value gone (a weak oracle, which never
verifies a fix by itself)."""

from __future__ import annotations

from reprobot.generation.drafter.doc_build import command_variants
from reprobot.generation.drafter.fixed_point import fixed_point_variants
from reprobot.generation.drafter.issue_code import code_run_variants
from reprobot.generation.drafter.proposed_setting import proposed_setting_variant
from reprobot.generation.drafter.reading import Builder, Variant
from reprobot.generation.drafter.session_variants import (
    agreement_variants,
    changed_value_variants,
    session_raise_variants,
    shown_variants,
)
from reprobot.generation.drafter.stated import (
    code_expected_variant,
    expected_return_variant,
    stated_value_variant,
)

EXPECTED, RAISES, CRASH, GONE = (
    "an expected value",
    "an expected exception",
    "the crash gone",
    "the wrong value gone",
)

# The classes of claims the variants test, each a class across the dev issues and their
# repositories (``benchmarks/rule_coverage.py``): what the issue expects a statement to give or
# raise; that its example crashes; that the project's command prints what the issue calls wrong;
# that a statement gives the value the issue calls wrong.
EXPECTS, CRASHES, COMMAND_PRINTS, GIVES_WRONG = (
    "expected-behaviour",
    "crash",
    "command-output",
    "wrong-value",
)
CLAIMS = (EXPECTS, CRASHES, COMMAND_PRINTS, GIVES_WRONG)

# On equal relevance, the issue's own code beats a model's rewrite of it: it is what the
# reporter ran.
VARIANTS: tuple[Variant, ...] = (
    Variant(
        "issue-expected-return",
        EXPECTED,
        "a call and the value the issue expects of it",
        expected_return_variant,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-raises-like",
        RAISES,
        "a session raising, and a later statement the reporter points at",
        session_raise_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-raised-before",
        RAISES,
        "a session placed in an earlier release, raising there",
        session_raise_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-code-expected",
        EXPECTED,
        "a code block ending in an expression, and a value stated for it",
        code_expected_variant,
        claim=EXPECTS,
    ),
    Variant("issue-code", CRASH, "a code block", code_run_variants, claim=CRASHES),
    Variant(
        "issue-session-raises",
        CRASH,
        "a session showing a statement raise",
        session_raise_variants,
        claim=CRASHES,
    ),
    Variant(
        "issue-cli",
        "the output called wrong gone, that called right there",
        "files and the project's command run on them, with the output called wrong",
        command_variants,
        claim=COMMAND_PRINTS,
    ),
    Variant(
        "issue-docs",
        "the quoted warning gone",
        "a Sphinx project's files and the warning its build prints",
        command_variants,
        claim=COMMAND_PRINTS,
    ),
    Variant(
        "issue-proposed-value",
        EXPECTED,
        "a module constant's value and the one proposed instead",
        proposed_setting_variant,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-expected",
        EXPECTED,
        "a shown value and the one the issue expects",
        shown_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-negated",
        EXPECTED,
        "a truth value shown and called wrong",
        shown_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-agree",
        EXPECTED,
        "two computations shown disagreeing that should agree",
        agreement_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-fixed-point",
        EXPECTED,
        "an operation's value the issue calls incomplete",
        fixed_point_variants,
        claim=EXPECTS,
    ),
    Variant(
        "issue-session-value", GONE, "a shown value called wrong", shown_variants, claim=GIVES_WRONG
    ),
    Variant(
        "issue-stated-value",
        GONE,
        "a call and the wrong value the issue says it gives",
        stated_value_variant,
        claim=GIVES_WRONG,
    ),
    Variant("issue-code-last", CRASH, "a later code block", code_run_variants, claim=CRASHES),
    Variant(
        "issue-shown-value",
        GONE,
        "any value shown (the fix picks which)",
        changed_value_variants,
        pull_request_only=True,
        claim=GIVES_WRONG,
    ),
)

# The LLM methods, after every variant of the issue's own code.
LLM_METHODS = ("llm-agent", "llm-zero-shot")

METHOD_ORDER: tuple[str, ...] = (*(v.name for v in VARIANTS), *LLM_METHODS)


def builders() -> list[Builder]:
    """Each builder once, in the order of its first variant."""
    return list(dict.fromkeys(v.build for v in VARIANTS))


def method_rank(method: str) -> int:
    """A method's place in ``METHOD_ORDER`` (an unknown one ranks last)."""
    return METHOD_ORDER.index(method) if method in METHOD_ORDER else len(METHOD_ORDER)


def variants_markdown() -> str:
    """The table as docs/ARCHITECTURE.md shows it (a test holds the document to it)."""
    lines = [
        "| rank | variant | claim | its test checks | what of the issue it needs |",
        "|---|---|---|---|---|",
    ]
    for number, variant in enumerate(VARIANTS, 1):
        needs = variant.needs + (" (pull request time only)" if variant.pull_request_only else "")
        lines.append(
            f"| {number} | `{variant.name}` | {variant.claim} | {variant.checks} | {needs} |"
        )
    return "\n".join(lines) + "\n"
