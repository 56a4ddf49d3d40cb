"""BM25 retrieval over the Python files of a repository snapshot.

Documents are chunks: each top-level function or class of a file (large classes split by
method, module-level statements between definitions grouped), or 80-line windows of a file that
does not parse. The index answers three needs of the LLM methods: ranked chunks for an issue,
the files to show in a prompt within a character budget, and a literal grep for an agent tool.
"""

from __future__ import annotations

import ast
import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePosixPath

from rank_bm25 import BM25Okapi

from reprobot.generation.repo.tree_reader import read_python_files
from reprobot.validation import UNPARSABLE, RepoSnapshot

WINDOW_LINES = 80
# A class longer than this is indexed method by method: one long document would be diluted by
# BM25's length normalisation and, in a prompt, would not fit as an excerpt.
BIG_CLASS_LINES = 150
GREP_LINE_CHARS = 300

_TEST_DIRS = frozenset({"test", "tests", "testing"})
_STOP = frozenset(
    {
        "and", "args", "as", "assert", "async", "await", "be", "by", "class", "cls", "def",
        "elif", "else", "except", "false", "for", "from", "if", "import", "in", "is", "it",
        "kwargs", "none", "not", "of", "on", "or", "pass", "py", "raise", "return", "self",
        "that", "the", "this", "to", "true", "try", "with", "yield",
    }
)  # fmt: skip
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|\d+")
_PART = re.compile(r"[A-Z]+(?![a-z])|[A-Z]?[a-z]+|\d+")


@dataclass(frozen=True)
class Chunk:
    """Lines ``start``..``end`` (1-based, inclusive) of ``path``, and their text."""

    path: str
    start: int
    end: int
    text: str
    is_test: bool


def source_lines(text: str) -> list[str]:
    """The lines of ``text`` as Python numbers them: only \\n, \\r\\n and \\r end a line
    (``str.splitlines`` also splits at form feeds and other separators, shifting line numbers)."""
    lines = re.split(r"\r\n|\r|\n", text)
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def is_test_path(path: str) -> bool:
    """Whether ``path`` holds tests: pytest's module naming, a conftest, or a tests directory."""
    parts = PurePosixPath(path).parts
    name = parts[-1] if parts else ""
    return (
        name.startswith("test_")
        or name.endswith("_test.py")
        or name == "conftest.py"
        or any(part in _TEST_DIRS for part in parts[:-1])
    )


def tokenize(text: str) -> list[str]:
    """Search tokens of ``text``: identifiers lower-cased whole and split on snake_case and
    camelCase (``parseHTTP_response`` → parsehttp_response, parse, http, response), without
    one-letter tokens and a few stop words."""
    tokens: list[str] = []
    for match in _IDENT.finditer(text):
        word = match.group()
        parts = [p.lower() for piece in word.split("_") for p in _PART.findall(piece)]
        whole = word.lower().strip("_")
        if whole and parts != [whole]:
            parts.append(whole)
        tokens.extend(p for p in parts if len(p) > 1 and p not in _STOP)
    return tokens


# ---------------------------------------------------------------------------------------------
# Chunking


def _start(node: ast.stmt) -> int:
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        return min([node.lineno] + [d.lineno for d in node.decorator_list])
    return node.lineno


def _spans(body: Sequence[ast.stmt]) -> list[tuple[int, int]]:
    """Line spans: one per definition (big classes split), one per run of other statements."""
    spans: list[tuple[int, int]] = []
    run: tuple[int, int] | None = None
    for node in body:
        start, end = _start(node), node.end_lineno or node.lineno
        if not isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            run = (run[0] if run else start, end)
            continue
        if run:
            spans.append(run)
            run = None
        if isinstance(node, ast.ClassDef) and end - start + 1 > BIG_CLASS_LINES:
            inner = _spans(node.body)
            # the class line, its docstring and attributes stay together as the class's header
            first = node.body[0]
            if isinstance(first, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                spans.append((start, _start(first) - 1))
                spans.extend(inner)
            else:
                spans.append((start, inner[0][1]))
                spans.extend(inner[1:])
        else:
            spans.append((start, end))
    if run:
        spans.append(run)
    return spans


def _windows(first: int, last: int) -> list[tuple[int, int]]:
    return [(s, min(s + WINDOW_LINES - 1, last)) for s in range(first, last + 1, WINDOW_LINES)]


def chunk_file(path: str, text: str) -> list[Chunk]:
    """The chunks of one Python file (80-line windows when it does not parse)."""
    lines = source_lines(text)
    if not any(line.strip() for line in lines):
        return []
    try:
        spans = _spans(ast.parse(text).body)
    except UNPARSABLE:
        spans = _windows(1, len(lines))
    test = is_test_path(path)
    chunks = []
    for start, end in spans:
        # a huge run of module-level statements (tables of data) is windowed too
        parts = _windows(start, end) if end - start + 1 > 3 * WINDOW_LINES else [(start, end)]
        for s, e in parts:
            body = "\n".join(lines[s - 1 : e])
            if body.strip():
                chunks.append(Chunk(path, s, e, body, test))
    return chunks


# ---------------------------------------------------------------------------------------------
# The index

_DEFINES = re.compile(r"^[ \t]*(?:async[ \t]+def|def|class)[ \t]+(\w+)", re.M)
# How often a chunk's own name counts in addition to its text: an issue that names a function
# should find the function before the short stubs and imports that merely mention it.
NAME_WEIGHT = 2


def _document(chunk: Chunk) -> list[str]:
    """The tokens BM25 sees for a chunk: its path, its text, and its name again."""
    name = _DEFINES.search(chunk.text)
    extra = tokenize(name.group(1)) * NAME_WEIGHT if name else []
    return tokenize(chunk.path) + extra + tokenize(chunk.text)


class CodeIndex:
    """BM25 over the chunks of a set of files; also their texts and a literal grep."""

    def __init__(self, files: Mapping[str, str]) -> None:
        self._files = dict(files)
        self.chunks: tuple[Chunk, ...] = tuple(
            chunk
            for path in sorted(files)
            if path.endswith(".py")
            for chunk in chunk_file(path, files[path])
        )
        corpus = [_document(c) for c in self.chunks]
        self._bm25: BM25Okapi | None = None
        if any(corpus):
            self._bm25 = BM25Okapi(corpus)
            # Okapi's idf is zero for a term in half of the chunks and floored below that, so
            # small repositories lose most of their signal; the Lucene form stays positive.
            n = len(corpus)
            df = Counter(token for doc in corpus for token in set(doc))
            self._bm25.idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items()}

    @classmethod
    def build(cls, snapshot: RepoSnapshot) -> CodeIndex:
        """The index of a snapshot's Python files, read in bulk (see ``read_python_files``)."""
        return cls(read_python_files(snapshot))

    @classmethod
    def from_files(cls, files: Mapping[str, str]) -> CodeIndex:
        """The index of path → text (only ``.py`` files are chunked; all can be grepped)."""
        return cls(files)

    @property
    def paths(self) -> list[str]:
        return sorted(self._files)

    def scores(self, query: str) -> list[float]:
        """The BM25 score of every chunk (in ``chunks`` order) for ``query``."""
        if self._bm25 is None:
            return [0.0] * len(self.chunks)
        # Unique known tokens: a term repeated in a long issue must not dominate, and unknown
        # terms would cost a pass over every chunk for nothing.
        terms = [t for t in dict.fromkeys(tokenize(query)) if t in self._bm25.idf]
        if not terms:
            return [0.0] * len(self.chunks)
        return [float(s) for s in self._bm25.get_scores(terms)]

    def search(
        self, query: str, k: int = 10, tests: bool | None = None
    ) -> list[tuple[Chunk, float]]:
        """The ``k`` best chunks with a positive score, best first; ``tests`` keeps only test
        chunks (True) or only source chunks (False)."""
        scores = self.scores(query)
        hits = [
            (chunk, score)
            for chunk, score in zip(self.chunks, scores, strict=True)
            if score > 0 and (tests is None or chunk.is_test == tests)
        ]
        hits.sort(key=lambda h: (-h[1], h[0].path, h[0].start))
        return hits[: max(k, 0)]

    def file_text(self, path: str) -> str | None:
        """The text of ``path``, or None when the index does not hold it."""
        return self._files.get(path)

    def grep(self, pattern: str, limit: int = 50) -> list[tuple[str, int, str]]:
        """(path, 1-based line number, line) of lines containing ``pattern`` literally and
        case-sensitively, in path order, at most ``limit``; lines are cut to 300 characters.
        The pattern is never a regular expression: it comes from a model."""
        if not pattern or limit <= 0:
            return []
        found: list[tuple[str, int, str]] = []
        for path in sorted(self._files):
            text = self._files[path]
            if pattern not in text:
                continue
            for number, line in enumerate(source_lines(text), start=1):
                if pattern in line:
                    found.append((path, number, line[:GREP_LINE_CHARS]))
                    if len(found) >= limit:
                        return found
        return found


# ---------------------------------------------------------------------------------------------
# Prompt context

_MIN_EXCERPT = 200


def _interleave(first: Sequence[str], second: Sequence[str]) -> Iterable[str]:
    for i in range(max(len(first), len(second))):
        yield from first[i : i + 1]
        yield from second[i : i + 1]


def _excerpt(text: str, chunks: Sequence[tuple[Chunk, float]], limit: int) -> str:
    """``text`` when it fits in ``limit`` characters; else its best chunks in line order (the
    module's opening statements first, for the imports), gaps marked, within ``limit``."""
    if len(text) <= limit:
        return text
    lines = source_lines(text)
    relevant = [cs for cs in chunks if cs[1] > 0]
    if relevant:
        head = min(chunks, key=lambda cs: cs[0].start)
        rest = sorted(
            (cs for cs in relevant if cs is not head), key=lambda cs: (-cs[1], cs[0].start)
        )
        ordered = [head, *rest]
    else:
        ordered = sorted(chunks, key=lambda cs: cs[0].start)  # a boosted file: from the top
    chosen: list[Chunk] = []
    used = 0
    for chunk, _ in ordered:
        cost = len(chunk.text) + 60  # room for a gap marker
        if used + cost <= limit:
            chosen.append(chunk)
            used += cost
    if not chosen:
        # Not even one chunk fits: the start of the best one, cut at a line boundary.
        best = ordered[0][0] if ordered else Chunk("", 1, len(lines), text, False)
        cut = best.text[:limit]
        return cut[: cut.rfind("\n")] if "\n" in cut else cut
    chosen.sort(key=lambda c: c.start)
    parts: list[str] = []
    line = 1
    for chunk in chosen:
        if chunk.start > line:
            parts.append(f"# ... (lines {line}-{chunk.start - 1} not shown)")
        parts.append(chunk.text)
        line = chunk.end + 1
    if line <= len(lines):
        parts.append(f"# ... (lines {line}-{len(lines)} not shown)")
    return "\n".join(parts)


def context_files(
    query: str,
    index: CodeIndex,
    boost_paths: Sequence[str] = (),
    budget_chars: int = 40_000,
) -> list[tuple[str, str]]:
    """(path, text or excerpt) of the files most relevant to ``query``, within ``budget_chars``.

    Files in ``boost_paths`` come first (in the given order, when the index holds them), then
    files by the summed BM25 score of their chunks, alternating source and test files. No file
    takes more than half the budget: a large file is cut down to its best-scoring chunks.
    """
    scores = index.scores(query)
    by_file: dict[str, list[tuple[Chunk, float]]] = {}
    for chunk, score in zip(index.chunks, scores, strict=True):
        by_file.setdefault(chunk.path, []).append((chunk, score))
    boosted = [p for p in dict.fromkeys(boost_paths) if index.file_text(p) is not None]
    total = {path: sum(s for _, s in hits) for path, hits in by_file.items()}
    ranked = sorted(
        (p for p, s in total.items() if s > 0 and p not in boosted), key=lambda p: (-total[p], p)
    )
    order = boosted + list(
        _interleave(
            [p for p in ranked if not is_test_path(p)], [p for p in ranked if is_test_path(p)]
        )
    )
    cap = max(budget_chars // 2, _MIN_EXCERPT)
    remaining = budget_chars
    picked: list[tuple[str, str]] = []
    for path in order:
        if remaining < _MIN_EXCERPT:
            break
        text = index.file_text(path) or ""
        excerpt = _excerpt(text, by_file.get(path, []), min(cap, remaining))
        if excerpt.strip():
            picked.append((path, excerpt))
            remaining -= len(excerpt)
    return picked
