"""The no-LLM drafter: the issue's own reproducer, turned into tests placed where the repository
keeps its tests, in the shape its runner collects (``test_style``: pytest functions, or
``TestCase`` methods for the unittest family and Django's runners).

Variants, each its own test module, all deterministic (the table, with the order selection ranks
them in, is ``variants``; each is built from one ``reading`` of the issue):

- ``issue-expected``: a statement and what the issue expects of it, in each shape the claim
  takes: a code block's final expression or a call must give the value the issue states; a
  session's shown value must become the one the issue expects, or a truth value called wrong the
  other; two parallel computations the issue says should agree (``e`` and ``f = simplify(e)``)
  must give equal values; the value of an operation the issue calls incomplete, given to the
  same call again, must come back unchanged; a module constant must have the value the issue
  proposes (``proposed_setting``); a statement the reporter points at must raise as the one
  before it does, and a session the issue shows from an earlier release must raise again there.
- ``issue-code``: every code block before the traceback, run as a test, its last expression
  shown as a notebook shows it (fails with the issue's exception on R, passes once it is gone);
  ``issue-code-last``: the last such block alone.
- ``issue-session-raises``: an interactive session up to the statement that raised.
- ``issue-command``: the files the issue shows, the project's command run on them, and the
  output lines it reports as wrong (absent) or right (present); for a Sphinx issue, its
  documentation project built and the warning it quotes no longer printed (``doc_build``).
- ``issue-wrong-value``: the value a session shows, or a call the issue says gives ("f(x) is
  3"), called wrong, must not come back; where the title calls an exception's message wrong
  ("misleading exception when ..."), the code or session must no longer raise the message the
  issue shows (the raise itself may stay, so no crash-only test is drafted).
- ``issue-shown-value``: only when a fix is known (pull request time): each value a session
  or a script shows must not come back, none of them called wrong; the fix picks the one it
  turns from fail to pass.

Names a snippet uses without importing are resolved from the tree (``name_resolution``), and
then from the imports the project's own tests use (``imports_in_tests``).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from reprobot.generation.drafter.imports_in_tests import factories_in_tests, imports_in_tests
from reprobot.generation.drafter.name_resolution import (
    all_exports,
    import_aliases,
    resolve_names,
    star_imported,
)
from reprobot.generation.drafter.reading import Reading, TreeContext
from reprobot.generation.drafter.session_variants import (
    shown_is_wrong,
)
from reprobot.generation.drafter.snippet_names import (
    attribute_bases,
    called_names,
    undefined_names,
)
from reprobot.generation.drafter.snippets import (
    shown_value_step,
)
from reprobot.generation.drafter.sources import (
    TestSource,
)
from reprobot.generation.drafter.test_style import (
    PYTEST,
    TMP_PATH_IMPORTS,
    TestStyle,
    hoist_models,
    unittest_body,
)
from reprobot.generation.drafter.test_writer import (
    module_text,
    needed_imports,
    plain_asserts,
    slug,
)
from reprobot.generation.drafter.variants import builders
from reprobot.generation.drafts import Draft
from reprobot.generation.formats.patch_text import patch_from_files
from reprobot.generation.issue.report import IssueReport
from reprobot.generation.repo.exercised import (
    definitions,
    exercised_module,
    own_tests_folder,
    reaches_project,
)
from reprobot.generation.repo.fixtures import (
    PYTEST_FIXTURES,
    asked_fixtures,
    tree_fixtures,
    visible_fixtures,
)
from reprobot.generation.repo.test_layout import (
    layout_of,
    new_test_path,
    read_texts,
    related_test_files,
)
from reprobot.generation.repo.tree_reader import read_python_files
from reprobot.validation import RepoSnapshot

_RESOLVE_ROUNDS = 3
_NOTHING_TO_ASSERT = (
    "its code and sessions show no exception, no value called wrong and no expected value"
)
_MANIFESTS = ("pyproject.toml", "setup.cfg", "setup.py")


@dataclass(frozen=True)
class DrafterOutput:
    drafts: tuple[Draft, ...]
    # Values the issue shows as wrong, which a failing assertion may report (for judging).
    wrong_values: tuple[str, ...]
    skipped: tuple[tuple[str, str], ...]  # (method, why no draft came of it)


def tree_context(
    issue: IssueReport, snapshot: RepoSnapshot, style: TestStyle = PYTEST
) -> TreeContext:
    layout = layout_of(snapshot, style.module_patterns)
    python_files = read_python_files(snapshot)
    related = tuple(related_test_files(issue, layout, limit=3, texts=python_files))
    manifests = read_texts(snapshot, _MANIFESTS)
    aliases = import_aliases(python_files.values(), layout.packages)
    exports = all_exports(layout, python_files)
    imported = imports_in_tests(layout.test_files, python_files)
    made = factories_in_tests(layout.test_files, python_files)
    defined = definitions(python_files, layout)
    return TreeContext(
        layout, python_files, manifests, related, aliases, exports, imported, made, defined
    )


def _resolve(
    imports: Sequence[str],
    prelude: Sequence[str],
    body: str,
    tree: TreeContext,
    provided: Sequence[str] = ("tmp_path",),
) -> tuple[list[str], list[str], list[str]]:
    """(imports, prelude, still undefined) after resolving the names the code leaves undefined;
    ``provided`` are the names the test itself binds (a fixture, ``self``)."""
    imports = list(imports)
    prelude = list(prelude)
    unresolved: list[str] = []
    starred = star_imported(imports, tree.layout, tree.python_files, tree.exports)
    for _ in range(_RESOLVE_ROUNDS):
        source = "\n".join([*imports, *prelude, body])
        missing = undefined_names(source, provided=(*provided, *starred))
        missing = [n for n in missing if n not in unresolved]
        if not missing:
            break
        found = resolve_names(
            missing,
            tree.layout,
            tree.python_files,
            tree.related_tests,
            frozenset(called_names(body)),
            tree.aliases,
            tree.exports,
            tree.test_imports,
            imports,
            tree.test_factories,
            frozenset(attribute_bases(body)),
        )
        unresolved.extend(found.unresolved)
        for statement in found.statements:
            target = imports if statement.startswith(("import ", "from ")) else prelude
            if statement not in target:
                # A copied binding needs what it calls, which a later round imports: bindings
                # go after every import, so their order among themselves is kept.
                target.append(statement)
    return imports, prelude, unresolved


def test_sources(
    issue: IssueReport, tree: TreeContext, knowing_fix: bool
) -> tuple[list[TestSource], list[str], list[tuple[str, str]]]:
    """Every variant the issue supports (``variants``, best first), the wrong values it shows,
    and why others were skipped; ``knowing_fix``, also those only a fix can choose among."""
    reading = Reading(issue, tree, knowing_fix)
    sources: list[TestSource] = []
    wrong: list[str] = []
    skipped: list[tuple[str, str]] = []
    for program in reading.programs:
        # Code whose comments show a printed value has a shown step too.
        shown = shown_value_step(program)
        if shown is not None and shown_is_wrong(issue, program, shown):
            wrong.append(program.steps[shown].output.strip())
    for build in builders():
        produced = build(reading)
        sources.extend(produced.sources)
        wrong.extend(produced.wrong)
    if not sources and (issue.sessions or issue.python_blocks):
        skipped.append(("issue", _NOTHING_TO_ASSERT))
    elif not sources:
        skipped.append(
            ("issue", "the issue shows no code, session or command to reproduce it with")
        )
    return sources, wrong, skipped


def _test_folder(sources: Sequence[TestSource], tree: TreeContext) -> str | None:
    """The folder of the project's tests of the code the drafts exercise (the first draft that
    names one), or None to place them by the issue's words."""
    for source in sources:
        module = exercised_module(source.body, source.imports, tree.layout, tree.definitions)
        if module is not None and (folder := own_tests_folder(module, tree.layout)) is not None:
            return folder
    return None


def _not_runnable_as_written(
    source: TestSource, style: TestStyle, offered: frozenset[str]
) -> str | None:
    """Why the tests an issue writes out cannot run as the project's own, or None: pytest
    functions under another runner, or asking for fixtures neither pytest nor the tree
    (``offered``) defines."""
    if not style.is_pytest:
        return "the issue's tests are pytest functions; the project's runner does not collect them"
    unknown = sorted(asked_fixtures(source.body) - PYTEST_FIXTURES - offered)
    if unknown:
        names = ", ".join(unknown[:5])
        return f"the issue's tests ask for fixtures the project does not offer: {names}"
    return None


def draft_from_issue(
    issue: IssueReport,
    snapshot: RepoSnapshot,
    tree: TreeContext | None = None,
    style: TestStyle = PYTEST,
    knowing_fix: bool = False,
) -> DrafterOutput:
    """The no-LLM drafts of an issue, each a new test module in the repository's test layout,
    written in ``style``: the one the project's test runner collects; ``knowing_fix`` (at pull
    request time), with the variants only a fix can choose among."""
    tree = tree or tree_context(issue, snapshot, style)
    sources, wrong, skipped = test_sources(issue, tree, knowing_fix)
    stem = slug(issue.title) or "issue"
    drafts: list[Draft] = []
    seen: set[str] = set()
    taken: list[str] = []
    folder = _test_folder(sources, tree)
    # Every draft goes to the same folder: the fixtures its conftest.py files offer (pytest's
    # alone: a TestCase method asks for none).
    fixtures = (
        visible_fixtures(
            new_test_path(issue, tree.layout, stem, (), tree.related_tests[:1], folder),
            tree.python_files,
        )
        if style.is_pytest
        else frozenset()
    )
    # A reporter's Django model needs a module of an app with models of its own: Django creates
    # tables for an app without migrations only when it has a models module.
    alone = new_test_path(issue, tree.layout, stem, (), tree.related_tests[:1], folder)
    app = PurePosixPath(alone).parent
    in_app = style.django and any(
        f"{app}/{name}" in tree.python_files for name in ("models.py", "models/__init__.py")
    )
    packages = tree.layout.packages
    # Fixtures the tree defines anywhere (a plugin it ships too), for tests the issue writes out.
    defined = (
        tree_fixtures(tree.python_files) if any(s.module_level for s in sources) else frozenset()
    )
    for source in sources:
        if source.module_level and (
            why := _not_runnable_as_written(source, style, fixtures | defined)
        ):
            skipped.append((source.method, why))
            continue
        body = source.body
        helpers = needed_imports(body)
        provided: tuple[str, ...] = ("tmp_path",)
        models: list[str] = []
        if style.is_pytest:
            body = plain_asserts(body)
        else:
            body = unittest_body(body, source.wants_tmp_path, style)
            temporary = TMP_PATH_IMPORTS if source.wants_tmp_path else ()
            helpers = [style.base_import, *temporary, *needed_imports(body)]
            provided = ("self", "_approx")
        if in_app:
            models, body = hoist_models(body)
        wanted = list(source.imports)
        wanted[:0] = [line for line in helpers if line not in wanted]
        imports, prelude, unresolved = _resolve(
            wanted, [], "\n".join([*models, body]), tree, provided
        )
        prelude = [*prelude, *models]
        # A name the project's test fixtures provide ("app") is asked for as a parameter.
        requested = [n for n in unresolved if n in fixtures and n != "tmp_path"]
        unresolved = [n for n in unresolved if n not in requested]
        # A name not found may be the project's: only a body whose every name is found can
        # be told to reach nothing of it.
        if (
            not source.runs_project_command
            and not (source.module_level and asked_fixtures(body) & defined)
            and not requested
            and not unresolved
            and not reaches_project("\n".join([*prelude, *models, body]), imports, packages)
        ):
            called = sorted({line.split()[1].split(".")[0] for line in imports if " " in line})
            skipped.append(
                (
                    source.method,
                    "the example calls nothing of the project"
                    + (f" (only {', '.join(called[:5])})" if called else ""),
                )
            )
            continue
        if unresolved:
            skipped.append(
                (
                    source.method,
                    f"names the issue's code uses are not found: {', '.join(unresolved[:5])}",
                )
            )
        params = ", ".join([*(["tmp_path"] if source.wants_tmp_path else []), *requested])
        tests = [(stem, body)]
        if source.module_level:
            # The issue's own test functions are the module's tests, as it wrote them.
            prelude, tests = [*prelude, *([""] if prelude else []), "", body], []
        text = module_text(issue.title, imports, prelude, tests, params, style, issue.reference)
        key = re.sub(r"\s+", " ", text)
        if key in seen:
            continue
        seen.add(key)
        path = new_test_path(issue, tree.layout, stem, taken, tree.related_tests[:1], folder)
        taken.append(path)
        patch = patch_from_files({path: (None, text)}, name="test.diff")
        drafts.append(Draft(source.method, patch, source.note, alone_path=alone))
    return DrafterOutput(tuple(drafts), tuple(dict.fromkeys(w for w in wrong if w)), tuple(skipped))
