"""Reprobot's reporter for unittest-family runners (standard library only, Python 3.9+).

Runs, in this process, a test command of the unittest family with a recording result:

- ``python -m unittest ...``;
- a Django project's ``python manage.py test ...``, ``python -m django test ...`` or
  ``django-admin test ...``;
- Django's own ``tests/runtests.py ...`` (run as ``./tests/runtests.py`` or ``python ...``).

It reports as Reprobot's pytest plugin does, on the descriptor the runner handed it
(``REPROBOT_REPORT_FD``): the ids of every test in the suite before the first one runs, then a
JUnit report (xunit1, with ``file`` attributes) and the exit status. Ids have pytest's shape,
``path/to/module.py::Class::test_method``, so one parser reads every runner's outcomes; a module
that fails to import is reported as an error of its file, as pytest reports a collection error.

argv: ``reprobot_unittest.py WORD... [--reprobot-select ID...]``: the test command's words, then
the selected test ids (pytest's shape, or files), which become the runner's dotted labels.
"""

from __future__ import annotations

import json
import os
import re
import runpy
import sys
import time
import traceback
import unittest
import xml.etree.ElementTree as ET
from typing import Any, Iterator

SELECT = "--reprobot-select"
_INVALID_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_HOLDER = re.compile(r"^\w+ \(([\w.]+)\)")

# --- the command: which runner, where its labels are rooted, what it runs ----------------------


def _is_python(word: str) -> bool:
    return re.match(r"^python(\d(\.\d+)?)?$", os.path.basename(word)) is not None


def parse_command(words: list[str]) -> dict[str, Any]:
    """What a unittest-family command runs: ``kind`` (``unittest``, ``django``, ``manage``,
    ``runtests``), the ``target`` (a module name or a script path), its ``args``, and the ``top``
    folder its dotted labels are relative to. Raises ValueError for any other command."""
    rest = list(words)
    if rest and _is_python(rest[0]):
        rest = rest[1:]
        while rest and rest[0].startswith("-") and rest[0] != "-m":
            # Interpreter options (-u, -W ignore, -X dev) come before the module or script.
            rest = rest[2:] if rest[0] in ("-W", "-X") else rest[1:]
    if len(rest) >= 2 and rest[0] == "-m" and rest[1] == "unittest":
        return {"kind": "unittest", "target": "unittest", "args": rest[2:], "top": "."}
    if len(rest) >= 3 and rest[0] == "-m" and rest[1] == "django" and rest[2] == "test":
        return {"kind": "django", "target": "django", "args": rest[2:], "top": "."}
    if len(rest) >= 2 and os.path.basename(rest[0]) == "django-admin" and rest[1] == "test":
        return {"kind": "django", "target": "django", "args": rest[1:], "top": "."}
    if len(rest) >= 2 and os.path.basename(rest[0]) == "manage.py" and rest[1] == "test":
        script = os.path.normpath(rest[0])
        return {"kind": "manage", "target": script, "args": rest[1:], "top": os.path.dirname(script) or "."}
    if rest and os.path.basename(rest[0]) == "runtests.py":
        script = os.path.normpath(rest[0])
        return {"kind": "runtests", "target": script, "args": rest[1:], "top": os.path.dirname(script) or "."}
    raise ValueError("not a unittest-family test command: %r" % (words,))


def label_of(test_id: str, top: str) -> str:
    """A pytest-shaped id (or a file) as the runner's dotted label, relative to ``top``."""
    path, _, rest = test_id.partition("::")
    if path.endswith(".py"):
        path = path[:-3]
    if path.endswith("/__init__"):
        path = path[: -len("/__init__")]
    top = os.path.normpath(top)
    if top != "." and (path == top or path.startswith(top + "/")):
        path = path[len(top) + 1 :]
    parts = [p for p in path.split("/") if p] + [p for p in rest.split("::") if p]
    return ".".join(parts)


def with_labels(command: dict[str, Any], labels: list[str]) -> list[str]:
    """The runner's own arguments with the selection's labels in place of its own."""
    args = list(command["args"])
    if command["kind"] == "unittest":
        if not labels:
            return args
        # Labels and "discover" (with its start folder and pattern) exclude each other;
        # unittest's own options before them (-v, -b, -f) stay.
        head = args[: args.index("discover")] if "discover" in args else args
        return [a for a in head if a.startswith("-")] + labels
    return args + labels


# --- ids and outcomes ---------------------------------------------------------------------------


def _relative(path: str | None) -> str | None:
    if not path:
        return None
    path = os.path.abspath(path)
    if path.endswith((".pyc", ".pyo")):
        path = path[:-1]
    cwd = os.getcwd()
    if not path.startswith(cwd + os.sep):
        return None
    return os.path.relpath(path, cwd).replace(os.sep, "/")


def module_file(module: str, top: str) -> str | None:
    """The file of a dotted module name: an imported module's, or one found under ``top``."""
    loaded = sys.modules.get(module)
    found = _relative(getattr(loaded, "__file__", None))
    if found:
        return found
    base = os.path.join(top, *module.split("."))
    for candidate in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(candidate):
            return os.path.normpath(candidate).replace(os.sep, "/")
    return None


def describe(test: Any, top: str, labels: tuple[str, ...] = ()) -> dict[str, str]:
    """The JUnit fields and the pytest-shaped id of one test (or of a module that failed to load)."""
    cls = type(test)
    method = getattr(test, "_testMethodName", "") or "runTest"
    if cls.__name__ == "_FailedTest":
        # unittest's stand-in for a module (or name) that could not be loaded; loading a label
        # names it by the label's last part only.
        name = next((lb for lb in labels if lb == method or lb.endswith("." + method)), method)
        guess = os.path.normpath(os.path.join(top, *name.split(".")) + ".py").replace(os.sep, "/")
        failed = module_file(name, top) or guess
        return {"id": failed, "classname": "", "name": failed[:-3].replace("/", "."), "file": failed}
    path = module_file(cls.__module__, top)
    qualname = getattr(cls, "__qualname__", cls.__name__)
    if path is None:
        classname = "%s.%s" % (cls.__module__, qualname)
        return {"id": "%s::%s" % (classname, method), "classname": classname, "name": method, "file": ""}
    module = path[:-3].replace("/", ".")
    parts = [path] + qualname.split(".") + [method]
    return {"id": "::".join(parts), "classname": module + "." + qualname, "name": method, "file": path}


def iter_cases(suite: Any) -> Iterator[Any]:
    if isinstance(suite, unittest.TestSuite) or hasattr(suite, "_tests"):
        for item in suite:
            yield from iter_cases(item)
    else:
        yield suite


_RANK = {"passed": 0, "skipped": 1, "xfail": 1, "error": 2, "failed": 3}


class Recorder:
    """Every test's outcome, worst first (a failing subtest fails its test)."""

    def __init__(self, top: str, labels: tuple[str, ...] = ()) -> None:
        self.top = top
        self.labels = labels
        self.cases: dict[str, dict[str, Any]] = {}
        self.order: list[str] = []
        self.started: dict[str, float] = {}
        self.collected: list[str] = []

    def _entry(self, test: Any) -> dict[str, Any]:
        info = describe(test, self.top, self.labels)
        entry = self.cases.get(info["id"])
        if entry is None:
            entry = dict(info, outcome="passed", detail="", time=0.0)
            self.cases[info["id"]] = entry
            self.order.append(info["id"])
        return entry

    def start(self, test: Any) -> None:
        self._entry(test)
        self.started[describe(test, self.top, self.labels)["id"]] = time.monotonic()

    def stop(self, test: Any) -> None:
        entry = self._entry(test)
        began = self.started.pop(entry["id"], None)
        if began is not None:
            entry["time"] = time.monotonic() - began

    def record(self, test: Any, outcome: str, detail: str = "") -> None:
        if type(test).__name__ == "_ErrorHolder":
            self.record_holder(test, detail)
            return
        entry = self._entry(test)
        if _RANK[outcome] >= _RANK[entry["outcome"]]:
            entry["outcome"], entry["detail"] = outcome, detail

    def record_holder(self, holder: Any, detail: str) -> None:
        """A class or module fixture failed (``setUpClass (module.Class)``): its tests error."""
        match = _HOLDER.match(str(getattr(holder, "description", "")))
        scope = match.group(1) if match else ""
        for test_id in self.collected:
            parts = test_id.split("::")
            dotted = ".".join([parts[0][:-3].replace("/", ".")] + parts[1:])
            if scope and ("." + scope + ".") in ("." + dotted + "."):
                if test_id not in self.cases:
                    self.cases[test_id] = self._blank(test_id)
                    self.order.append(test_id)
                self.cases[test_id].update(outcome="error", detail=detail)
        # A fixture whose scope matches no collected test has no test to fail: its traceback is
        # in the log, and the runner's exit status says the run failed.

    def _blank(self, test_id: str) -> dict[str, Any]:
        parts = test_id.split("::")
        module = parts[0][:-3].replace("/", ".") if parts[0].endswith(".py") else parts[0]
        return {"id": test_id, "classname": ".".join([module] + parts[1:-1]), "name": parts[-1],
                "file": parts[0] if parts[0].endswith(".py") else "", "outcome": "passed", "detail": "",
                "time": 0.0}

    def junit(self) -> str:
        suite = ET.Element("testsuite", name="reprobot-unittest", tests=str(len(self.order)))
        counts = {"failed": 0, "error": 0, "skipped": 0}
        for test_id in self.order:
            entry = self.cases[test_id]
            case = ET.SubElement(suite, "testcase", classname=entry["classname"], name=entry["name"],
                                 time="%.3f" % entry["time"])
            if entry["file"]:
                case.set("file", entry["file"])
            detail = _INVALID_XML.sub("?", entry["detail"])
            outcome = entry["outcome"]
            if outcome == "failed":
                ET.SubElement(case, "failure", message=detail.strip().splitlines()[-1][:500] if detail.strip() else "").text = detail
            elif outcome == "error":
                ET.SubElement(case, "error", message=detail.strip().splitlines()[-1][:500] if detail.strip() else "").text = detail
            elif outcome == "skipped":
                ET.SubElement(case, "skipped", message=detail[:500]).text = detail
            elif outcome == "xfail":
                ET.SubElement(case, "skipped", type="pytest.xfail", message="expected failure")
            if outcome in counts:
                counts[outcome] += 1
        suite.set("failures", str(counts["failed"]))
        suite.set("errors", str(counts["error"]))
        suite.set("skipped", str(counts["skipped"]))
        root = ET.Element("testsuites")
        root.append(suite)
        return ET.tostring(root, encoding="unicode")

    def failed(self) -> bool:
        return any(self.cases[t]["outcome"] in ("failed", "error") for t in self.order)


def _text(err: Any) -> str:
    if isinstance(err, tuple) and len(err) == 3:
        return "".join(traceback.format_exception(*err))
    return str(err)


class RecordingResult:
    """A test result that records every outcome and hands everything on to the runner's own."""

    def __init__(self, inner: Any, recorder: Recorder) -> None:
        object.__setattr__(self, "_inner", inner)
        object.__setattr__(self, "_recorder", recorder)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self._inner, name, value)

    # unittest's own method names.
    def startTest(self, test: Any) -> None:
        self._recorder.start(test)
        self._inner.startTest(test)

    def stopTest(self, test: Any) -> None:
        self._recorder.stop(test)
        self._inner.stopTest(test)

    def addSuccess(self, test: Any) -> None:
        self._recorder.record(test, "passed")
        self._inner.addSuccess(test)

    def addFailure(self, test: Any, err: Any) -> None:
        self._recorder.record(test, "failed", _text(err))
        self._inner.addFailure(test, err)

    def addError(self, test: Any, err: Any) -> None:
        self._recorder.record(test, "error", _text(err))
        self._inner.addError(test, err)

    def addSkip(self, test: Any, reason: str) -> None:
        self._recorder.record(test, "skipped", str(reason))
        self._inner.addSkip(test, reason)

    def addExpectedFailure(self, test: Any, err: Any) -> None:
        self._recorder.record(test, "xfail")
        self._inner.addExpectedFailure(test, err)

    def addUnexpectedSuccess(self, test: Any) -> None:
        self._recorder.record(test, "failed", "unexpected success of a test marked as an expected failure")
        self._inner.addUnexpectedSuccess(test)

    def addSubTest(self, test: Any, subtest: Any, err: Any) -> None:
        if err is not None:
            failure = issubclass(err[0], test.failureException)
            self._recorder.record(test, "failed" if failure else "error", "%s\n%s" % (subtest, _text(err)))
        self._inner.addSubTest(test, subtest, err)


# --- the channel and the run --------------------------------------------------------------------


class Channel:
    def __init__(self) -> None:
        value = os.environ.pop("REPROBOT_REPORT_FD", None)
        self.fd = int(value) if value and value.isdigit() else None
        if self.fd is not None:
            os.set_inheritable(self.fd, False)

    def send(self, record: dict[str, Any]) -> None:
        if self.fd is None:
            return
        data = (json.dumps(record) + "\n").encode("utf-8", "surrogateescape")
        while data:
            data = data[os.write(self.fd, data):]

    def close(self) -> None:
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def install(recorder: Recorder, channel: Channel) -> None:
    """Make every ``unittest.TextTestRunner`` (Django's runners use it) report through us."""
    original_run = unittest.TextTestRunner.run

    def run(self: Any, test: Any) -> Any:
        recorder.collected = [
            describe(case, recorder.top, recorder.labels)["id"] for case in iter_cases(test)
        ]
        channel.send({"collected": recorder.collected})
        make = self._makeResult
        self._makeResult = lambda: RecordingResult(make(), recorder)
        return original_run(self, test)

    unittest.TextTestRunner.run = run  # type: ignore[method-assign]


def main(argv: list[str]) -> int:
    words, selection = argv, []
    if SELECT in argv:
        cut = argv.index(SELECT)
        words, selection = argv[:cut], argv[cut + 1:]
    try:
        command = parse_command(words)
    except ValueError as exc:
        print("reprobot: %s (supported: pytest, python -m unittest, Django's manage.py test, "
              "python -m django test, django-admin test, tests/runtests.py)" % exc, file=sys.stderr)
        return 2
    labels = [label_of(s, command["top"]) for s in selection]
    args = with_labels(command, labels)
    recorder = Recorder(command["top"], tuple(labels))
    channel = Channel()
    install(recorder, channel)
    # Django's runner forks one process per core unless told otherwise; outcomes come from here.
    os.environ.setdefault("DJANGO_TEST_PROCESSES", "1")
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or ".") != os.path.dirname(os.path.abspath(__file__))]
    code = 0
    try:
        if command["kind"] in ("unittest", "django"):
            sys.path.insert(0, os.getcwd())
            sys.argv = ["python -m " + command["target"]] + args
            runpy.run_module(command["target"], run_name="__main__", alter_sys=True)
        else:
            script = os.path.abspath(command["target"])
            sys.path.insert(0, os.path.dirname(script))
            sys.argv = [script] + args
            runpy.run_path(script, run_name="__main__")
    except SystemExit as exc:
        # unittest and Django exit with a bool; a message means failure, None success.
        code = int(exc.code) if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    except BaseException:  # noqa: BLE001 (whatever the project's code raises, the report goes out)
        traceback.print_exc()
        code = 1
    if recorder.failed() and code == 0:
        code = 1
    channel.send({"finished": True, "exitstatus": code, "junit": recorder.junit()})
    channel.close()
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
