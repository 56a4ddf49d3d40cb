"""SWT-Bench grading of one prediction, and the paper's aggregate rows (pure functions).

A prediction is a test patch T for an instance with golden fix X*. The harness runs, each with
coverage, T on R and on R∘X* ("pred"), the golden tests on both ("gold"), and the existing tests of
T's files without T on both ("base"). Definitions, as in SWT-Bench's harness:

- the report of a pre/post pair sorts tests into F→P, P→P, P→F and F→F, and **S** (success) is
  the one definition Reprobot's verdicts use too (``validation.results.success``), read as the
  harness reads outcomes (an XFAIL is a pass there): the prediction's F→P tests strictly include
  the base run's, and it adds no P→F and no F→F test that the base run does not have;
- **W**: the prediction applies to R;
- **F→×**: it adds a test failing on R (an added F→P or F→F); **F→P**: it adds an F→P test;
  **P→P**: it adds tests, and every one it adds passes on both sides;
- **ΔC** (change coverage): among the executable lines of X* (removed lines executed on R by the
  golden or existing tests, added lines executed on R∘X* by them), the share that the prediction's
  own tests execute. Reprobot records which test function ran each line; "its own tests" are the
  test functions the prediction adds or edits (a golden test patch often adds asserts to an
  existing test). The harness counts a line when its hit count grows; a line that an edited test
  ran before its edit as often as after counts here and not there.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprobot.validation import (
    F2F,
    F2P,
    P2F,
    P2P,
    UNPARSABLE,
    FileCoverage,
    Patch,
    change_coverage,
    changed_lines,
    executable_lines,
    succeeds,
)


def added(pred: Mapping[str, set[str]], base: Mapping[str, set[str]]) -> dict[str, set[str]]:
    """Per category, the tests the prediction's report has and the base report does not."""
    return {kind: set(pred[kind]) - set(base.get(kind, set())) for kind in pred}


@dataclass(frozen=True)
class Flags:
    """What one prediction came to, as the paper's columns."""

    applied: bool
    success: bool
    fail_any: bool
    fail_to_pass: bool
    pass_only: bool


# A prediction that does not apply, or was never run: every column false.
NOTHING = Flags(False, False, False, False, False)


def flags(applied: bool, pred: Mapping[str, set[str]], base: Mapping[str, set[str]]) -> Flags:
    if not applied:
        return NOTHING
    extra = added(pred, base)
    return Flags(
        applied=True,
        success=succeeds(pred, base),
        fail_any=bool(extra[F2P] or extra[F2F]),
        fail_to_pass=bool(extra[F2P]),
        pass_only=bool(extra[P2P]) and not (extra[F2P] or extra[F2F] or extra[P2F]),
    )


# --- change coverage ----------------------------------------------------------------------------


def _executed_lines(
    source: bytes | None, runs: Iterable[Mapping[str, FileCoverage] | None], path: str
) -> frozenset[int]:
    """Lines of ``source`` whose statement ran in any of ``runs`` (continuation lines count)."""
    mapping = executable_lines(source) or {}
    ran: set[int] = set()
    for run in runs:
        if run is not None and path in run:
            ran |= run[path].executed
    return frozenset(line for line, first in mapping.items() if first in ran)


def context_labels(run: Mapping[str, FileCoverage] | None) -> frozenset[str]:
    """Every test function that ran some line in ``run``."""
    if run is None:
        return frozenset()
    return frozenset(label for fc in run.values() for ctx in fc.contexts.values() for label in ctx)


def changed_tests(old: str | None, new: str | None) -> frozenset[str]:
    """Qualified names (``test_f``, ``TestC.test_m``) of the functions of a test module that
    ``new`` adds or whose source differs from ``old`` (every function when ``old`` is None).

    An edit outside every function (module-level data, a parametrize list, a fixture's
    constant) may change what any test of the module does, so it attributes them all."""
    before, after = _functions(old), _functions(new)
    if old is not None and _module_level(old) != _module_level(new):
        return frozenset(after)
    return frozenset(name for name, text in after.items() if before.get(name) != text)


def _module_level(source: str | None) -> list[str] | None:
    """The module's statements outside functions and classes, and class bodies' own (non-method)
    statements, as AST dumps; None when the source does not parse."""
    if not source:
        return []
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return None
    out: list[str] = []

    def visit(body: list[ast.stmt]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                continue
            if isinstance(node, ast.ClassDef):
                out.append(f"class {node.name}")
                visit(node.body)
            else:
                out.append(ast.dump(node))

    visit(tree.body)
    return out


def _functions(source: str | None) -> dict[str, str]:
    if not source:
        return {}
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return {}
    found: dict[str, str] = {}

    def visit(body: list[ast.stmt], prefix: str) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found[prefix + node.name] = ast.dump(node)
            elif isinstance(node, ast.ClassDef):
                visit(node.body, f"{prefix}{node.name}.")

    visit(tree.body, "")
    return found


def own_labels(
    pred: frozenset[str], base: frozenset[str], changed: Mapping[str, frozenset[str]]
) -> frozenset[str]:
    """The context labels of the prediction's own tests: those the base run lacks, and those of
    functions it changed. ``changed`` maps a test module's path to its changed qualified names;
    a label (``module.Class.func``, module as imported) matches when it ends with the qualified
    name preceded by the module's file stem."""
    suffixes = {f"{Path(path).stem}.{name}" for path, names in changed.items() for name in names}
    return frozenset(
        label
        for label in pred
        if label not in base or any(label == s or label.endswith("." + s) for s in suffixes)
    )


def restrict_to(
    run: Mapping[str, FileCoverage] | None, labels: frozenset[str]
) -> dict[str, FileCoverage]:
    """``run`` as if only the test functions ``labels`` had run.

    Lines that ran outside every test function (import time: imports, ``def`` and ``class``
    lines, module-level code) count for a file when those tests ran some line of it: importing
    the module was part of running them, as it is in the harness's trace of its tests."""
    out: dict[str, FileCoverage] = {}
    for path, fc in (run or {}).items():
        lines = {line for line, ctx in fc.contexts.items() if ctx & labels}
        if lines:
            lines |= fc.executed - set(fc.contexts)
        out[path] = FileCoverage(statements=fc.statements, executed=frozenset(lines))
    return out


@dataclass(frozen=True)
class CoverageDelta:
    executable: int
    covered: int
    uncovered: tuple[str, ...] = ()

    @property
    def ratio(self) -> float | None:
        return self.covered / self.executable if self.executable else None


def coverage_delta(
    fix: Patch,
    old_sources: Mapping[str, bytes | None],
    new_sources: Mapping[str, bytes | None],
    pred: tuple[Mapping[str, FileCoverage] | None, Mapping[str, FileCoverage] | None],
    gold: tuple[Mapping[str, FileCoverage] | None, Mapping[str, FileCoverage] | None],
    base: tuple[Mapping[str, FileCoverage] | None, Mapping[str, FileCoverage] | None],
    changed: Mapping[str, frozenset[str]] | None = None,
) -> CoverageDelta:
    """ΔC of the prediction (pre, post coverage pairs of the pred, gold and base runs;
    ``changed``: the test functions it edits per module, see ``own_labels``)."""
    changes = changed_lines(fix)
    exec_before = {
        c.old_path: _executed_lines(old_sources.get(c.old_path), (gold[0], base[0]), c.old_path)
        for c in changes.values()
        if c.old_path
    }
    exec_after = {
        path: _executed_lines(new_sources.get(path), (gold[1], base[1]), path) for path in changes
    }
    own = [
        restrict_to(
            pred[i], own_labels(context_labels(pred[i]), context_labels(base[i]), changed or {})
        )
        for i in (0, 1)
    ]
    result = change_coverage(
        changes, old_sources, new_sources, own[0], own[1], exec_before, exec_after
    )
    uncovered = tuple(f"{f.path}:{line}" for f in result.files for line in f.uncovered)
    return CoverageDelta(result.executable, result.covered, uncovered)


# --- aggregates ---------------------------------------------------------------------------------


@dataclass(frozen=True)
class InstanceScore:
    """The graded prediction of one instance (what the per-instance CSV holds)."""

    instance_id: str
    flags: Flags
    delta: CoverageDelta
    excluded: bool = False
    error: str | None = None
    counts: dict[str, int] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        # The JSON and CSV boundary: the per-instance row, by the paper's column names.
        return {
            "instance_id": self.instance_id,
            "excluded": self.excluded,
            "W": self.flags.applied,
            "S": self.flags.success,
            "F->x": self.flags.fail_any,
            "F->P": self.flags.fail_to_pass,
            "P->P": self.flags.pass_only,
            "dC": self.delta.ratio,
            "executable_lines": self.delta.executable,
            "covered_lines": self.delta.covered,
            **{f"n_{k}": v for k, v in sorted(self.counts.items())},
            "error": self.error or "",
        }


def _share(values: Sequence[bool]) -> float | None:
    return 100.0 * sum(values) / len(values) if values else None


def _mean_delta(scores: Sequence[InstanceScore]) -> float | None:
    # An instance whose golden fix has no executable changed line has no ΔC; a prediction that
    # does not apply executes nothing, so it counts as 0.
    ratios = [s.delta.ratio for s in scores if s.delta.executable]
    return 100.0 * sum(r or 0.0 for r in ratios) / len(ratios) if ratios else None


@dataclass(frozen=True)
class TableRow:
    """The paper's Table 2 and 3 figures over some instances, in percent (None: no instance to
    take a share or a mean over)."""

    instances: int
    applied: float | None
    success: float | None
    fail_any: float | None
    fail_to_pass: float | None
    pass_only: float | None
    delta_all: float | None
    delta_succeeded: float | None
    delta_not_succeeded: float | None

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a row of report.json, by the paper's column names.
        return {
            "instances": self.instances,
            "W": self.applied,
            "S": self.success,
            "F->x": self.fail_any,
            "F->P": self.fail_to_pass,
            "P->P": self.pass_only,
            "dC_all": self.delta_all,
            "dC_succeeded": self.delta_succeeded,
            "dC_not_succeeded": self.delta_not_succeeded,
        }


def table_row(scores: Sequence[InstanceScore]) -> TableRow:
    """The paper's Table 2 and 3 figures (percentages) over ``scores``."""
    succeeded = [s for s in scores if s.flags.success]
    failed = [s for s in scores if not s.flags.success]
    return TableRow(
        instances=len(scores),
        applied=_share([s.flags.applied for s in scores]),
        success=_share([s.flags.success for s in scores]),
        fail_any=_share([s.flags.fail_any for s in scores]),
        fail_to_pass=_share([s.flags.fail_to_pass for s in scores]),
        pass_only=_share([s.flags.pass_only for s in scores]),
        delta_all=_mean_delta(scores),
        delta_succeeded=_mean_delta(succeeded),
        delta_not_succeeded=_mean_delta(failed),
    )
