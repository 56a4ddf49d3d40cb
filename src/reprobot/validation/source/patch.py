"""Unified-diff patches: what they touch, and whether they apply to a snapshot."""

from __future__ import annotations

import contextlib
import re
import shutil
import subprocess
import tempfile
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from reprobot.validation.errors import SnapshotError
from reprobot.validation.source.snapshot import RepoSnapshot


@dataclass(frozen=True)
class Patch:
    """A unified diff with a name for reports (e.g. ``test.diff``)."""

    diff: str
    name: str = "patch.diff"

    @classmethod
    def from_file(cls, path: Path) -> Patch:
        return cls(
            diff=Path(path).read_text(encoding="utf-8", errors="surrogateescape"),
            name=Path(path).name,
        )

    def parsed(self) -> PatchSet | None:
        """The parsed diff, or None when it is not a well-formed unified diff."""
        return self._parsed

    @cached_property
    def _parsed(self) -> PatchSet | None:
        # Parsed once: every reader of a large diff would otherwise parse it again.
        try:
            patch_set = PatchSet(self.diff)
        except UnidiffParseError:
            return None
        return patch_set if len(patch_set) else None

    @property
    def well_formed(self) -> bool:
        return self.parsed() is not None

    @cached_property
    def files(self) -> tuple[str, ...]:
        """Paths the patch touches (target path; source path for deletions), as ``git apply``
        reads them (quoted names, any prefix); a diff git cannot read is read by unidiff."""
        reading = self._git_reading
        if reading is not None:
            return reading[0]
        parsed = self.parsed()
        if parsed is None:
            return ()
        out = []
        for pf in parsed:
            path = pf.source_file if pf.is_removed_file else pf.target_file
            out.append(path[2:] if path.startswith(("a/", "b/")) else path)
        return tuple(out)

    @cached_property
    def deleted_files(self) -> tuple[str, ...]:
        """Paths the patch deletes, read as ``files`` reads them."""
        reading = self._git_reading
        if reading is not None:
            return reading[1]
        parsed = self.parsed()
        if parsed is None:
            return ()
        paths = (pf.source_file for pf in parsed if pf.is_removed_file)
        return tuple(p[2:] if p.startswith(("a/", "b/")) else p for p in paths)

    @cached_property
    def _git_reading(self) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
        """(paths, deleted paths) as ``git apply`` reads the diff, outside any repository;
        None when git does not read it."""
        data = self.diff.encode("utf-8", "surrogateescape")
        runs = [
            subprocess.run(
                [shutil.which("git") or "git", "apply", flag, "-z", "-"],
                input=data,
                capture_output=True,
                check=False,
                cwd=tempfile.gettempdir(),
                timeout=120,
            )
            for flag in ("--numstat", "--summary")
        ]
        if any(run.returncode != 0 for run in runs) or not runs[0].stdout:
            return None
        records = runs[0].stdout.decode("utf-8", "surrogateescape").split("\0")
        paths = tuple(r.split("\t", 2)[2] for r in records if r.count("\t") >= 2)
        summary = runs[1].stdout.decode("utf-8", "surrogateescape").splitlines()
        deleted = tuple(m.group(1) for line in summary if (m := _DELETED.match(line)))
        return paths, deleted

    @cached_property
    def python_paths(self) -> tuple[str, ...]:
        """The Python files the patch changes, under their old names and their new ones (a
        renamed module is measured under one name before the patch and the other after it)."""
        parsed = self.parsed()
        if parsed is None:
            return ()
        out: dict[str, None] = {}
        for pf in parsed:
            for name in (pf.source_file, pf.target_file):
                path = name[2:] if name.startswith(("a/", "b/")) else name
                if path.endswith(".py"):
                    out[path] = None
        return tuple(out)

    def without_files(self, paths: Iterable[str]) -> Patch:
        """This patch without its changes to ``paths`` (itself when it does not parse).

        The benchmark harnesses restore the test files before applying the golden tests, which
        drops a candidate fix's own edits to them; this does the same to the diff."""
        drop = set(paths)
        parsed = self.parsed()
        if parsed is None or not drop & set(self.files):
            return self
        if _GIT_HEADER.search(self.diff):
            # Cut the text itself at each file's header: re-serialising the parsed diff would
            # lose what the parser does not model (binary patches, mode changes).
            blocks = _GIT_HEADER.split(self.diff)
            kept = [blocks[0]] + [block for block in blocks[1:] if not drop & _block_paths(block)]
            return Patch("".join(kept), name=self.name)
        kept = [str(pf) for pf, path in zip(parsed, self.files, strict=True) if path not in drop]
        return Patch("".join(kept), name=self.name)


_GIT_HEADER = re.compile(r"^(?=diff --git )", re.M)
# What ``git apply --summary`` says of a deleted file: with its mode in a git diff, without it
# in a plain one.
_DELETED = re.compile(r"^ delete(?: mode \d{6})? (.*)$")


def _block_paths(block: str) -> set[str]:
    """The paths one ``diff --git`` section names (before and after)."""
    paths = set()
    header = block.split("\n", 1)[0]
    if " b/" in header:
        before, _, after = header[len("diff --git ") :].partition(" b/")
        paths |= {before[2:] if before.startswith("a/") else before, after}
    for line in block.splitlines():
        if line.startswith(("--- a/", "+++ b/")):
            paths.add(line[6:].split("\t", 1)[0].rstrip())
    return paths


def applies_to(patches: list[Patch], snapshot: RepoSnapshot) -> bool:
    """Whether ``patches`` apply in order to the snapshot's tree (checked in a scratch index)."""
    with _scratch_index(snapshot) as (git, env):
        return _apply_cached(git, env, patches, snapshot) is None


@contextlib.contextmanager
def _scratch_index(snapshot: RepoSnapshot) -> Iterator[tuple[list[str], dict[str, str]]]:
    """A git command prefix and environment whose index is a scratch copy of the snapshot's tree."""
    if snapshot.path is None:
        raise SnapshotError("patching in a scratch index needs a git snapshot")
    git = [shutil.which("git") or "git", "-C", str(snapshot.path)]
    with tempfile.TemporaryDirectory(prefix="reprobot-index-") as tmp:
        # A scratch index and an empty HOME: nothing of the user's git setup takes part.
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "HOME": tmp}
        subprocess.run([*git, "read-tree", snapshot.sha], env=env, check=True, capture_output=True)
        yield git, env


@contextlib.contextmanager
def scratch_index(
    snapshot: RepoSnapshot, patches: Iterable[Patch] = ()
) -> Iterator[tuple[list[str], dict[str, str]]]:
    """A git command prefix and environment whose index is the snapshot's tree with ``patches``
    applied in order by ``git apply``, as the sandbox applies them (``SnapshotError`` when one
    does not apply as written)."""
    with _scratch_index(snapshot) as (git, env):
        failure = _apply_cached(git, env, list(patches), snapshot)
        if failure is not None:
            raise SnapshotError(failure)
        yield git, env


def _apply_cached(
    git: list[str], env: dict[str, str], patches: list[Patch], snapshot: RepoSnapshot
) -> str | None:
    """Apply ``patches`` to the scratch index in order; the first failure's message, or None."""
    for patch in patches:
        proc = subprocess.run(
            [*git, "apply", "--cached", "--whitespace=nowarn", "-"],
            input=patch.diff.encode("utf-8", "surrogateescape"),
            env=env,
            capture_output=True,
            check=False,
        )
        if proc.returncode != 0:
            err = proc.stderr.decode("utf-8", "replace").strip()
            return f"{patch.name} does not apply to {snapshot.sha[:12]}: {err}"
    return None


def patched_sources(
    snapshot: RepoSnapshot, patches: list[Patch], paths: list[str]
) -> dict[str, bytes | None]:
    """The content of ``paths`` after applying ``patches`` to the snapshot (None: absent).

    Works in a scratch index, so no work tree is touched; the patched blobs are written to the
    repository's object store as git does for any staged change.
    """
    out: dict[str, bytes | None] = {}
    with scratch_index(snapshot, patches) as (git, env):
        for path in paths:
            proc = subprocess.run(
                [*git, "cat-file", "blob", f":{path}"], env=env, capture_output=True, check=False
            )
            out[path] = proc.stdout if proc.returncode == 0 else None
    return out


def diff_between(base: RepoSnapshot, head: RepoSnapshot, name: str = "fix.diff") -> Patch:
    """The patch that turns ``base``'s tree into ``head``'s (both in one local repository)."""
    if base.path is None or head.path is None or base.path != head.path:
        raise SnapshotError("a diff between two commits needs both in one local repository")
    proc = subprocess.run(
        [
            shutil.which("git") or "git",
            "-C",
            str(base.path),
            "diff",
            "--no-color",
            "--no-ext-diff",
            "--binary",
            base.sha,
            head.sha,
        ],
        capture_output=True,
        check=False,
        timeout=300,
    )
    if proc.returncode != 0:
        raise SnapshotError(f"git diff {base.sha[:12]} {head.sha[:12]} failed: {proc.stderr!r}")
    return Patch(diff=proc.stdout.decode("utf-8", "surrogateescape"), name=name)


_TEST_DIRS = frozenset({"test", "tests", "testing"})


def test_modules(patch: Patch) -> list[str]:
    """The Python test modules a test patch touches (what a run of its tests selects)."""
    out = []
    for path in patch.files:
        name = path.rsplit("/", 1)[-1]
        if not name.endswith(".py") or name in ("conftest.py", "__init__.py"):
            continue
        in_test_dir = bool(_TEST_DIRS & set(path.split("/")[:-1]))
        if name.startswith("test") or name.endswith("_test.py") or in_test_dir:
            out.append(path)
    return out
