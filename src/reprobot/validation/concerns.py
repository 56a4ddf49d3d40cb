"""What a change holds that keeps a pass of the tests from being verified, known from the
change itself: paths a verified change may not hold, code reaching into the test process, ways
it reaches the reproducing tests, its size. ``verify`` and ``bench pod`` both ask here; the
rules that turn these concerns into a status are ``results.ruling``'s.
"""

from __future__ import annotations

from collections.abc import Sequence

from reprobot.validation.errors import SnapshotError
from reprobot.validation.results.testrun import TestRun
from reprobot.validation.source.allowlist import PathConcern, describe, review_paths
from reprobot.validation.source.git_changes import ChangeSet, fix_changes, head_changes
from reprobot.validation.source.patch import Patch, patched_sources
from reprobot.validation.source.process_hooks import Hook, process_hooks
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.source.test_integrity import edited_test_files, shadowing_files

# A diff larger than this is more than a reviewer reads, and Reprobot does not parse it line by
# line either (the parse costs the host many times the diff's size): a pass of such a change
# needs review, and its change coverage is not measured.
MAX_READ_DIFF_BYTES = 1024 * 1024


def too_large(fix: Patch) -> bool:
    return len(fix.diff) > MAX_READ_DIFF_BYTES


def size_concern(fix: Patch) -> str:
    return (
        f"it is a {len(fix.diff) / 1024 / 1024:.1f} MB diff, more than a reviewer reads or "
        f"Reprobot reads line by line ({MAX_READ_DIFF_BYTES // 1024 // 1024} MB)"
    )


def unguarded_reason(paths: Sequence[str]) -> str:
    named = ", ".join(paths[:5]) + (f" and {len(paths) - 5} more" if len(paths) > 5 else "")
    return (
        f"no existing test module of {named} was found: nothing checked that the change keeps "
        "what it did before"
    )


def change_concerns(
    base: RepoSnapshot,
    fix: Patch,
    head: RepoSnapshot | None = None,
    skip: Sequence[str] = (),
    hooks: Sequence[Hook] | None = None,
) -> list[str]:
    """What the change itself holds that keeps a pass of any tests from being verified, known
    before a test runs: code reaching into the test process (``process_hooks``), and paths a
    verified change may not hold (``contents_concerns``; ``skip``: paths said elsewhere)."""
    if too_large(fix):
        return [size_concern(fix), *contents_concerns(base, fix, head, skip)]
    found = process_hooks(fix) if hooks is None else hooks
    concerns = []
    for kind, what in (
        ("report", "the machinery reporting the tests' outcomes"),
        (
            "machinery",
            "what imports and runs the tests (pytest's internals, import hooks, the module "
            "table, builtins, raw memory)",
        ),
    ):
        reaching = [h for h in found if h.kind == kind]
        if reaching:
            where = ", ".join(h.describe() for h in reaching[:3])
            concerns.append(f"it adds code that reaches into {what}: {where}")
    return concerns + contents_concerns(base, fix, head, skip)


def contents_concerns(
    base: RepoSnapshot, fix: Patch, head: RepoSnapshot | None, skip: Sequence[str] = ()
) -> list[str]:
    """What the change holds that a verified change may not (``source.allowlist``), read as git
    reads it: the head's commits, or the fix as ``git apply`` applies it. Paths in ``skip`` are
    said elsewhere."""
    try:
        changes: ChangeSet = (
            head_changes(base, head) if head is not None else fix_changes(base, [fix])
        )
    except SnapshotError as exc:
        return [
            "git does not apply it as written, so what its files hold cannot be read as they "
            f"run ({str(exc)[:300]})"
        ]
    found: list[PathConcern] = [
        c
        for c in review_paths(changes.files, changes.content, base.list_files())
        if c.path not in skip
    ]
    return [describe(found)] if found else []


def holds_the_tests(
    base: RepoSnapshot, tests: Patch, fix: Patch, head: RepoSnapshot | None = None
) -> bool:
    """Whether the change holds the drafted tests exactly as drafted (a pull request that
    commits them): every file of ``tests`` has the same content with the change."""
    files = list(tests.files)
    if not files or not set(files) <= set(fix.files):
        return False
    try:
        drafted = patched_sources(base, [tests], files)
        if head is not None:
            return drafted == {p: head.read_file(p) for p in files}
        return drafted == patched_sources(base, [fix], files)
    except SnapshotError:
        return False


def integrity_concerns(
    base: RepoSnapshot, tests: Patch, fix: Patch, after: TestRun, applied_last: bool = True
) -> list[str]:
    """Ways the fix reaches the reproducing tests themselves (``test_integrity``; ``after`` is
    the run with the tests applied over the fix, unless ``applied_last`` is false: the change
    held them as drafted), in words."""
    concerns = []
    edited = edited_test_files(fix, tests)
    if edited:
        concerns.append(
            f"it also edits {', '.join(edited)}, which holds the reproducing tests: the tests "
            "that ran may not be the ones drafted"
        )
    test_files = [f for f in tests.files if f.endswith(".py")]
    try:
        sources = patched_sources(base, [tests], test_files)
    except SnapshotError:
        sources = {}
    shadows = shadowing_files(fix, sources, base.list_files())
    if shadows:
        concerns.append(
            f"it adds {', '.join(shadows)}, which the reproducing tests would import in place "
            "of the project's own module"
        )
    applied = after.patches[-1] if after.patches and applied_last else None
    if applied is not None and applied.applied and applied.method != "git apply":
        concerns.append(
            f"the reproducing tests applied over it only with fuzzy context ({applied.method}): "
            "they may not run as drafted"
        )
    return concerns
