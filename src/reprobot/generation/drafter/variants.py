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
from reprobot.generation.drafter.methods import LLM_METHODS, Method
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

CRASH, GONE = "the crash gone", "the wrong value gone"

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
# reporter ran. Each variant is a class of the dev issues (three issues, two repositories at
# least, ``benchmarks/rule_coverage.py``); the shapes one takes in an issue are its builders.
VARIANTS: tuple[Variant, ...] = (
    Variant(
        Method.ISSUE_EXPECTED,
        "an expected value or exception",
        "a statement and what the issue expects of it: a value stated for a call or for a code "
        "block's final expression, a value a session shows beside the one expected, a truth "
        "value called wrong, two computations that should agree, an operation's value called "
        "incomplete, a module constant's proposed value, a raise the reporter points at or "
        "places in an earlier release",
        (
            expected_return_variant,
            session_raise_variants,
            code_expected_variant,
            proposed_setting_variant,
            shown_variants,
            agreement_variants,
            fixed_point_variants,
        ),
        claim=EXPECTS,
        reads=(
            'two computations the issue says should agree (a title "simplify gives an '
            'inequivalent expression" over `N(e.subs(x, a))` and `N(f.subs(x, a))` printing '
            'different numbers); an operation it calls incomplete (a sentence naming it, "the '
            'expansion ... stops incomplete", "not fully simplified": the value it showed, '
            "given to the same call again, must come back unchanged); a setting it proposes to "
            'change (a module constant whose value in the tree the issue shows, "Currently it '
            'is: `DEFAULT_LOG_FORMAT = ...`", beside exactly one other value, "Using '
            '`DEFAULT_LOG_FORMAT = ...` instead": the constant must have the proposed value; a '
            "reporter's own settings, which never show the project's value, propose nothing)"
        ),
    ),
    Variant(
        Method.ISSUE_CODE,
        f"{CRASH}, or the assertions of the tests the issue writes out",
        "a code block",
        (code_run_variants,),
        claim=CRASHES,
        reads=(
            "tests the issue writes out (top-level `test*` functions, as a reporter proposes a "
            "regression test): they are the module's tests as written, asking for pytest's own "
            "fixtures and those of the project's `conftest.py` files, a call of them left to "
            "pytest; not where the issue shows a runner's session for them (its report is then "
            "the problem) or the project's runner is not pytest"
        ),
    ),
    Variant(
        Method.ISSUE_SESSION_RAISES,
        CRASH,
        "a session showing a statement raise",
        (session_raise_variants,),
        claim=CRASHES,
    ),
    Variant(
        Method.ISSUE_COMMAND,
        "the output or warning called wrong gone, the output called right there",
        "files and the project's command run on them (a Sphinx project's build included), with "
        "the output or warning called wrong",
        (command_variants,),
        claim=COMMAND_PRINTS,
        reads=(
            "command lines: the files the issue shows, a configuration quoted as bare option "
            "lines under its tool's section, the project's command run on them, text it pipes in "
            "with `echo` given on the command's standard input, a prompt with a git branch read "
            "as a prompt, the output lines it reports as wrong or, after the same command, right, "
            "a directory tree being no output, or the traceback it crashes with; a test module "
            "and the crash its runner printed, the project's runner named in that output, run on "
            "it; and documentation builds, for Sphinx and projects that require it: the files a "
            "Sphinx issue shows, named by their first line, `# conf.py`, or the line before, or "
            "one reStructuredText block as `index.rst`, with a `conf.py` loading the extensions "
            "their directives need, built with `python -m sphinx` and the builder the issue "
            "names; the warning it quotes must be gone"
        ),
    ),
    Variant(
        Method.ISSUE_WRONG_VALUE,
        GONE,
        "a value a session shows, or a sentence says a call gives, called wrong; an exception "
        "message the title calls wrong, as the issue shows it",
        (shown_variants, stated_value_variant, code_run_variants, session_raise_variants),
        claim=GIVES_WRONG,
        reads=(
            'an exception\'s message the title calls wrong ("misleading exception when ..."): '
            "its test checks that the message the issue shows is gone, not that the raise is"
        ),
    ),
    Variant(
        Method.ISSUE_CODE_LAST, CRASH, "a later code block", (code_run_variants,), claim=CRASHES
    ),
    Variant(
        Method.ISSUE_SHOWN_VALUE,
        GONE,
        "any value shown (the fix picks which)",
        (changed_value_variants,),
        pull_request_only=True,
        claim=GIVES_WRONG,
    ),
)

METHOD_ORDER: tuple[str, ...] = (*(v.name for v in VARIANTS), *LLM_METHODS)


def builders() -> list[Builder]:
    """Each builder once, in the order of its first variant (and its place in that row)."""
    return list(dict.fromkeys(build for v in VARIANTS for build in v.builds))


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


def variant_readings_markdown() -> str:
    """What the variants read beyond the readers, as the README shows it (a test holds the
    README to it)."""
    return "".join(f"- `{v.name}` reads {v.reads}.\n" for v in VARIANTS if v.reads)
