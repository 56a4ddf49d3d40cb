"""Instance test ids resolved to the node ids a sandbox run reports, in the tree after the test
patch (``patched_sources``, ``patched_file_list``: the two functions here that read a repository).

SWE-bench records test ids in its runners' own forms: pytest node ids (sometimes cut at a space
by its log parser), bare function names (sympy's ``bin/test``) and unittest's descriptions
(``test_x (module.Class)``, Django's runner). ``map_test_ids`` resolves each to node ids of the
tree, or says why it cannot; ``IdMapping.outcome`` reads an instance id's outcome from a run.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Collection, Iterable, Mapping
from dataclasses import dataclass, field

from reprobot.validation import UNPARSABLE, Outcome, Patch, RepoSnapshot
from reprobot.validation import patched_sources as validation_patched_sources

_BARE_NAME = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<param>\[.*\])?$")
_NODE_ID = re.compile(r"^(?P<path>[^\s:\[\]]+\.py)::(?P<rest>\S.*)$")
# unittest's (and Django's runner's) description of a test: "test_x (module.Class)", in newer
# releases "test_x (module.Class.test_x)", sometimes followed by the docstring's first line.
_UNITTEST_ID = re.compile(r"^(?P<name>[A-Za-z_]\w*) \((?P<dotted>[A-Za-z_][\w.]*)\)")


def defined_tests(source: str) -> list[str]:
    """Node-id suffixes of the test functions a module defines: ``test_x`` or ``TestC::test_x``.

    Functions and methods of any name are listed (pytest's naming rules are configurable); a
    module that does not parse yields its top-level ``def`` names read line by line."""
    try:
        tree = ast.parse(source)
    except UNPARSABLE:
        return re.findall(r"^(?:async\s+)?def\s+([A-Za-z_]\w*)", source, re.M)
    found: list[str] = []

    def visit(body: Iterable[ast.stmt], prefix: tuple[str, ...]) -> None:
        for node in body:
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
                found.append("::".join([*prefix, node.name]))
            elif isinstance(node, ast.ClassDef):
                visit(node.body, (*prefix, node.name))

    visit(tree.body, ())
    return found


@dataclass(frozen=True)
class IdMapping:
    """Instance test ids resolved to pytest node ids; the ids that cannot be, with the reason.

    ``node_ids`` holds what to select for each id. An id cut short at a space (SWE-bench's log
    parser splits lines on whitespace, so ``test_f[a b]`` is recorded as ``test_f[a``) selects
    its whole function, and ``truncated`` holds the prefix that the node ids it stands for
    start with."""

    node_ids: dict[str, tuple[str, ...]] = field(default_factory=dict)
    unmappable: dict[str, str] = field(default_factory=dict)
    truncated: dict[str, str] = field(default_factory=dict)

    @property
    def selection(self) -> list[str]:
        """Every node id to select once, in first-seen order."""
        return list(dict.fromkeys(n for ids in self.node_ids.values() for n in ids))

    def outcome(self, test_id: str, outcomes: Mapping[str, Outcome]) -> Outcome:
        """The outcome of instance id ``test_id`` in a run's ``outcomes`` (worst of its nodes)."""
        if test_id in self.truncated:
            prefix = self.truncated[test_id]
            return combined_outcome(o for n, o in outcomes.items() if n.startswith(prefix))
        return combined_outcome(
            outcomes.get(n, Outcome.MISSING) for n in self.node_ids.get(test_id, ())
        )


def _cut_at_space(rest: str) -> bool:
    """Whether the part after ``path.py::`` has an opening ``[`` that never closes."""
    return rest.count("[") > rest.count("]")


def map_test_ids(
    ids: Iterable[str], sources: Mapping[str, str], repo_files: Collection[str] = ()
) -> IdMapping:
    """Resolve instance test ids to pytest node ids.

    ``sources`` holds the text of the test files the test patch touches (after the patch);
    ``repo_files`` every file of the patched tree. An id of the form ``path.py::rest`` is a node
    id when its file exists; when its parameter part never closes it was cut at a space, and it
    selects its function and is judged by prefix. A bare name (``test_x``, or ``test_x[param]``)
    is matched by function name within ``sources``; every match is kept. Anything else (a
    fragment of console output, an unknown file, a name no touched file defines) is unmappable.
    """
    known = set(repo_files) | set(sources)
    index: dict[str, list[str]] = {}
    for path in sorted(sources):
        for suffix in defined_tests(sources[path]):
            index.setdefault(suffix.rsplit("::", 1)[-1], []).append(f"{path}::{suffix}")
    node_ids: dict[str, tuple[str, ...]] = {}
    unmappable: dict[str, str] = {}
    truncated: dict[str, str] = {}
    for test_id in ids:
        if test_id in node_ids or test_id in unmappable:
            continue
        node = _NODE_ID.match(test_id)
        bare = _BARE_NAME.match(test_id)
        if node:
            if node.group("path") not in known:
                unmappable[test_id] = f"{node.group('path')} is not a file of the tree"
            elif _cut_at_space(node.group("rest")):
                node_ids[test_id] = (test_id.split("[", 1)[0],)
                truncated[test_id] = test_id + " "
            else:
                node_ids[test_id] = (test_id,)
        elif (described := _UNITTEST_ID.match(test_id)) is not None:
            found = unittest_node_id(described.group("name"), described.group("dotted"), known)
            if found:
                node_ids[test_id] = (found,)
            else:
                unmappable[test_id] = "no file of the tree is the module of that class"
        elif bare:
            matches = index.get(bare.group("name"), [])
            if matches:
                node_ids[test_id] = tuple(m + (bare.group("param") or "") for m in matches)
            else:
                unmappable[test_id] = "no function of that name in the test patch's files"
        else:
            unmappable[test_id] = "not a test id (neither path.py::name nor a function name)"
    return IdMapping(node_ids=node_ids, unmappable=unmappable, truncated=truncated)


def unittest_node_id(name: str, dotted: str, files: Collection[str]) -> str | None:
    """The node id of unittest's ``name (module.Class)``: the file that is the module (the
    longest module prefix that some file's path ends with, its shortest such path), then the
    classes and the name. Django's dotted modules are relative to its test folder
    (``admin_views.tests`` is ``tests/admin_views/tests.py``)."""
    parts = dotted.split(".")
    if parts[-1] == name:
        parts = parts[:-1]
    for cut in range(len(parts) - 1, 0, -1):
        tails = ("/".join(parts[:cut]) + ".py", "/".join(parts[:cut]) + "/__init__.py")
        matches = sorted(
            (f for f in files if f in tails or f.endswith(tuple("/" + t for t in tails))),
            key=len,
        )
        if matches:
            return "::".join([matches[0], *parts[cut:], name])
    return None


# Worst first: how a group of node ids standing for one instance id is summarised.
_SEVERITY = (
    Outcome.FAILED,
    Outcome.ERROR,
    Outcome.MISSING,
    Outcome.SKIPPED,
    Outcome.XFAILED,
    Outcome.XPASSED,
    Outcome.PASSED,
)


def combined_outcome(outcomes: Iterable[Outcome]) -> Outcome:
    """The worst of several outcomes (missing when there are none)."""
    seen = set(outcomes)
    return next((o for o in _SEVERITY if o in seen), Outcome.MISSING)


def fails(outcome: Outcome) -> bool:
    """A fail in the harness's sense: failed, error, or not reported at all."""
    return outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING)


# --- the patched tree ----------------------------------------------------------------------------


def patched_sources(snapshot: RepoSnapshot, patch: Patch, paths: Iterable[str]) -> dict[str, str]:
    """The text of ``paths`` after ``patch`` (files it deletes are left out)."""
    blobs = validation_patched_sources(snapshot, [patch], list(paths))
    return {p: b.decode("utf-8", "replace") for p, b in blobs.items() if b is not None}


def patched_file_list(snapshot: RepoSnapshot, patch: Patch) -> set[str]:
    """Every file of ``snapshot``'s tree after ``patch`` (its files, plus added, minus deleted)."""
    files = set(snapshot.list_files())
    parsed = patch.parsed()
    if parsed is not None:
        for pf in parsed:
            source = pf.source_file[2:] if pf.source_file.startswith("a/") else pf.source_file
            target = pf.target_file[2:] if pf.target_file.startswith("b/") else pf.target_file
            if pf.is_removed_file:
                files.discard(source)
            else:
                if pf.is_rename:
                    files.discard(source)
                files.add(target)
    return files
