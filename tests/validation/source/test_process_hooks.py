"""Lines a fix adds that reach into the test process: the pure scan."""

from __future__ import annotations

import pytest

from reprobot.validation.source.patch import Patch
from reprobot.validation.source.process_hooks import process_hooks


def _adding(path: str, *lines: str) -> Patch:
    body = "".join(f"+{line}\n" for line in lines)
    return Patch(
        f"--- a/{path}\n+++ b/{path}\n@@ -1 +1,{len(lines) + 1} @@\n x = 1\n{body}", "fix.diff"
    )


@pytest.mark.parametrize(
    ("line", "kind"),
    [
        ("sys.settrace(None)", "tracing"),
        ("threading.setprofile(f)", "tracing"),
        ("sys . monitoring . set_events(1, 0)", "tracing"),
        ("cov = coverage.Coverage()", "tracing"),
        ('fd = int(os.environ["REPROBOT_REPORT_FD"])', "report"),
        ('open("/proc/self/fd/3", "w")', "report"),
        ("import reprobot_report", "report"),
        ("config.option.xmlpath = None", "report"),
    ],
)
def test_a_line_that_reaches_into_the_test_process_is_found(line: str, kind: str) -> None:
    hooks = process_hooks(_adding("src/pkg/mod.py", "import sys", line))
    assert [(h.path, h.line, h.kind) for h in hooks] == [("src/pkg/mod.py", 3, kind)]
    assert hooks[0].describe() == f"src/pkg/mod.py line 3 ({hooks[0].text})"


@pytest.mark.parametrize(
    "patch",
    [
        _adding("src/pkg/mod.py", "# sys.settrace(None) is not called here"),
        _adding("src/pkg/mod.py", "settings = load()"),
        _adding("docs/notes.txt", "sys.settrace(None)"),
        Patch("not a diff"),
    ],
)
def test_nothing_else_is(patch: Patch) -> None:
    assert process_hooks(patch) == ()
