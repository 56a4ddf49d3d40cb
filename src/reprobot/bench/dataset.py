"""Benchmark records (SWE-bench instances, harness environment facts) as Reprobot's own types.

Pure conversions first: instance records, environment records → ``EnvSpec``, instance test ids →
pytest node ids. The two functions that read a repository (``patched_sources``,
``patched_file_list``) sit at the end.

Environment records (``env_specs.json``) map ``repo → version → record`` with the keys
``python``, ``pip_packages``, ``requirements``, ``install``, ``test_cmd`` (the harness's), plus
these optional ones that this module adds to the schema:

- ``constraints``: requirement specifiers installed with the pinned packages that also bound
  every later install of the build, the project's own included (pip's constraints), e.g.
  ``"pytest<8"`` where a project's test set-up predates a newer pytest;
- ``env``: extra environment variables for the build and every run.

Free-text keys (``observed``, ``test_ids``, ...) are notes and are ignored. An overlay with the
same shape (``load_env_specs(path, overlay)``) adds such keys without editing the transcribed file.
"""

from __future__ import annotations

import ast
import json
import re
import shlex
from collections.abc import Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from reprobot.bench.harness_table import harness_table, is_harness_document
from reprobot.validation.env.envspec import SUPPORTED_PYTHONS, EnvSpec
from reprobot.validation.env.test_commands import runner_family
from reprobot.validation.errors import ReprobotError
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.patch import patched_sources as validation_patched_sources
from reprobot.validation.source.snapshot import RepoSnapshot

SpecTable = dict[str, dict[str, dict[str, Any]]]

# What a converted non-pytest test command runs instead: pytest with a summary of every outcome.
PYTEST_FALLBACK = "pytest -rA"
_PYTEST_WORDS = ("pytest", "py.test")
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_BARE_NAME = re.compile(r"^(?P<name>[A-Za-z_][A-Za-z0-9_]*)(?P<param>\[.*\])?$")
_NODE_ID = re.compile(r"^(?P<path>[^\s:\[\]]+\.py)::(?P<rest>\S.*)$")
# unittest's (and Django's runner's) description of a test: "test_x (module.Class)", in newer
# releases "test_x (module.Class.test_x)", sometimes followed by the docstring's first line.
_UNITTEST_ID = re.compile(r"^(?P<name>[A-Za-z_]\w*) \((?P<dotted>[A-Za-z_][\w.]*)\)")


class DatasetError(ReprobotError):
    """A benchmark record is malformed, or names an environment the table does not have."""


# --- instances ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Instance:
    """One SWE-bench instance: a repository at a base commit, the golden fix and its tests."""

    instance_id: str
    repo: str
    base_commit: str
    environment_setup_commit: str
    version: str
    patch: str
    test_patch: str
    fail_to_pass: tuple[str, ...]
    pass_to_pass: tuple[str, ...]
    problem_statement: str = ""
    hints_text: str = ""
    created_at: str = ""

    @property
    def golden_patch(self) -> Patch:
        return Patch(self.patch, name="golden.diff")

    @property
    def golden_test_patch(self) -> Patch:
        return Patch(self.test_patch, name="test.diff")

    @property
    def test_files(self) -> tuple[str, ...]:
        """The Python files the golden test patch touches."""
        return tuple(f for f in self.golden_test_patch.files if f.endswith(".py"))


def parse_id_list(value: Any) -> tuple[str, ...]:
    """A FAIL_TO_PASS / PASS_TO_PASS field: a JSON-encoded list of strings (or the list itself)."""
    if isinstance(value, str):
        try:
            value = json.loads(value) if value.strip() else []
        except ValueError as exc:
            raise DatasetError(f"test id list is not JSON: {value[:80]!r}") from exc
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise DatasetError(f"test id list must be a list of strings, got {type(value).__name__}")
    return tuple(value)


def parse_instance(record: Mapping[str, Any]) -> Instance:
    """An ``Instance`` from one instances.jsonl record."""
    try:
        return Instance(
            instance_id=str(record["instance_id"]),
            repo=str(record["repo"]),
            base_commit=str(record["base_commit"]),
            environment_setup_commit=str(
                record.get("environment_setup_commit") or record["base_commit"]
            ),
            version=str(record["version"]),
            patch=str(record["patch"]),
            test_patch=str(record["test_patch"]),
            fail_to_pass=parse_id_list(record["FAIL_TO_PASS"]),
            pass_to_pass=parse_id_list(record.get("PASS_TO_PASS", "[]")),
            problem_statement=str(record.get("problem_statement", "")),
            hints_text=str(record.get("hints_text", "")),
            created_at=str(record.get("created_at", "")),
        )
    except KeyError as exc:
        raise DatasetError(f"instance record lacks {exc.args[0]!r}") from exc


def load_instances(path: Path) -> list[Instance]:
    """Every instance of a JSON-lines file, in file order."""
    out = []
    for number, line in enumerate(Path(path).read_text(encoding="utf-8").splitlines(), 1):
        if line.strip():
            try:
                record = json.loads(line)
            except ValueError as exc:
                raise DatasetError(f"{path}:{number}: not JSON") from exc
            out.append(parse_instance(record))
    return out


# --- environments -------------------------------------------------------------------------------


def merge_spec_tables(base: SpecTable, overlay: SpecTable) -> SpecTable:
    """``base`` with each (repo, version) record updated by ``overlay``'s record of the same key.

    List values of the overlay extend the base's lists; other values replace them."""
    merged: SpecTable = {
        repo: {v: dict(r) for v, r in versions.items()} for repo, versions in base.items()
    }
    for repo, versions in overlay.items():
        for version, record in versions.items():
            target = merged.setdefault(repo, {}).setdefault(version, {})
            for key, value in record.items():
                if isinstance(value, list) and isinstance(target.get(key), list):
                    target[key] = [*target[key], *value]
                elif isinstance(value, dict) and isinstance(target.get(key), dict):
                    target[key] = {**target[key], **value}
                else:
                    target[key] = value
    return merged


def spec_table(document: Mapping[str, Any]) -> SpecTable:
    """The ``repo → version → record`` table of an env_specs document (its ``specs`` key)."""
    specs = document.get("specs", document)
    if not isinstance(specs, dict):
        raise DatasetError("env specs document has no 'specs' mapping")
    return {
        str(repo): {str(v): dict(r) for v, r in versions.items() if isinstance(r, dict)}
        for repo, versions in specs.items()
        if isinstance(versions, dict)
    }


def default_overlay() -> Path:
    """Reprobot's own additions to the transcribed harness table (``env_overrides.json``)."""
    return Path(__file__).with_name("env_overrides.json")


def load_env_specs(path: Path, overlay: Path | None = None) -> SpecTable:
    """The spec table of ``path``, with ``overlay``'s records (same shape) merged over it.

    ``path`` is an ``env_specs.json`` or the harness's own ``harness_specs.json``; the latter is
    converted (``harness_table``), its Python releases mapped by the overlay's ``pythons``."""
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    extra: Mapping[str, Any] = (
        json.loads(Path(overlay).read_text(encoding="utf-8")) if overlay is not None else {}
    )
    if isinstance(document, dict) and is_harness_document(document):
        pythons = {str(k): str(v) for k, v in extra.get("pythons", {}).items()}
        table = harness_table(document, pythons)
    else:
        table = spec_table(document)
    if overlay is not None:
        table = merge_spec_tables(table, spec_table({"specs": extra.get("specs", {})}))
    return table


def split_env_words(command: str) -> tuple[list[str], list[str]]:
    """Leading ``VAR=value`` words of a shell command line, and the rest."""
    words = shlex.split(command)
    cut = 0
    while cut < len(words) and _ENV_WORD.match(words[cut]):
        cut += 1
    return words[:cut], words[cut:]


def is_pytest_command(words: Sequence[str]) -> bool:
    """Whether a command (without its leading assignments) runs pytest."""
    if not words:
        return False
    if Path(words[0]).name in _PYTEST_WORDS:
        return True
    return (
        len(words) >= 3
        and Path(words[0]).name.startswith("python")
        and list(words[1:3]) == ["-m", "pytest"]
    )


def pytest_test_command(test_cmd: str) -> str:
    """The harness's test command as one a sandbox reports on.

    A pytest command, or one of the unittest family (Django's ``tests/runtests.py``, a
    ``manage.py test``, ``python -m unittest``), stays as it is. Any other runner (sympy's
    ``bin/test``, ``tox``) reports nothing Reprobot can read, so it is replaced by pytest; its
    leading ``VAR=value`` assignments are kept, its own options are dropped since they mean
    nothing to pytest.
    """
    assignments, words = split_env_words(test_cmd)
    if is_pytest_command(words) or runner_family(test_cmd) is not None:
        return test_cmd
    return " ".join([*(shlex.quote(a) for a in assignments), PYTEST_FALLBACK])


def scm_pretend_version(version: str) -> str:
    """A full release number for a harness version (``"5.4"`` → ``"5.4.0"``)."""
    parts = version.split(".")
    return version if len(parts) >= 3 else ".".join([*parts, *["0"] * (3 - len(parts))])


def to_env_spec(record: Mapping[str, Any], version: str) -> EnvSpec:
    """The ``EnvSpec`` of one environment record of ``version``.

    Every spec sets ``SETUPTOOLS_SCM_PRETEND_VERSION``: a tree streamed into a container has no
    ``.git``, and setuptools_scm-versioned projects cannot build without it; projects that do
    not use setuptools_scm never read it."""
    python = str(record.get("python", "3.11"))
    if python not in SUPPORTED_PYTHONS:
        raise DatasetError(
            f"Python {python} is not a sandbox Python ({', '.join(SUPPORTED_PYTHONS)})"
        )
    packages = [str(p) for p in record.get("pip_packages", []) or []]
    constraints = [str(c) for c in record.get("constraints", []) or []]
    env = {"SETUPTOOLS_SCM_PRETEND_VERSION": scm_pretend_version(version)}
    env.update({str(k): str(v) for k, v in (record.get("env") or {}).items()})

    def strings(key: str) -> tuple[str, ...]:
        return tuple(str(x) for x in record.get(key, []) or [])

    return EnvSpec(
        python=python,
        requirements=strings("requirements"),
        binary_requirements=strings("binary_requirements"),
        pip_packages=tuple(packages),
        constraints=tuple(constraints),
        pre_install=strings("pre_install"),
        system_packages=strings("system_packages"),
        install=str(record.get("install") or "python -m pip install -e ."),
        test_cmd=pytest_test_command(str(record.get("test_cmd") or "pytest")),
        env=env,
        notes=strings("notes"),
    )


def env_spec_for(table: SpecTable, repo: str, version: str) -> EnvSpec:
    """The ``EnvSpec`` of ``repo`` at harness version ``version``."""
    try:
        record = table[repo][version]
    except KeyError as exc:
        raise DatasetError(f"no environment record for {repo} {version}") from exc
    return to_env_spec(record, version)


# --- test ids -----------------------------------------------------------------------------------


def defined_tests(source: str) -> list[str]:
    """Node-id suffixes of the test functions a module defines: ``test_x`` or ``TestC::test_x``.

    Functions and methods of any name are listed (pytest's naming rules are configurable); a
    module that does not parse yields its top-level ``def`` names read line by line."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
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
_SEVERITY = (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING, Outcome.SKIPPED, Outcome.PASSED)


def combined_outcome(outcomes: Iterable[Outcome]) -> Outcome:
    """The worst of several outcomes (missing when there are none)."""
    seen = set(outcomes)
    return next((o for o in _SEVERITY if o in seen), Outcome.MISSING)


def fails(outcome: Outcome) -> bool:
    """A fail in the harness's sense: failed, error, or not reported at all."""
    return outcome in (Outcome.FAILED, Outcome.ERROR, Outcome.MISSING)


# --- repository I/O -----------------------------------------------------------------------------


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
