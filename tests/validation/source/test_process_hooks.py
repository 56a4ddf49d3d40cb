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
        ("from _pytest.runner import runtestprotocol", "machinery"),
        ("def pytest_runtest_call(item):", "machinery"),
        ("sys.meta_path.insert(0, Finder())", "machinery"),
        ('sys.modules["pkg.parse"] = fixed', "machinery"),
        ("sys.modules.update(fixed)", "machinery"),
        ("builtins.open = opener", "machinery"),
        ("libc = ctypes.CDLL(None)", "machinery"),
        ("os.execv(sys.executable, argv)", "machinery"),
        ("os.fstat(fd)", "machinery"),
        ("code = marshal.loads(blob)", "machinery"),
        ('open("/proc/1/mem", "rb")', "machinery"),
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
        # Reading the module table is what ordinary code does; replacing a module is not.
        _adding("src/pkg/mod.py", "module = sys.modules[__name__]"),
        _adding("src/pkg/mod.py", 'if sys.modules["pkg"] == other: pass'),
        _adding("docs/notes.txt", "sys.settrace(None)"),
        Patch("not a diff"),
    ],
)
def test_nothing_else_is(patch: Patch) -> None:
    assert process_hooks(patch) == ()
