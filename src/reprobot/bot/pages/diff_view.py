"""A unified diff as rows for a page, each executable changed line marked run or not run.

Pure: the diff text and the change coverage in, rows out. Removed lines are numbered as before
the change and added lines as after it, the numbering ``ChangeCoverage`` uses."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, StringConstraints, model_validator
from unidiff.errors import UnidiffParseError
from unidiff.patch import PatchSet

from reprobot.bot.pages.highlight import highlight_lines
from reprobot.validation import ChangeCoverage, FileChangeCoverage

LineKind = Literal["context", "added", "removed"]
# "run" and "not run" only for executable changed lines; context and non-code lines have none.
Mark = Literal["run", "not run", ""]


@dataclass(frozen=True)
class DiffLine:
    """One line of a hunk, as the page shows it."""

    kind: LineKind
    old: int | None
    new: int | None
    text: str
    # The line highlighted: Pygments' escaped HTML (``highlight.highlight_lines``), made when
    # the document is; the page shows ``text`` escaped where this is empty.
    html: str = ""
    mark: Mark = ""


_KIND_CODE: dict[LineKind, str] = {"context": "c", "added": "a", "removed": "r"}
_KIND_OF: dict[str, LineKind] = {v: k for k, v in _KIND_CODE.items()}
_MARK_CODE: dict[Mark, str] = {"": " ", "run": "r", "not run": "n"}
_MARK_OF: dict[str, Mark] = {v: k for k, v in _MARK_CODE.items()}


class DiffHunk(BaseModel):
    """A hunk's lines, stored column by column: a stored page may hold thousands of lines, and
    reading them as one record each costs the page's route most of its time."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    header: str
    kinds: Annotated[str, StringConstraints(pattern=r"^[car]*$")] = ""
    marks: Annotated[str, StringConstraints(pattern=r"^[ rn]*$")] = ""
    old: tuple[int | None, ...] = ()
    new: tuple[int | None, ...] = ()
    text: tuple[str, ...] = ()
    html: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _columns_agree(self) -> DiffHunk:
        size = len(self.kinds)
        sizes = {len(self.marks), len(self.old), len(self.new), len(self.text), len(self.html)}
        if sizes != {size}:
            raise ValueError("a hunk's columns differ in length")
        return self

    @classmethod
    def of(cls, header: str, lines: Sequence[DiffLine]) -> DiffHunk:
        return cls(
            header=header,
            kinds="".join(_KIND_CODE[ln.kind] for ln in lines),
            marks="".join(_MARK_CODE[ln.mark] for ln in lines),
            old=tuple(ln.old for ln in lines),
            new=tuple(ln.new for ln in lines),
            text=tuple(ln.text for ln in lines),
            html=tuple(ln.html for ln in lines),
        )

    @property
    def lines(self) -> tuple[DiffLine, ...]:
        return tuple(
            DiffLine(_KIND_OF[k], o, n, t, h, _MARK_OF[m])
            for k, m, o, n, t, h in zip(
                self.kinds, self.marks, self.old, self.new, self.text, self.html, strict=True
            )
        )


class DiffFile(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    path: str
    old_path: str | None = None
    hunks: tuple[DiffHunk, ...] = ()
    executable: int = 0
    covered: int = 0
    binary: bool = False


def _mark(line: DiffLine, cov: FileChangeCoverage | None) -> Mark:
    if cov is None:
        return ""
    if line.kind == "added" and line.new in cov.executable_added:
        return "run" if line.new in cov.covered_added else "not run"
    if line.kind == "removed" and line.old in cov.executable_removed:
        return "run" if line.old in cov.covered_removed else "not run"
    return ""


def _hunks(path: str, raw: list[tuple[str, list[DiffLine]]]) -> tuple[DiffHunk, ...]:
    """The hunks of one file, every line highlighted (the file lexed once)."""
    fragments = iter(highlight_lines([ln.text for _, lines in raw for ln in lines], path))
    return tuple(
        DiffHunk.of(header, [replace(ln, html=next(fragments)) for ln in lines])
        for header, lines in raw
    )


def diff_files(diff: str, coverage: ChangeCoverage | None = None) -> tuple[DiffFile, ...]:
    """The files of ``diff`` with their hunks, highlighted; ``coverage`` marks the executable
    changed lines. A diff that does not parse is one file whose single hunk holds its text."""
    try:
        parsed = PatchSet(diff)
    except UnidiffParseError:
        text = [DiffLine(kind="context", old=None, new=None, text=t) for t in diff.splitlines()]
        return (DiffFile(path="(unparsed diff)", hunks=(DiffHunk.of("", text),)),)
    by_path = {f.path: f for f in coverage.files} if coverage else {}
    files = []
    for patched in parsed:
        path = patched.target_file.removeprefix("b/") if patched.target_file else patched.path
        if patched.is_removed_file:
            path = patched.source_file.removeprefix("a/")
        old = patched.source_file.removeprefix("a/") if patched.source_file else None
        cov = by_path.get(path) or (by_path.get(old) if old else None)
        hunks = []
        for hunk in patched:
            lines = []
            for raw in hunk:
                kind: LineKind = (
                    "added" if raw.is_added else "removed" if raw.is_removed else "context"
                )
                line = DiffLine(
                    kind=kind,
                    old=raw.source_line_no,
                    new=raw.target_line_no,
                    text=raw.value.rstrip("\r\n"),
                )
                lines.append(replace(line, mark=_mark(line, cov)))
            header = f"@@ -{hunk.source_start},{hunk.source_length} "
            header += f"+{hunk.target_start},{hunk.target_length} @@ {hunk.section_header}"
            hunks.append((header.rstrip(), lines))
        files.append(
            DiffFile(
                path=path,
                old_path=old if old and old != path and not patched.is_added_file else None,
                hunks=_hunks(path, hunks),
                executable=cov.executable if cov else 0,
                covered=cov.covered if cov else 0,
                binary=patched.is_binary_file,
            )
        )
    return tuple(files)
