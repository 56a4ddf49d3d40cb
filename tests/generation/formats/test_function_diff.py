"""The function-level edit format: model-style replies parsed and applied to real file texts."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from reprobot.generation.errors import DiffFormatError
from reprobot.generation.formats.function_diff import (
    FunctionEdit,
    apply_function_edits,
    has_function_diff,
    parse_function_diff,
)
from reprobot.generation.formats.patch_text import patch_from_files
from reprobot.validation.source.patch import applies_to
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo

TEST_FILE = '''\
"""Tests of the duration parser."""

from __future__ import annotations

import pytest

from durations import parse


def test_hours():
    assert parse("1h") == 3600


class TestUnits:
    def test_minutes(self):
        assert parse("2m") == 120

    @pytest.mark.parametrize("text", ["1s", "01s"])
    def test_seconds(self, text):
        assert parse(text) == 1


def test_days():
    total = parse("1d")
    assert total == 86400
'''
PATH = "tests/test_parser.py"


def block(path: str, mode: str, location: str, code: str) -> str:
    """One block as a model writes it."""
    return f"diff\n{path}\n{mode}\n{location}\n{code}end diff\n"


def apply(reply: str, files: dict[str, str] | None = None) -> dict[str, tuple[str | None, str]]:
    files = {PATH: TEST_FILE} if files is None else files
    return apply_function_edits(parse_function_diff(reply), files.get)


def test_reply_with_prose_fences_and_several_blocks() -> None:
    reply = """I will add a regression test and fix the method.

```
diff
tests/test_parser.py
REWRITE
L17
    def test_seconds(self):
        assert parse("0s") == 0
end diff
```

Then a new module:

```python
diff
tests/test_zero.py
Insert
EOF
from durations import parse


def test_zero():
    assert parse("0") == 0
end diff
```
That should do it."""
    edits = parse_function_diff(reply)
    assert [(e.path, e.mode, e.location) for e in edits] == [
        (PATH, "rewrite", 17),
        ("tests/test_zero.py", "insert", "EOF"),
    ]
    assert edits[0].code == '    def test_seconds(self):\n        assert parse("0s") == 0\n'
    assert has_function_diff(reply)


def test_tolerates_crlf_tabs_junk_line_numbers_and_a_missing_end() -> None:
    reply = "diff\r\n\r\n`tests/test_parser.py`\r\n\r\ninsert:\r\nline 12\r\n"
    reply += "def test_tab():\r\n\tassert parse('3s') == 3\r\n"
    (edit,) = parse_function_diff(reply)
    assert edit == FunctionEdit(PATH, "insert", 12, "def test_tab():\n\tassert parse('3s') == 3\n")
    after = apply(reply)[PATH][1]
    assert "def test_tab():\n    assert parse('3s') == 3\n" in after


def test_block_ends_at_closing_fence_without_end_marker() -> None:
    reply = "```\ndiff\ntests/test_parser.py\ninsert EOF\ndef test_x():\n    pass\n```\nThanks!"
    (edit,) = parse_function_diff(reply)
    assert edit.location == "EOF"
    assert edit.code == "def test_x():\n    pass\n"


def test_rewrite_a_method_by_name_keeps_the_class_indentation() -> None:
    # The line number is far off; the name finds the method inside the class.
    reply = block(PATH, "rewrite", "3", "def test_minutes(self):\n    assert parse('0m') == 0\n")
    before, after = apply(reply)[PATH]
    assert before == TEST_FILE
    assert (
        "class TestUnits:\n    def test_minutes(self):\n        assert parse('0m') == 0\n" in after
    )
    assert 'parse("2m")' not in after
    assert after.count("def test_seconds") == 1
    ast.parse(after)


def test_rewrite_replaces_decorators_with_the_function() -> None:
    reply = block(PATH, "rewrite", "18", "def test_seconds(self):\n    assert parse('1s') == 1\n")
    after = apply(reply)[PATH][1]
    assert "parametrize" not in after
    assert (
        "    def test_seconds(self):\n        assert parse('1s') == 1\n\n\ndef test_days" in after
    )


def test_rewrite_by_rough_line_number_when_the_name_is_new() -> None:
    # Line 25 is inside test_days (lines 23-25); the new name is not in the file.
    reply = block(
        PATH, "rewrite", "25", "def test_day_total():\n    assert parse('2d') == 172800\n"
    )
    after = apply(reply)[PATH][1]
    assert "def test_days" not in after
    assert after.endswith("def test_day_total():\n    assert parse('2d') == 172800\n")
    assert "def test_hours" in after


def test_rewrite_with_self_picks_the_nearest_method() -> None:
    reply = block(PATH, "rewrite", "14", "def test_mins(self):\n    assert parse('3m') == 180\n")
    after = apply(reply)[PATH][1]
    assert "    def test_mins(self):\n        assert parse('3m') == 180\n" in after
    assert "test_minutes" not in after
    assert "def test_hours" in after


def test_insert_at_bof_goes_after_docstring_future_and_imports() -> None:
    reply = "diff\ntests/test_parser.py\ninsert\nBOF\ndef helper():\n    return 1\nend diff"
    after = apply(reply)[PATH][1]
    head = after.split("def helper")[0]
    assert head.endswith("from durations import parse\n\n\n")
    assert after.index("def helper") < after.index("def test_hours")
    assert "    return 1\n\n\ndef test_hours" in after


def test_insert_snaps_to_a_boundary_between_top_level_statements() -> None:
    # Line 16 is inside class TestUnits: the code goes before or after the class, not into it.
    reply = block(PATH, "insert", "16", "def test_new():\n    assert parse('5s') == 5\n")
    after = apply(reply)[PATH][1]
    tree = ast.parse(after)
    names = [n.name for n in tree.body if isinstance(n, ast.FunctionDef | ast.ClassDef)]
    assert names in (
        ["test_hours", "test_new", "TestUnits", "test_days"],
        ["test_hours", "TestUnits", "test_new", "test_days"],
    )
    cls = next(n for n in tree.body if isinstance(n, ast.ClassDef))
    assert [m.name for m in cls.body if isinstance(m, ast.FunctionDef)] == [
        "test_minutes",
        "test_seconds",
    ]
    assert "\n\n\ndef test_new():\n    assert parse('5s') == 5\n\n\n" in after


def test_leading_imports_of_the_code_join_the_import_block() -> None:
    reply = (
        "diff\ntests/test_parser.py\ninsert\nEOF\nimport re\nimport pytest\n\n"
        "def test_pattern():\n    assert re.match('x', 'x')\nend diff"
    )
    after = apply(reply)[PATH][1]
    assert "from durations import parse\nimport re\n\n\ndef test_hours" in after
    assert after.count("import pytest") == 1
    assert after.endswith(
        "    assert total == 86400\n\n\ndef test_pattern():\n    assert re.match('x', 'x')\n"
    )


def test_edits_refer_to_the_original_line_numbers() -> None:
    # The first edit adds lines above the second one's target; both still land where meant.
    reply = """diff
tests/test_parser.py
insert
BOF
def helper():
    x = 1
    y = 2
    return x + y
end diff
diff
tests/test_parser.py
rewrite
24
def test_days():
    assert parse("1d") == 86400
end diff
"""
    after = apply(reply)[PATH][1]
    assert "total = parse" not in after
    assert after.endswith('def test_days():\n    assert parse("1d") == 86400\n')
    assert after.index("def helper") < after.index("def test_hours")


def test_a_later_rewrite_of_the_same_function_wins() -> None:
    block = "diff\ntests/test_parser.py\nrewrite\n10\ndef test_hours():\n    assert {}\nend diff\n"
    after = apply(block.format("1") + block.format("2"))[PATH][1]
    assert "def test_hours():\n    assert 2\n" in after
    assert "assert 1\n" not in after


def test_a_new_file_is_created() -> None:
    code = "import pytest\n\n\ndef test_new():\n    assert True\n"
    reply = block("tests/test_new.py", "insert", "BOF", code)
    changes = apply(reply)
    assert changes == {
        "tests/test_new.py": (None, "import pytest\n\n\ndef test_new():\n    assert True\n")
    }


def test_rewrite_of_a_missing_file_is_refused() -> None:
    reply = "diff\ntests/test_new.py\nrewrite\n1\ndef test_new():\n    pass\nend diff"
    with pytest.raises(DiffFormatError, match="rewrite of a file that does not exist"):
        apply(reply)


@pytest.mark.parametrize(
    "path",
    [
        "../outside.py",
        "tests/../../outside.py",
        "/etc/evil.py",
        "C:\\x\\evil.py",
        "notes.txt",
        ".git/hooks/x.py",
    ],
)
def test_unsafe_paths_are_rejected(path: str) -> None:
    reply = f"diff\n{path}\ninsert\nEOF\ndef test_x():\n    pass\nend diff"
    with pytest.raises(DiffFormatError):
        parse_function_diff(reply)
    with pytest.raises(DiffFormatError):
        apply_function_edits([FunctionEdit(path, "insert", "EOF", "x = 1\n")], lambda _: None)


def test_paths_are_normalised() -> None:
    (edit,) = parse_function_diff("diff\n./tests//test_parser.py\ninsert\nEOF\nx = 1\nend diff")
    assert edit.path == PATH


@pytest.mark.parametrize(
    ("reply", "reason"),
    [
        ("Here is my answer, without any edit.", "no function-level edit found"),
        ("diff\nrewrite\n12\ndef test_x():\n    pass\nend diff", "has no file path"),
        (
            "diff\ntests/test_parser.py\nreplace\n12\ndef test_x():\n    pass\n",
            "unknown mode 'replace'",
        ),
        ("diff\ntests/test_parser.py\ninsert\nsomewhere\nx = 1\n", "expected a line number"),
        ("diff\ntests/test_parser.py\ninsert\nEOF\nend diff", "has no code"),
    ],
)
def test_malformed_blocks_say_why(reply: str, reason: str) -> None:
    with pytest.raises(DiffFormatError, match=reason):
        parse_function_diff(reply)


def test_a_result_that_does_not_parse_is_refused() -> None:
    reply = "diff\ntests/test_parser.py\ninsert\nEOF\ndef test_broken(:\n    pass\nend diff"
    with pytest.raises(DiffFormatError, match=r"not valid Python: SyntaxError at line \d+"):
        apply(reply)


def test_rewrite_needs_something_to_replace() -> None:
    files = {"tests/test_empty.py": "import pytest\n"}
    reply = "diff\ntests/test_empty.py\nrewrite\n1\ndef test_x():\n    pass\nend diff"
    with pytest.raises(DiffFormatError, match="no function to replace; use insert"):
        apply(reply, files)


def test_crlf_files_keep_their_line_endings() -> None:
    files = {PATH: TEST_FILE.replace("\n", "\r\n")}
    reply = "diff\ntests/test_parser.py\ninsert\nEOF\ndef test_x():\n    pass\nend diff"
    after = apply(reply, files)[PATH][1]
    assert "\n" not in after.replace("\r\n", "")
    assert after.endswith("def test_x():\r\n    pass\r\n")


def test_the_changes_make_a_patch_that_git_applies(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {PATH: TEST_FILE, "durations/__init__.py": ""})
    snapshot = RepoSnapshot.from_git(repo, "HEAD")
    reply = block(PATH, "rewrite", "15", "def test_minutes(self):\n    assert parse('0m') == 0\n")
    reply += block("tests/test_more.py", "insert", "EOF", "def test_more():\n    pass\n")

    def read(path: str) -> str | None:
        data = snapshot.read_file(path)
        return data.decode() if data is not None else None

    changes = apply_function_edits(parse_function_diff(reply), read)
    patch = patch_from_files(changes)
    assert set(patch.files) == {PATH, "tests/test_more.py"}
    assert applies_to([patch], snapshot)


@pytest.mark.parametrize(
    "reply",
    [
        "```diff\ndiff\ntests/test_parser.py\ninsert\nEOF\nx = 1\nend diff\n```",
        "```diff\ntests/test_parser.py\ninsert\nEOF\nx = 1\n```",
        "**diff**\ntests/test_parser.py\n**Insert**\n**EOF**\nx = 1\n**end diff**",
    ],
)
def test_diff_fences_and_markdown_around_the_header(reply: str) -> None:
    assert parse_function_diff(reply) == [FunctionEdit(PATH, "insert", "EOF", "x = 1\n")]


def test_a_fenced_unified_diff_is_not_taken_for_a_block() -> None:
    reply = (
        "```diff\n--- a/tests/test_parser.py\n+++ b/tests/test_parser.py\n@@ -1 +1 @@\n-a\n+b\n```"
    )
    assert not has_function_diff(reply)


def test_a_method_inserted_inside_a_class_joins_the_class() -> None:
    reply = block(PATH, "insert", "17", "def test_zero(self):\n    assert parse('0s') == 0\n")
    after = apply(reply)[PATH][1]
    assert (
        '        assert parse("2m") == 120\n\n    def test_zero(self):\n'
        "        assert parse('0s') == 0\n\n    @pytest.mark.parametrize"
    ) in after


def test_an_insert_into_lines_another_edit_rewrites_is_refused() -> None:
    reply = block(PATH, "rewrite", "14", "class TestUnits:\n    pass\n")
    reply += block(PATH, "insert", "17", "def test_zero(self):\n    pass\n")
    with pytest.raises(DiffFormatError, match="another edit rewrites"):
        apply(reply)
