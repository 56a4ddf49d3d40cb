"""A module-level setting whose value the issue shows and proposes to change ("Currently it is:
``DEFAULT_LOG_FORMAT = "%(filename)s ..."`` ... Using ``DEFAULT_LOG_FORMAT = "%(levelname)s
..."`` instead"): the test asserts the value the issue proposes. Pure functions.

Such an issue has no reproducer to run: the defect is the value itself. It is read only when
the issue shows both the value the project has today, as its source has it, and exactly one
other value for the same constant: a reporter's own settings ("``LANGUAGE_CODE = "de-at"``"),
which never show the project's default, give nothing.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator, Mapping
from dataclasses import dataclass

from reprobot.generation.drafter.methods import Method
from reprobot.generation.drafter.reading import NOTHING, Produced, Reading
from reprobot.generation.drafter.sources import TestSource
from reprobot.generation.drafter.test_writer import expected_assertion
from reprobot.generation.issue.assignments import shown_assignments
from reprobot.generation.issue.report import IssueReport
from reprobot.validation import UNPARSABLE

# What ``ast.literal_eval`` raises on a node that is no literal (a name, a call).
_NOT_A_LITERAL: tuple[type[Exception], ...] = (*UNPARSABLE, ValueError, TypeError)


@dataclass(frozen=True)
class ProposedSetting:
    """A constant of module ``module``, its value in the tree and the one the issue proposes."""

    module: str
    name: str
    current: object
    proposed: object


def _module_constants(source: str) -> Iterator[tuple[str, object]]:
    """``(name, value)`` of each top-level ``NAME = <literal>`` of a module."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return
    for node in tree.body:
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
        ):
            try:
                yield node.targets[0].id, ast.literal_eval(node.value)
            except _NOT_A_LITERAL:
                continue


def proposed_setting(
    issue: IssueReport, modules: Mapping[str, str], sources: Mapping[str, str]
) -> ProposedSetting | None:
    """The one constant whose value in the tree the issue shows beside exactly one other value,
    or None. ``modules`` maps the import names of the code under test to their paths."""
    shown = shown_assignments(issue)
    if not shown:
        return None
    found: list[ProposedSetting] = []
    for module, path in sorted(modules.items()):
        for name, current in _module_constants(sources.get(path, "")):
            values = shown.get(name, [])
            others = [v for v in values if v != current or type(v) is not type(current)]
            if len(values) > len(others) and len(others) == 1:
                found.append(ProposedSetting(module, name, current, others[0]))
    return found[0] if len(found) == 1 else None


def proposed_setting_sources(setting: ProposedSetting | None) -> list[TestSource]:
    """The test that the constant has the value the issue proposes."""
    if setting is None:
        return []
    body = "\n".join([f"result = {setting.name}", expected_assertion(repr(setting.proposed))])
    note = f"`{setting.name}` must be `{setting.proposed!r}`, as the issue proposes"
    imports = (f"from {setting.module} import {setting.name}",)
    return [TestSource(Method.ISSUE_EXPECTED, imports, body, note)]


def proposed_setting_variant(reading: Reading) -> Produced:
    """A module constant the issue shows and proposes to change must have the proposed value."""
    tree = reading.tree
    setting = proposed_setting(reading.issue, tree.layout.modules, tree.python_files)
    if setting is None:
        return NOTHING
    return Produced(tuple(proposed_setting_sources(setting)), (repr(setting.current),))
