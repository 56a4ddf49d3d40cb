"""The variants' table is the one list: every method a drafter module can give a draft is a row
of it, selection ranks by it, and docs/ARCHITECTURE.md shows it as the code renders it."""

from __future__ import annotations

import ast
from pathlib import Path

from reprobot.generation.drafter.methods import LLM_METHODS, Method
from reprobot.generation.drafter.reading import NOTHING, Reading
from reprobot.generation.drafter.variants import (
    CLAIMS,
    METHOD_ORDER,
    VARIANTS,
    builders,
    method_rank,
    variant_readings_markdown,
    variants_markdown,
)
from reprobot.generation.issue.report import parse_issue
from tests.generation.drafter.conftest import empty_tree

ROOT = Path(__file__).resolve().parents[3]
DRAFTER = ROOT / "src" / "reprobot" / "generation" / "drafter"


def methods_in_the_code(skip: str = "") -> set[str]:
    """Every ``"issue-..."`` name the drafter modules hold (the methods they give drafts), but
    ``skip``'s."""
    found: set[str] = set()
    for path in DRAFTER.glob("*.py"):
        if path.name == skip:
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            # A method name is a word of its own: ``issue-...``, no spaces.
            value = node.value if isinstance(node, ast.Constant) else None
            if isinstance(value, str) and value.startswith("issue-") and " " not in value:
                found.add(value)
    return found


def test_every_method_a_drafter_module_names_is_a_row() -> None:
    names = {v.name for v in VARIANTS}
    assert len(names) == len(VARIANTS)
    assert methods_in_the_code() <= names, methods_in_the_code() - names


def test_the_method_names_are_the_tables_and_builders_take_them_from_it() -> None:
    # The table's rows are exactly the drafter's members of ``Method``, in its order; the LLM
    # methods follow.
    assert [v.name for v in VARIANTS] == [m for m in Method if m not in LLM_METHODS]
    assert all(isinstance(v.name, Method) for v in VARIANTS)
    # No drafter module but ``methods`` spells a method's name: each takes it from ``Method``.
    assert methods_in_the_code(skip="methods.py") == set()


def test_every_variant_tests_one_class_of_claims_and_every_class_has_one() -> None:
    assert {v.claim for v in VARIANTS} == set(CLAIMS)


def test_selection_ranks_by_the_table_and_the_llm_methods_after_it() -> None:
    assert (*(v.name for v in VARIANTS), *LLM_METHODS) == METHOD_ORDER
    # A Sphinx build is the issue's own example: it ranks before any model's draft.
    assert method_rank("issue-command") < method_rank("llm-agent")
    assert method_rank("something-new") == len(METHOD_ORDER)


def test_each_builder_runs_once_in_the_order_of_its_first_row() -> None:
    order = builders()
    assert len(order) == len(set(order))
    firsts = [next(i for i, v in enumerate(VARIANTS) if b in v.builds) for b in order]
    assert firsts == sorted(firsts)


def test_an_issue_with_nothing_to_read_gets_nothing_from_any_builder() -> None:
    """A builder reads only what it needs: prose with no code, session or command gives none
    of them anything to draft (a fix known or not)."""
    issue = parse_issue("Docs are unclear", "The tutorial could say more about units.")
    for knowing_fix in (False, True):
        reading = Reading(issue, empty_tree(), knowing_fix)
        assert [b(reading) for b in builders()] == [NOTHING] * len(builders())


def test_the_architecture_document_and_the_readme_show_the_table_as_the_code_renders_it() -> None:
    for document in (ROOT / "docs" / "ARCHITECTURE.md", ROOT / "README.md"):
        assert variants_markdown() in document.read_text(encoding="utf-8"), document
    # What the variants read beyond the readers is the README's from the table too.
    assert variant_readings_markdown() in (ROOT / "README.md").read_text(encoding="utf-8")
