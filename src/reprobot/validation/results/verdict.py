"""Grading two test runs into a verdict: per-test transitions, success, change coverage.

Pure functions only; ``verify.py`` runs the tests. Definitions follow SWT-Bench: a test
reproduces the issue when it fails before the fix and passes after (F->P); success is S as
``success`` defines it for the benchmark too.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from coverage.exceptions import NotPython
from coverage.parser import PythonParser

from reprobot.validation.results.success import categorise, succeeds
from reprobot.validation.results.testrun import FileCoverage, Outcome
from reprobot.validation.source.patch import Patch

_SIDE = {
    Outcome.PASSED: "P",
    Outcome.FAILED: "F",
    Outcome.ERROR: "E",
    Outcome.MISSING: "E",
    Outcome.SKIPPED: "S",
    Outcome.XFAILED: "XF",
    Outcome.XPASSED: "XP",
}
# Outcomes after a fix that are not a pass of a test meant to pass: a failure, an error, a test
# that is gone, and one marked as expected to fail (whether it then failed or passed).
_NOT_PASSING = (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING, Outcome.XFAILED, Outcome.XPASSED)


@dataclass(frozen=True)
class Transition:
    """One test's outcome before and after the fix."""

    test_id: str
    before: Outcome
    after: Outcome

    @property
    def kind(self) -> str:
        """``"F->P"``, ``"P->F"``...: ``E`` is an error or a missing test, ``S`` a skipped one,
        ``XF`` and ``XP`` one marked as an expected failure that failed or passed."""
        return f"{_SIDE[self.before]}->{_SIDE[self.after]}"

    @property
    def fail_to_pass(self) -> bool:
        # A test that errors or does not exist before the fix fails there, as in SWT-Bench.
        failed_before = self.before in (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING)
        return failed_before and self.after.is_pass

    @property
    def fails_after(self) -> bool:
        return self.after in _NOT_PASSING


def transitions(
    before: Mapping[str, Outcome], after: Mapping[str, Outcome], tests: Iterable[str] | None = None
) -> dict[str, Transition]:
    """Transitions of ``tests`` (default: every test either run reported)."""
    ids = sorted(set(tests) if tests is not None else set(before) | set(after))
    return {
        t: Transition(t, before.get(t, Outcome.MISSING), after.get(t, Outcome.MISSING)) for t in ids
    }


def is_success(graded: Mapping[str, Transition]) -> bool:
    """S with nothing to compare against: at least one F->P test, and every other test passes
    after the fix, read as Reprobot reads outcomes (``validation.results.success``)."""
    pre = {t: tr.before for t, tr in graded.items()}
    post = {t: tr.after for t, tr in graded.items()}
    return succeeds(categorise(pre, post))


def broken_tests(
    before: Mapping[str, Outcome], after: Mapping[str, Outcome]
) -> dict[str, Transition]:
    """Tests that pass before the fix and fail or error with it, or are marked as expected to
    fail with it (P->F, P->E, P->XF, P->XP).

    For a project's existing tests run as a guard: a test failing on both sides says nothing of
    the fix, and one missing after it was removed or renamed by the fix, not broken; unless its
    whole module errors with the fix and none of its tests ran: the module no longer collects
    (a change that leaves a test file or an import it needs broken), which breaks them all."""
    ran_in = {t.split("::", 1)[0] for t in after if "::" in t}
    uncollected = {
        t for t, outcome in after.items() if "::" not in t and outcome is Outcome.ERROR
    } - ran_in
    broken: dict[str, Transition] = {}
    for t in sorted(before):
        if "::" not in t or before[t] is not Outcome.PASSED:
            continue
        if after.get(t) in (Outcome.FAILED, Outcome.ERROR, Outcome.XFAILED, Outcome.XPASSED):
            broken[t] = Transition(t, Outcome.PASSED, after[t])
        elif t not in after and t.split("::", 1)[0] in uncollected:
            broken[t] = Transition(t, Outcome.PASSED, Outcome.ERROR)
    return broken


def removed_tests(before: Mapping[str, Outcome], after: Mapping[str, Outcome]) -> list[str]:
    """Tests that pass before the fix and are gone with it, sorted: deleted or renamed along
    with their module, or alone from a module that still runs. (A module that no longer
    collects breaks its tests instead: ``broken_tests``.)"""
    uncollected = {t for t, o in after.items() if "::" not in t and o is Outcome.ERROR}
    ran_in = {t.split("::", 1)[0] for t in after if "::" in t}
    return sorted(
        t
        for t, outcome in before.items()
        if "::" in t
        and outcome is Outcome.PASSED
        and t not in after
        and (t.split("::", 1)[0] in ran_in or t.split("::", 1)[0] not in uncollected)
    )


@dataclass(frozen=True)
class ChangedLines:
    """Lines a patch removes (numbered in the old file) and adds (numbered in the new file)."""

    path: str
    removed: frozenset[int]
    added: frozenset[int]
    old_path: str | None = None


def changed_lines(patch: Patch) -> dict[str, ChangedLines]:
    """Changed lines per Python file of ``patch``, keyed by the file's path after the patch."""
    parsed = patch.parsed()
    if parsed is None:
        return {}
    out: dict[str, ChangedLines] = {}
    for pf in parsed:
        target = _strip(pf.target_file)
        source = _strip(pf.source_file)
        path = source if pf.is_removed_file else target
        if not path.endswith(".py"):
            continue
        removed = {ln.source_line_no for h in pf for ln in h if ln.is_removed and ln.source_line_no}
        added = {ln.target_line_no for h in pf for ln in h if ln.is_added and ln.target_line_no}
        out[path] = ChangedLines(
            path=path,
            removed=frozenset(removed),
            added=frozenset(added),
            old_path=None if pf.is_added_file else source,
        )
    return out


def as_applied(change: ChangedLines, old: bytes | None, new: bytes | None) -> ChangedLines:
    """``change`` located in the files as they are before and after the patch was applied.

    A hunk's header numbers say where its author saw the lines; a patch applied at an offset or
    with fuzz changed other line numbers, and only the two texts say which. Without both texts
    (a file added or removed, a source not read) the header numbers stand."""
    if old is None or new is None:
        return change
    old_lines = old.decode("utf-8", "replace").splitlines()
    new_lines = new.decode("utf-8", "replace").splitlines()
    removed: set[int] = set()
    added: set[int] = set()
    matcher = difflib.SequenceMatcher(None, old_lines, new_lines, autojunk=False)
    for tag, i1, i2, j1, j2 in matcher.get_opcodes():
        if tag in ("replace", "delete"):
            removed.update(range(i1 + 1, i2 + 1))
        if tag in ("replace", "insert"):
            added.update(range(j1 + 1, j2 + 1))
    return ChangedLines(
        path=change.path,
        removed=frozenset(removed),
        added=frozenset(added),
        old_path=change.old_path,
    )


def _strip(path: str) -> str:
    return path[2:] if path.startswith(("a/", "b/")) else path


def executable_lines(source: bytes | None) -> dict[int, int] | None:
    """Map each line of ``source`` that belongs to a statement to the statement's first line.

    coverage.py's own parser decides what is executable; a changed continuation line of a
    multi-line statement counts as executed when its statement runs. None when the source
    cannot be parsed (or is absent).
    """
    if source is None:
        return None
    try:
        parser = PythonParser(text=source.decode("utf-8", "replace"))
        parser.parse_source()
    except (NotPython, SyntaxError, ValueError):
        return None
    statements = parser.statements
    total = source.count(b"\n") + 1
    mapping: dict[int, int] = {}
    for line in range(1, total + 1):
        first = parser.first_line(line)
        if first in statements:
            mapping[line] = first
    return mapping


@dataclass(frozen=True)
class FileChangeCoverage:
    path: str
    executable_removed: frozenset[int]
    covered_removed: frozenset[int]
    executable_added: frozenset[int]
    covered_added: frozenset[int]

    @property
    def executable(self) -> int:
        return len(self.executable_removed) + len(self.executable_added)

    @property
    def covered(self) -> int:
        return len(self.covered_removed) + len(self.covered_added)

    @property
    def uncovered(self) -> list[str]:
        """Uncovered changed lines, ``-N`` for removed (old numbering) and ``+N`` for added."""
        removed = sorted(self.executable_removed - self.covered_removed)
        added = sorted(self.executable_added - self.covered_added)
        return [f"-{n}" for n in removed] + [f"+{n}" for n in added]


@dataclass(frozen=True)
class ChangeCoverage:
    files: tuple[FileChangeCoverage, ...]

    @property
    def executable(self) -> int:
        return sum(f.executable for f in self.files)

    @property
    def covered(self) -> int:
        return sum(f.covered for f in self.files)

    @property
    def ratio(self) -> float | None:
        """The share of executable changed lines the tests execute; None when none is executable."""
        return self.covered / self.executable if self.executable else None

    def to_json(self) -> dict[str, Any]:
        return {
            "ratio": self.ratio,
            "executable": self.executable,
            "covered": self.covered,
            "files": {
                f.path: {"executable": f.executable, "covered": f.covered, "uncovered": f.uncovered}
                for f in self.files
            },
        }


def _executed(
    coverage: Mapping[str, FileCoverage] | None, path: str | None, mapping: dict[int, int]
) -> set[int]:
    if coverage is None or path is None or path not in coverage:
        return set()
    ran = coverage[path].executed
    return {line for line, first in mapping.items() if first in ran}


def change_coverage(
    changes: Mapping[str, ChangedLines],
    old_sources: Mapping[str, bytes | None],
    new_sources: Mapping[str, bytes | None],
    coverage_before: Mapping[str, FileCoverage] | None,
    coverage_after: Mapping[str, FileCoverage] | None,
    executable_before: Mapping[str, frozenset[int]] | None = None,
    executable_after: Mapping[str, frozenset[int]] | None = None,
) -> ChangeCoverage:
    """Change coverage of a fix by the tests: removed lines are judged on the run before the fix,
    added lines on the run after it.

    Executable lines are coverage.py's statements of the file on that side; the benchmark may
    pass ``executable_before``/``executable_after`` instead (lines some reference run executed,
    as SWT-Bench defines them).
    """
    files = []
    for path, headed in sorted(changes.items()):
        old_path = headed.old_path
        change = as_applied(
            headed, old_sources.get(old_path) if old_path else None, new_sources.get(path)
        )
        old_map = executable_lines(old_sources.get(old_path or "")) if old_path else {}
        new_map = executable_lines(new_sources.get(path)) if change.added else {}
        old_map = old_map or {}
        new_map = new_map or {}
        exec_removed = {n for n in change.removed if n in old_map}
        exec_added = {n for n in change.added if n in new_map}
        if executable_before is not None:
            exec_removed &= set(executable_before.get(old_path or "", frozenset()))
        if executable_after is not None:
            exec_added &= set(executable_after.get(path, frozenset()))
        covered_removed = exec_removed & _executed(coverage_before, old_path, old_map)
        covered_added = exec_added & _executed(coverage_after, path, new_map)
        files.append(
            FileChangeCoverage(
                path=path,
                executable_removed=frozenset(exec_removed),
                covered_removed=frozenset(covered_removed),
                executable_added=frozenset(exec_added),
                covered_added=frozenset(covered_added),
            )
        )
    return ChangeCoverage(files=tuple(files))
