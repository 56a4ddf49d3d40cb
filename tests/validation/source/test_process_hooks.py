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


@pytest.mark.parametrize(
    ("imports", "line", "named"),
    [
        # Bound under another name, or imported by itself: the name is what Python binds.
        ("import os as _os", "_os.fstat(fd)", "_os.fstat"),
        ("import os as _os", "_os.execv(sys.executable, argv)", "_os.execv"),
        ("from os import execv", "execv(sys.executable, argv)", "execv"),
        ("from os import (\n    dup2,\n    getcwd,\n)", "dup2(r, w)", "dup2"),
        ("import stat", "if stat.S_ISSOCK(os.stat(fd).st_mode):", "stat.S_ISSOCK"),
        # pytest's own classes, configuration and entry points are its machinery.
        ("from pytest import Function", "Function.runtest = swallow", "Function.runtest"),
        ("import pytest as pt", "pt.Item.runtest = swallow", "pt.Item.runtest"),
        ("import pytest", "pytest.main(['-p', 'x'])", "pytest.main"),
        # An attribute named at run time may be any of the module's.
        ("import os", "getattr(os, 'ex' + 'ecv')(path, argv)", "getattr(os, 'ex' + 'ecv'"),
        ("import os", "getattr(os, 'fstat')(fd)", "getattr(os, 'fstat'"),
    ],
)
def test_a_name_is_read_as_python_binds_it(imports: str, line: str, named: str) -> None:
    lines = [*imports.split("\n"), line]
    hooks = process_hooks(_adding("src/pkg/mod.py", *lines))
    # The line using it is named (an import of the name itself is too).
    assert hooks and hooks[-1].line == len(lines) + 1
    assert (hooks[-1].kind, hooks[-1].text) == ("machinery", named)


def test_imports_outside_the_diff_are_read_from_the_file_after_the_change() -> None:
    whole = b"import os as _os\n\nx = 1\n_os.fstat(3)\n"
    patch = _adding("src/pkg/mod.py", "_os.fstat(3)")
    assert process_hooks(patch) == ()
    (hook,) = process_hooks(patch, lambda path: whole if path == "src/pkg/mod.py" else None)
    assert (hook.line, hook.text) == (2, "_os.fstat")


@pytest.mark.parametrize(
    ("imports", "line"),
    [
        ("import pytest", "with pytest.raises(ValueError):"),
        ("from pytest import approx", "assert total == approx(0.3)"),
        ("import sys", "frozen = getattr(sys, 'frozen', False)"),
        ("import os", "size = os.stat(path).st_size"),
        ("import os as _os", "here = _os.path.join(root, name)"),
        ("import os", "os.environ.get('HOME')"),
        ("from os import path", "path.exists(name)"),
    ],
)
def test_what_code_and_tests_ordinarily_use_is_not_a_hook(imports: str, line: str) -> None:
    assert process_hooks(_adding("src/pkg/mod.py", imports, line)) == ()
