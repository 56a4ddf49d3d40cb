"""Broken unified diffs from model replies, repaired against real file texts."""

from __future__ import annotations

from pathlib import Path

import pytest

from reprobot.generation.errors import DiffFormatError
from reprobot.generation.formats.patch_text import patch_from_files
from reprobot.generation.formats.unified_fallback import (
    draft_changes,
    extract_unified_diffs,
    repair_unified_diff,
)
from reprobot.validation.source.patch import applies_to
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import make_repo

TEST_FILE = """\
import pytest

from durations import parse


def test_hours():
    assert parse("1h") == 3600


class TestUnits:
    def test_minutes(self):
        assert parse("2m") == 120

    def test_seconds(self):
        assert parse("1s") == 1
"""
PATH = "tests/test_parser.py"
FILES = {PATH: TEST_FILE}


def read(path: str) -> str | None:
    return FILES.get(path)


def test_extracts_fenced_and_bare_diffs_from_prose() -> None:
    reply = """Here is the first change:

```diff
--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,3 +1,4 @@
 import pytest
+import re
```

```python
print("not a diff")
```

and a bare one:

--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,2 @@
+def test_new():
+    assert True

That is all.
"""
    assert extract_unified_diffs(reply) == [
        f"--- a/{PATH}\n+++ b/{PATH}\n@@ -1,3 +1,4 @@\n import pytest\n+import re\n",
        "--- /dev/null\n+++ b/tests/test_new.py\n@@ -0,0 +1,2 @@\n"
        "+def test_new():\n+    assert True\n",
    ]


def test_wrong_counts_and_line_numbers_are_repaired() -> None:
    # The header claims line 40 and counts that match nothing; the blank context line lost its
    # leading space. The content alone places the hunk.
    diff = """--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -40,3 +40,99 @@
     def test_minutes(self):
         assert parse("2m") == 120
+
+    def test_zero(self):
+        assert parse("0m") == 0

     def test_seconds(self):
"""
    changes = repair_unified_diff(diff, read)
    before, after = changes[PATH]
    assert before == TEST_FILE
    assert after == TEST_FILE.replace(
        "== 120\n\n    def test_seconds",
        '== 120\n\n    def test_zero(self):\n        assert parse("0m") == 0\n'
        "\n    def test_seconds",
    )


def test_missing_git_headers_and_hunk_numbers_are_tolerated() -> None:
    diff = """--- tests/test_parser.py
+++ tests/test_parser.py
@@ @@
 def test_hours():
-    assert parse("1h") == 3600
+    assert parse("1h") == 3600
+    assert parse("2h") == 7200
"""
    after = repair_unified_diff(diff, read)[PATH][1]
    assert 'assert parse("1h") == 3600\n    assert parse("2h") == 7200\n' in after


def test_whitespace_insensitive_match_reindents_added_lines() -> None:
    # The model dropped the class indentation of every line.
    diff = """--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -14,2 +14,3 @@
 def test_seconds(self):
     assert parse("1s") == 1
+    assert parse("2s") == 2
"""
    after = repair_unified_diff(diff, read)[PATH][1]
    assert after.endswith('        assert parse("1s") == 1\n        assert parse("2s") == 2\n')


def test_hunks_apply_in_order_and_later_hunks_see_earlier_ones() -> None:
    diff = """diff --git a/tests/test_parser.py b/tests/test_parser.py
index 1111111..2222222 100644
--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,2 +1,3 @@
 import pytest
+import re
 
@@ -6,2 +7,3 @@ def test_hours():
 def test_hours():
     assert parse("1h") == 3600
+    assert re.match("h", "h")
"""
    after = repair_unified_diff(diff, read)[PATH][1]
    assert after.startswith("import pytest\nimport re\n\nfrom durations import parse\n")
    assert 'assert parse("1h") == 3600\n    assert re.match("h", "h")\n' in after


def test_context_the_file_does_not_have_is_trimmed_from_the_edges() -> None:
    diff = """--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,4 +1,5 @@
 # a comment the model imagined
 def test_hours():
     assert parse("1h") == 3600
+    assert parse("3h") == 10800
"""
    after = repair_unified_diff(diff, read)[PATH][1]
    assert 'assert parse("1h") == 3600\n    assert parse("3h") == 10800\n' in after
    assert "imagined" not in after


def test_new_file_from_dev_null() -> None:
    diff = """--- /dev/null
+++ b/tests/test_new.py
@@ -0,0 +1,4 @@
+import pytest
+
+def test_new():
+    assert True
"""
    assert repair_unified_diff(diff, read) == {
        "tests/test_new.py": (None, "import pytest\n\ndef test_new():\n    assert True\n")
    }


def test_an_unlocatable_hunk_reports_the_line_it_could_not_find() -> None:
    diff = """--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -6,3 +6,3 @@
 def test_hours():
-    assert parse("60m") == 3600
+    assert parse("60m") == 3601
"""
    with pytest.raises(DiffFormatError) as info:
        repair_unified_diff(diff, read)
    message = str(info.value)
    assert "hunk 1 of tests/test_parser.py" in message
    assert "could not be located" in message
    assert "'assert parse(\"60m\") == 3600' does not occur in tests/test_parser.py" in message


def test_lines_present_but_not_together_are_reported_as_such() -> None:
    diff = """--- a/tests/test_parser.py
+++ b/tests/test_parser.py
@@ -1,2 +1,2 @@
-import pytest
-class TestUnits:
+import os
"""
    with pytest.raises(DiffFormatError, match=r"occur in tests/test_parser\.py, but not together"):
        repair_unified_diff(diff, read)


@pytest.mark.parametrize(
    "target", ["../evil.py", "/etc/evil.py", "tests/../../evil.py", "tests/data.json"]
)
def test_unsafe_paths_are_rejected(target: str) -> None:
    diff = f"--- /dev/null\n+++ {target}\n@@ -0,0 +1 @@\n+x = 1\n"
    with pytest.raises(DiffFormatError):
        repair_unified_diff(diff, read)


def test_deleting_and_editing_missing_files_are_refused() -> None:
    with pytest.raises(DiffFormatError, match="deletes"):
        repair_unified_diff(f"--- a/{PATH}\n+++ /dev/null\n@@ -1 +0,0 @@\n-import pytest\n", read)
    with pytest.raises(DiffFormatError, match="does not exist at this commit"):
        repair_unified_diff(
            "--- a/tests/nope.py\n+++ b/tests/nope.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n", read
        )


def test_a_result_that_does_not_parse_is_refused() -> None:
    diff = f"--- a/{PATH}\n+++ b/{PATH}\n@@ -1 +1,2 @@\n import pytest\n+def broken(:\n"
    with pytest.raises(DiffFormatError, match="not valid Python: SyntaxError at line 2"):
        repair_unified_diff(diff, read)


def test_draft_changes_prefers_the_function_level_format() -> None:
    reply = """```
diff
tests/test_parser.py
insert
EOF
def test_days():
    assert parse("1d") == 86400
end diff
```"""
    after = draft_changes(reply, read)[PATH][1]
    assert after.endswith('\n\n\ndef test_days():\n    assert parse("1d") == 86400\n')


def test_draft_changes_falls_back_to_unified_diffs() -> None:
    diff = f"--- a/{PATH}\n+++ b/{PATH}\n@@ -1 +1,2 @@\n import pytest\n+import re\n"
    reply = f"Patch:\n```diff\n{diff}```"
    after = draft_changes(reply, read)[PATH][1]
    assert after.startswith("import pytest\nimport re\n")


def test_draft_changes_names_both_failures() -> None:
    with pytest.raises(DiffFormatError) as info:
        draft_changes("I could not find the bug, sorry.", read)
    assert "function-level edit: no 'diff'" in str(info.value)
    assert "unified diff: no diff" in str(info.value)
    reply = "diff\ntests/test_parser.py\nmangle\n3\nx = 1\nend diff"
    with pytest.raises(DiffFormatError, match=r"unknown mode 'mangle'.*unified diff"):
        draft_changes(reply, read)


def test_several_diffs_in_one_reply_build_on_each_other(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo", {PATH: TEST_FILE, "durations/__init__.py": ""})
    snapshot = RepoSnapshot.from_git(repo, "HEAD")

    def from_git(path: str) -> str | None:
        data = snapshot.read_file(path)
        return data.decode() if data is not None else None

    reply = f"""First:
```diff
--- a/{PATH}
+++ b/{PATH}
@@ -1,1 +1,2 @@
 import pytest
+import re
```
Then:
```diff
--- a/{PATH}
+++ b/{PATH}
@@ -1,2 +1,3 @@
 import pytest
 import re
+import os
```
"""
    changes = draft_changes(reply, from_git)
    before, after = changes[PATH]
    assert before == TEST_FILE
    assert after.startswith("import pytest\nimport re\nimport os\n\nfrom durations")
    assert applies_to([patch_from_files(changes)], snapshot)
