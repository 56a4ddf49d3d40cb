"""What every variant of the no-LLM drafter is given, and what one gives back.

The issue and the tree are read once into a ``Reading``: the issue's report, what the drafter
read from the tree (``TreeContext``), the issue's programs (its code blocks and sessions, as
statements with what they showed), and whether a fix is known (pull request time). A variant's
builder turns a reading into ``Produced``: test sources, and the values the issue shows as
wrong that a failing assertion of theirs may report. The table of variants is ``variants``."""

from __future__ import annotations

import ast
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from functools import cached_property

from reprobot.generation.drafter.snippets import Program, code_programs, session_programs
from reprobot.generation.drafter.sources import TestSource
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.repo.test_layout import TestLayout


@dataclass(frozen=True)
class TreeContext:
    """What the drafter reads from the tree once: layout, the project's Python files by path,
    manifests, related tests."""

    layout: TestLayout
    python_files: Mapping[str, str]
    manifests: Mapping[str, str]
    related_tests: tuple[str, ...]
    # ``alias -> module`` the project imports modules under (``so``: ``seaborn.objects``).
    aliases: Mapping[str, str] = field(default_factory=dict)
    # What each package exports, star imports followed (``all_exports``).
    exports: Mapping[str, Mapping[str, ast.stmt]] | None = None
    # Name to the import the project's tests use for it most often (``imports_in_tests``).
    test_imports: Mapping[str, str] = field(default_factory=dict)
    # Name to the binding the tests make it by from its own name (``factories_in_tests``).
    test_factories: Mapping[str, str] = field(default_factory=dict)
    # Top-level function and class names to the files of the code that define them
    # (``definitions``): where a drafted test belongs.
    definitions: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


@dataclass(frozen=True)
class Reading:
    """The issue and the tree, read once for every variant."""

    issue: IssueReport
    tree: TreeContext
    knowing_fix: bool = False

    @cached_property
    def code(self) -> list[Program]:
        """The issue's code blocks before its traceback, as programs."""
        return code_programs(self.issue)

    @cached_property
    def sessions(self) -> list[Program]:
        """The issue's interactive sessions, as programs."""
        return session_programs(self.issue)

    @property
    def programs(self) -> list[Program]:
        """What shows values: the first code block, then every session."""
        return [*self.code[:1], *self.sessions]


@dataclass(frozen=True)
class Produced:
    """A builder's test sources, and the wrong values the issue shows that they keep out."""

    sources: tuple[TestSource, ...] = ()
    wrong: tuple[str, ...] = ()


NOTHING = Produced()

Builder = Callable[[Reading], Produced]


@dataclass(frozen=True)
class Variant:
    """One kind of drafted test: the method name its drafts carry, what its assertion checks
    (``checks``: an expected value or exception, the crash gone, or the wrong value gone), what of
    the issue it needs, in words, and the builders that make it, one per shape the claim takes
    in an issue. A builder may serve two variants (a session's value is expected, or only gone,
    whichever the issue says); it runs once per issue however many variants name it."""

    name: str
    checks: str
    needs: str
    builds: tuple[Builder, ...]
    pull_request_only: bool = False
    # The class of claims it tests (``CLAIMS`` in ``variants``).
    claim: str = ""
    # What it reads of an issue beyond what the readers find, in the README's words (rendered
    # there by ``variants.variant_readings_markdown``).
    reads: str = ""
