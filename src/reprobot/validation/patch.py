"""Unified-diff patches: what they touch, and whether they apply to a snapshot."""

from __future__ import annotations

import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from reprobot.validation.errors import SnapshotError
from reprobot.validation.snapshot import RepoSnapshot


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
        try:
            patch_set = PatchSet(self.diff)
        except UnidiffParseError:
            return None
        return patch_set if len(patch_set) else None

    @property
    def well_formed(self) -> bool:
        return self.parsed() is not None

    @property
    def files(self) -> tuple[str, ...]:
        """Paths the patch touches (target path; source path for deletions)."""
        parsed = self.parsed()
        if parsed is None:
            return ()
        out = []
        for pf in parsed:
            path = pf.source_file if pf.is_removed_file else pf.target_file
            out.append(path[2:] if path.startswith(("a/", "b/")) else path)
        return tuple(out)


def applies_to(patches: list[Patch], snapshot: RepoSnapshot) -> bool:
    """Whether ``patches`` apply in order to the snapshot's tree (checked in a scratch index)."""
    if snapshot.path is None:
        raise SnapshotError("checking patches needs a git snapshot")
    with tempfile.TemporaryDirectory(prefix="reprobot-apply-") as tmp:
        # A scratch index and an empty HOME: nothing of the user's git setup takes part.
        env = {"GIT_INDEX_FILE": str(Path(tmp) / "index"), "HOME": tmp}
        git = [shutil.which("git") or "git", "-C", str(snapshot.path)]
        subprocess.run([*git, "read-tree", snapshot.sha], env=env, check=True, capture_output=True)
        for patch in patches:
            proc = subprocess.run(
                [*git, "apply", "--cached", "--whitespace=nowarn", "-"],
                input=patch.diff.encode("utf-8", "surrogateescape"),
                env=env,
                capture_output=True,
                check=False,
            )
            if proc.returncode != 0:
                return False
    return True
