"""BM25 retrieval over hand-made files and over a real git repository."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from reprobot.generation.llm.retrieval import (
    Chunk,
    CodeIndex,
    chunk_file,
    context_files,
    tokenize,
)
from reprobot.generation.repo.tree_reader import read_python_files
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import git, make_repo

PARSER = '''\
"""Parse durations such as 1h30m."""

import re

UNITS = {"h": 3600, "m": 60, "s": 1}


class DurationError(ValueError):
    """A duration that cannot be read."""


def parse_duration(text):
    total = 0
    for amount, unit in re.findall(r"(\\d+)([hms])", text):
        total += int(amount) * UNITS[unit]
    if not total and text:
        raise DurationError(text)
    return total
'''
FORMAT = """\
def format_seconds(seconds):
    hours, rest = divmod(seconds, 3600)
    return f"{hours}h{rest // 60}m"


def humanizeDelta(seconds):
    return "about " + format_seconds(seconds)
"""
CLI = """\
import argparse


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("value")
    return parser.parse_args(argv)
"""
TEST_PARSER = """\
from durations.parser import parse_duration


def test_parse_hours():
    assert parse_duration("2h") == 7200
"""
TEST_FORMAT = """\
from durations.format import format_seconds


def test_format_seconds():
    assert format_seconds(3600) == "1h0m"
"""
FILES = {
    "src/durations/__init__.py": "",
    "src/durations/parser.py": PARSER,
    "src/durations/format.py": FORMAT,
    "src/durations/cli.py": CLI,
    "tests/test_parser.py": TEST_PARSER,
    "tests/test_format.py": TEST_FORMAT,
    "README.md": "parse_duration reads durations.\n",
}
ISSUE = "parse_duration('1h30m') raises DurationError for minutes after hours"


def test_tokenize_splits_identifiers_and_drops_noise() -> None:
    tokens = tokenize("def parseHTTP_response(self, x): return HTTPServer.get_item(x2)")
    assert tokens == [
        "parse", "http", "response", "parsehttp_response",
        "http", "server", "httpserver",
        "get", "item", "get_item",
        "x2",
    ]  # fmt: skip
    assert "self" not in tokens and "def" not in tokens and "x" not in tokens


def test_chunks_are_top_level_definitions_and_statement_runs() -> None:
    chunks = chunk_file("src/durations/parser.py", PARSER)
    assert [(c.start, c.end) for c in chunks] == [(1, 5), (8, 9), (12, 18)]
    assert chunks[2].text.startswith("def parse_duration(text):")
    assert chunks[2].text.endswith("    return total")
    assert not chunks[0].is_test
    assert all(c.is_test for c in chunk_file("tests/test_parser.py", TEST_PARSER))


def test_decorators_belong_to_their_function() -> None:
    text = "import pytest\n\n\n@pytest.mark.slow\ndef test_x():\n    pass\n"
    assert [(c.start, c.end) for c in chunk_file("tests/test_x.py", text)] == [(1, 1), (4, 6)]


def test_a_file_that_does_not_parse_is_cut_into_windows() -> None:
    text = "def broken(:\n" + "x = 1\n" * 200
    chunks = chunk_file("src/broken.py", text)
    assert [(c.start, c.end) for c in chunks] == [(1, 80), (81, 160), (161, 201)]


def test_a_big_class_is_indexed_by_method() -> None:
    methods = "".join(
        f"    def method_{i}(self):\n" + "        x = 1\n" * 20 + "\n" for i in range(8)
    )
    text = 'class Big:\n    """Doc."""\n\n' + methods
    chunks = chunk_file("src/big.py", text)
    assert chunks[0].text == 'class Big:\n    """Doc."""'
    assert len(chunks) == 9
    assert chunks[1].text.startswith("    def method_0(self):")


def test_search_ranks_the_relevant_function_first() -> None:
    index = CodeIndex.from_files(FILES)
    hits = index.search(ISSUE, k=3)
    # the two definitions the issue names come first
    assert {(c.path, c.start) for c, _ in hits[:2]} == {
        ("src/durations/parser.py", 8),
        ("src/durations/parser.py", 12),
    }
    assert hits[0][1] >= hits[1][1] >= hits[2][1] > 0
    best, _ = index.search("parse_duration loses the minutes", k=1)[0]
    assert (best.path, best.start, best.end) == ("src/durations/parser.py", 12, 18)
    assert {c.path for c, _ in index.search(ISSUE, tests=True)} == {"tests/test_parser.py"}
    assert all(not c.is_test for c, _ in index.search(ISSUE, tests=False))
    assert index.search("nothing matches zebra", k=5) == []


def test_camel_case_queries_find_snake_and_camel_code() -> None:
    index = CodeIndex.from_files(FILES)
    best = index.search("humanize delta output", k=1)[0][0]
    assert best.text.startswith("def humanizeDelta")
    assert index.search("FormatSeconds", k=1)[0][0].path.endswith("format.py")


def test_file_text_and_literal_grep() -> None:
    index = CodeIndex.from_files(FILES)
    assert index.file_text("src/durations/cli.py") == CLI
    assert index.file_text("missing.py") is None
    # regex metacharacters are plain characters; matching is case-sensitive
    assert index.grep("parse_args(") == [
        ("src/durations/cli.py", 7, "    return parser.parse_args(argv)")
    ]
    assert index.grep(".*") == []
    assert index.grep("DURATION") == []
    assert len(index.grep("parse_duration")) == 4
    assert len(index.grep("parse_duration", limit=2)) == 2
    assert ("README.md", 1, "parse_duration reads durations.") in index.grep("reads")


def test_context_files_boost_alternate_and_fit_the_budget() -> None:
    index = CodeIndex.from_files(FILES)
    picked = context_files(ISSUE, index, boost_paths=["src/durations/cli.py", "nope.py"])
    paths = [p for p, _ in picked]
    assert paths[:3] == ["src/durations/cli.py", "src/durations/parser.py", "tests/test_parser.py"]
    assert dict(picked)["src/durations/parser.py"] == PARSER
    assert "src/durations/__init__.py" not in paths

    small = context_files(ISSUE, index, budget_chars=450)
    assert sum(len(t) for _, t in small) <= 450
    assert small[0][0] == "src/durations/parser.py"


def test_context_of_a_large_file_is_an_excerpt_of_its_best_chunks() -> None:
    filler = "".join(f"def helper_{i}():\n    return {i}\n\n\n" for i in range(300))
    big = "import re\n\n\n" + filler + PARSER.split("\n\n\n", 1)[1]
    index = CodeIndex.from_files(
        {"src/durations/parser.py": big, "tests/test_parser.py": TEST_PARSER}
    )
    picked = dict(context_files(ISSUE, index, budget_chars=2_000))
    excerpt = picked["src/durations/parser.py"]
    assert len(excerpt) <= 1_000
    assert excerpt.startswith("import re")
    assert "def parse_duration(text):" in excerpt
    assert "# ... (lines 2-" in excerpt
    assert "helper_150" not in excerpt


def _snapshot_repo(tmp_path: Path) -> RepoSnapshot:
    files = dict(FILES)
    files["src/durations/huge.py"] = "x = 1\n" * 40_000  # 240 kB: skipped
    files[".venv/lib/site.py"] = "def parse_duration():\n    pass\n"  # hidden directory: skipped
    files["tests/data/blob.py"] = "\0binary\0"
    repo = make_repo(tmp_path / "durations", files)
    os.symlink("parser.py", repo / "src" / "durations" / "alias.py")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "symlink")
    return RepoSnapshot.from_git(repo, "HEAD", "demo/durations")


def test_bulk_read_of_a_real_git_repository(tmp_path: Path) -> None:
    snapshot = _snapshot_repo(tmp_path)
    files = read_python_files(snapshot)
    assert files == {p: t for p, t in FILES.items() if p.endswith(".py")}

    index = CodeIndex.build(snapshot)
    best = index.search("parse_duration loses the minutes", k=1)[0][0]
    assert best == Chunk("src/durations/parser.py", 12, 18, best.text, False)
    assert index.grep("huge") == []


def test_bulk_read_of_a_tarball_matches_git(tmp_path: Path) -> None:
    snapshot = _snapshot_repo(tmp_path)
    assert snapshot.path is not None
    tarball = tmp_path / "tree.tar"
    subprocess.run(
        [
            "git",
            "-C",
            str(snapshot.path),
            "archive",
            "--prefix=durations-main/",
            "-o",
            str(tarball),
            "HEAD",
        ],
        check=True,
    )
    from_tar = RepoSnapshot(repo="demo/durations", sha=snapshot.sha, tarball=tarball)
    assert read_python_files(from_tar) == read_python_files(snapshot)


def test_an_index_without_python_files_finds_nothing() -> None:
    index = CodeIndex.from_files({"README.md": "hello"})
    assert index.search("hello") == []
    assert context_files("hello", index) == []
    assert context_files("hello", index, boost_paths=["README.md"]) == [("README.md", "hello")]


def test_line_numbers_follow_python_across_form_feeds() -> None:
    text = "import re\n\x0c\ndef f():\n    return re\n"
    _, func = chunk_file("src/ff.py", text)
    assert (func.start, func.end, func.text) == (3, 4, "def f():\n    return re")
    assert CodeIndex.from_files({"src/ff.py": text}).grep("return") == [
        ("src/ff.py", 4, "    return re")
    ]
