"""The edits an environment's set-up steps make to the tree, and a candidate fix without them.

A benchmark's environment table may edit tracked files before the install (SWE-bench's
``pre_install``: ``sed -i 's/pytest/pytest -rA/' tox.ini``, pins written into ``setup.py``). The
agents whose fixes the dev sets label worked in such trees and their diffs carry these edits; the
harness applied each fix to a tree that already held them. They are the benchmark's, not the
fix's: judging a fix by them would say a candidate changes packaging when only the dataset did.

The steps are read, never run by a shell: a step is a list of ``sed -i`` edits of files of the
tree and ``grep -q`` guards, joined with ``&&`` and ``||``; each edit is computed by the host's
GNU sed in its sandbox mode (no command can run, no file be read or written but the one piped
in) on the file's bytes. Any other step (a package install, a redirection) edits nothing a diff
of the tree could carry, and is left out.
"""

from __future__ import annotations

import posixpath
import shlex
import subprocess
from collections.abc import Callable, Mapping, Sequence

from reprobot.validation import Patch, RepoSnapshot, SnapshotError, fix_changes

# sed and grep options a set-up step may give that change nothing but how the expression reads.
_SED_FLAGS = {"-E", "-r", "--regexp-extended"}
_GREP_FLAGS = {"-q", "-E", "-F", "-i", "-w", "-x", "--quiet", "--silent"}


def set_up_edits(steps: Sequence[str], read: Callable[[str], bytes | None]) -> dict[str, bytes]:
    """The files of the tree ``steps`` rewrite, with their content after all of them; ``read``
    gives a file's content before them (None: not in the tree)."""
    edited: dict[str, bytes] = {}

    def current(path: str) -> bytes | None:
        return edited[path] if path in edited else read(path)

    def run(words: list[str]) -> bool:
        if words[0] == "grep":
            return _grep(words[1:], current)
        written = _sed(words[1:], current)
        edited.update(written)
        return bool(written)

    for step in steps:
        chain = _chain(step)
        if chain is None:
            continue
        # The shell's lists: ``&&`` and ``||`` bind equally, left to right.
        ok = run(chain[0][1])
        for operator, words in chain[1:]:
            if (operator == "&&") == ok:
                ok = run(words)
    return {path: content for path, content in edited.items() if content != read(path)}


def without_set_up_edits(
    base: RepoSnapshot, fix: Patch, edits: Mapping[str, bytes]
) -> tuple[Patch, tuple[str, ...]]:
    """``fix`` without the files whose content it leaves exactly as the set-up steps make it
    (``set_up_edits``), and those files. A file the fix changes further stays, whole."""
    if not edits or not set(fix.files) & set(edits):
        return fix, ()
    try:
        changes = fix_changes(base, [fix])
    except SnapshotError:
        return fix, ()
    same = tuple(
        c.path
        for c in changes.files
        if c.status == "M" and c.path in edits and changes.content(c.new_blob) == edits[c.path]
    )
    return (fix.without_files(same), same) if same else (fix, ())


def _chain(step: str) -> list[tuple[str, list[str]]] | None:
    """A step as its commands, each with the operator before it (``&&``, ``||``; "" for the
    first), when each is a ``grep`` or a ``sed -i`` and one at least a ``sed -i``."""
    try:
        lexer = shlex.shlex(step, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError:
        return None
    chain: list[tuple[str, list[str]]] = [("", [])]
    for token in tokens:
        if token in ("&&", "||"):
            chain.append((token, []))
        elif token and set(token) <= set("();<>|&"):
            return None
        else:
            chain[-1][1].append(token)
    if not all(words and words[0] in ("grep", "sed") for _, words in chain):
        return None
    if not any(words[0] == "sed" and "-i" in words for _, words in chain):
        return None
    return chain


def _tree_path(word: str) -> str | None:
    path = posixpath.normpath(word)
    if path.startswith(("/", "../")) or path in (".", "..") or word.startswith("-"):
        return None
    return path


def _sed(args: list[str], current: Callable[[str], bytes | None]) -> dict[str, bytes]:
    """What ``sed ARGS`` (with ``-i``) writes into each file of the tree it names."""
    flags: list[str] = []
    scripts: list[str] = []
    files: list[str] = []
    words = iter(args)
    for word in words:
        if word == "-i":
            continue
        if word in _SED_FLAGS:
            flags.append(word)
        elif word == "-e":
            scripts.append(next(words, ""))
        elif word.startswith("-"):
            return {}
        elif not scripts:
            scripts.append(word)
        else:
            path = _tree_path(word)
            if path is None:
                return {}
            files.append(path)
    out: dict[str, bytes] = {}
    for path in files:
        content = current(path)
        if content is None:
            continue
        command = ["sed", "--sandbox", *flags, *(a for s in scripts for a in ("-e", s))]
        done = subprocess.run(command, input=content, capture_output=True, check=False)
        if done.returncode == 0:
            out[path] = done.stdout
    return out


def _grep(args: list[str], current: Callable[[str], bytes | None]) -> bool:
    """Whether ``grep -q ARGS`` succeeds on the tree's files it names."""
    flags: list[str] = []
    pattern: str | None = None
    paths: list[str] = []
    words = iter(args)
    for word in words:
        if word == "-e":
            pattern = next(words, None)
        elif word.startswith("-"):
            if word not in _GREP_FLAGS:
                return False
            if word not in ("-q", "--quiet", "--silent"):
                flags.append(word)
        elif pattern is None:
            pattern = word
        else:
            paths.append(word)
    if pattern is None:
        return False
    for word in paths:
        path = _tree_path(word)
        content = current(path) if path is not None else None
        if content is None:
            continue
        found = subprocess.run(
            ["grep", "-q", *flags, "-e", pattern], input=content, capture_output=True, check=False
        )
        if found.returncode == 0:
            return True
    return False
