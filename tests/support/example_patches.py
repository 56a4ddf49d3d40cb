"""Patches for the example project (``examples/durations``): its fix and a new test."""

from __future__ import annotations

import difflib
from collections.abc import Callable

from tests.support.repos import EXAMPLE


def example_diff(path: str, edit: Callable[[str], str]) -> str:
    """A unified diff of the example project's ``path`` turned into ``edit`` of its text."""
    old = (EXAMPLE / path).read_text()
    lines = difflib.unified_diff(
        old.splitlines(keepends=True), edit(old).splitlines(keepends=True), f"a/{path}", f"b/{path}"
    )
    return "".join(lines)


FIX = """\
--- a/src/durations/parse.py
+++ b/src/durations/parse.py
@@ -10,10 +10,17 @@ def parse_duration(text: str) -> int:
         raise ValueError("empty duration")
     if text.isdigit():
         return int(text)
-    unit = text[-1]
-    if unit not in UNITS:
-        raise ValueError(f"unknown unit {unit!r} in {text!r}")
-    return int(text[:-1]) * UNITS[unit]
+    total, number = 0, ""
+    for char in text:
+        if char.isdigit():
+            number += char
+        elif char in UNITS and number:
+            total, number = total + int(number) * UNITS[char], ""
+        else:
+            raise ValueError(f"unknown unit {char!r} in {text!r}")
+    if number:
+        raise ValueError(f"missing unit after {number!r} in {text!r}")
+    return total
 
 
 def format_duration(seconds: int) -> str:
"""

NEW_TEST = """\
--- /dev/null
+++ b/tests/test_multi.py
@@ -0,0 +1,5 @@
+from durations import parse_duration
+
+
+def test_multi_unit():
+    assert parse_duration("1h30m") == 5400
"""
