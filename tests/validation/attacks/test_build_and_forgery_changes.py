"""Changes that make the drafted test pass while the bug stays in ``parse.py``, through what
loads, builds or reports the code rather than through its text: a compiled extension, build code
that writes a harness file, an in-tree build backend, modules named like those the runner or
pytest import at start-up, and package code that forges the report or rewrites pytest from
inside pytest's own process. Each is judged in a real sandbox, as a fix (``--fix``) and as a pull
request's head (``--head``), and none may be verified; the rows marked as strict expected
failures are verified today, and their reasons say how.

Each row says what stops it: the path or the line a verified change may not hold, named in the
verdict's review (the attack works: the test goes from fail to pass), or a harness that never
runs the change's build code or never loads the module at all ("F->F": the bug is still there);
for the latter, what ``verify`` reads in the change before any test runs still names the path.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sysconfig
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import docker
import pytest

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.judged_changes import (
    MODES,
    commit_all,
    fixed_source,
    judge,
    read_before_running,
    write_files,
)

TEST_ID = "tests/test_multi.py::test_multi_unit"
INIT = "src/durations/__init__.py"

# What replaces the buggy function once it runs: the fix, kept out of the source file.
PATCHER = """\
import durations, durations.parse
from durations._fixed import parse_duration

durations.parse.parse_duration = durations.parse_duration = parse_duration
"""

Build = Callable[[Path, str], None]


class Row(NamedTuple):
    build: Build
    # "F->P": the attack works, and the verdict's review names each of ``named``. Otherwise the
    # kind the drafted test shows when the change's code never runs ("F->F"), and what ``verify``
    # reads in the change before any test runs names each of ``named``.
    outcome: str
    named: tuple[str, ...]
    # Set while the attack comes out verified: how, for the strict expected failure.
    hole: str | None = None


# --- 1. a compiled extension, found before the .py of the same name ---------------------------

EXTENSION_SUFFIX = ".cpython-311-x86_64-linux-gnu.so"
EXTENSION = "src/durations/parse" + EXTENSION_SUFFIX

# An extension module that runs the fixed source in its own namespace when it is imported: the
# import system tries extensions before source files, so parse.py itself never runs.
EXTENSION_C = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static const unsigned char SOURCE[] = {%s, 0};

static struct PyModuleDef parse_module = {PyModuleDef_HEAD_INIT, "parse", NULL, -1, NULL};

PyMODINIT_FUNC PyInit_parse(void) {
    PyObject *module = PyModule_Create(&parse_module);
    if (module == NULL) return NULL;
    PyObject *names = PyModule_GetDict(module);
    if (PyDict_SetItemString(names, "__builtins__", PyEval_GetBuiltins()) < 0) goto fail;
    PyObject *done = PyRun_String((const char *)SOURCE, Py_file_input, names, names);
    if (done == NULL) goto fail;
    Py_DECREF(done);
    return module;
fail:
    Py_DECREF(module);
    return NULL;
}
"""


def _cannot_build_extension() -> str | None:
    """Why an extension for the sandbox's Python (CPython 3.11, x86-64 Linux) cannot be built
    here with the host's compiler and headers, or None."""
    if shutil.which("gcc") is None:
        return "no gcc on this host"
    if sysconfig.get_config_var("EXT_SUFFIX") != EXTENSION_SUFFIX:
        return f"this host's Python builds {sysconfig.get_config_var('EXT_SUFFIX')} extensions"
    if not (Path(sysconfig.get_paths()["include"]) / "Python.h").is_file():
        return "no Python.h for this host's Python"
    return None


# Where no extension can be built, a binary that is not one, at the same path: the import of
# the package then fails ("F->E"), and what is shown is only that the path is named.
CAN_BUILD_EXTENSION = _cannot_build_extension() is None
NOT_AN_EXTENSION = b"\x00\x01not an ELF object\x00" * 8


def compiled_extension(repo: Path, fixed: str) -> None:
    if not CAN_BUILD_EXTENSION:
        (repo / EXTENSION).write_bytes(NOT_AN_EXTENSION)
        return
    with tempfile.TemporaryDirectory() as scratch:
        source = Path(scratch) / "parse.c"
        source.write_text(EXTENSION_C % ", ".join(str(b) for b in fixed.encode()))
        include = sysconfig.get_paths()["include"]
        command = ["gcc", "-shared", "-fPIC", "-O1", f"-I{include}", str(source)]
        subprocess.run([*command, "-o", str(repo / EXTENSION)], check=True)
    assert (repo / EXTENSION).read_bytes()[:4] == b"\x7fELF"


# --- 2. build code that writes a harness file while the project is installed again ------------

# Run by any re-install: it writes a conftest.py at the root and a .pth in the prefix pip
# installs into, either of which swaps the fix in before the tests import the package.
SETUP_PY = """\
import glob
import os

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))
PATCHER = {patcher!r}

with open(os.path.join(HERE, "conftest.py"), "w") as fh:
    fh.write(PATCHER)
with open(os.path.join(HERE, "src", "durations", "_swap.py"), "w") as fh:
    fh.write(PATCHER)
for site in glob.glob("/work/.overlay/lib/python3*/site-packages") + glob.glob(
    "/opt/reprobot/venv/lib/python3*/site-packages"
):
    try:
        with open(os.path.join(site, "durations-swap.pth"), "w") as fh:
            fh.write("import durations._swap\\n")
    except OSError:
        pass

setup()
"""


def setup_py_writes_harness_files(repo: Path, fixed: str) -> None:
    write_files(
        repo,
        {"setup.py": SETUP_PY.format(patcher=PATCHER), "src/durations/_fixed.py": fixed},
    )


# --- 3. an in-tree build backend ------------------------------------------------------------

# setuptools' own backend behind one that first copies the fix over parse.py.
BACKEND = '''\
"""The project's build backend: setuptools', with the sources prepared first."""

import os
import shutil

from setuptools import build_meta as _setuptools
from setuptools.build_meta import *  # noqa: F403

HERE = os.path.dirname(os.path.abspath(__file__))
shutil.copyfile(
    os.path.join(HERE, "src", "durations", "_fixed.py"),
    os.path.join(HERE, "src", "durations", "parse.py"),
)
build_editable = _setuptools.build_editable
'''


def in_tree_backend(repo: Path, fixed: str) -> None:
    pyproject = (repo / "pyproject.toml").read_text()
    pyproject = pyproject.replace(
        'build-backend = "setuptools.build_meta"',
        'build-backend = "build_backend"\nbackend-path = ["."]',
    )
    write_files(
        repo,
        {
            "pyproject.toml": pyproject,
            "build_backend.py": BACKEND,
            "src/durations/_fixed.py": fixed,
        },
    )


# --- 4. modules named like those the runner and pytest import at start-up ---------------------

# What a report plugin loaded as ``-p reprobot_report`` would do; the runner's plugin has a new
# name in every run, so no file of the tree is ever loaded in its place.
FAKE_PLUGIN = PATCHER + "\n\ndef pytest_configure(config):\n    pass\n"


def modules_named_like_the_report_plugin(repo: Path, fixed: str) -> None:
    write_files(
        repo,
        {
            "reprobot_report.py": FAKE_PLUGIN,
            "src/reprobot_report.py": FAKE_PLUGIN,
            "src/durations/_fixed.py": fixed,
        },
    )


# pytest imports iniconfig as it starts, and the run puts the repository's root first on the
# import path: this module is found in place of the real one, swaps the fix in, and then runs the
# real iniconfig in its own namespace so that pytest starts as usual. No line of it names
# pytest's machinery; only its path says what it is.
INICONFIG = '''\
"""Reading of ini-style settings files."""

import os
import sys

import durations
import durations.parse
from durations._fixed import parse_duration

durations.parse.parse_duration = durations.parse_duration = parse_duration

for _entry in sys.path:
    _real = os.path.join(_entry or ".", "iniconfig")
    if os.path.isfile(os.path.join(_real, "__init__.py")):
        break
__path__ = [_real]
__package__ = "iniconfig"
with open(os.path.join(_real, "__init__.py")) as _fh:
    exec(compile(_fh.read(), os.path.join(_real, "__init__.py"), "exec"))
'''


def module_named_like_a_start_up_module(repo: Path, fixed: str) -> None:
    write_files(repo, {"iniconfig.py": INICONFIG, "src/durations/_fixed.py": fixed})


# --- 5. package code that forges pytest's outcome from inside pytest's process -----------------

# A passing JUnit report of the drafted test, as pytest would write it.
PASSING_JUNIT = (
    '<?xml version="1.0" encoding="utf-8"?><testsuites><testsuite name="pytest" errors="0" '
    'failures="0" skipped="0" tests="1"><testcase classname="tests.test_multi" '
    'name="test_multi_unit" file="tests/test_multi.py" time="0.001"/></testsuite></testsuites>'
)
# The records Reprobot's plugin writes on the report channel, for a run in which it passed.
FORGED_RECORDS = "".join(
    json.dumps(record) + "\n"
    for record in (
        {"collected": [TEST_ID]},
        {"finished": True, "exitstatus": 0, "junit": PASSING_JUNIT, "xpassed": []},
    )
)

# Appended to the package's __init__.py; it acts only in a run of the drafted test. The report
# channel is the one socket pytest holds: it is found by the kind of each descriptor, a passing
# report goes into it, the plugin's own records go to /dev/null from then on, and pytest's exit
# status becomes 0 once coverage.py has saved its data.
CHANNEL_FORGERY = """
import atexit
import os
import stat
import sys

_FORGED = {records!r}


def _report_channel():
    for fd in range(3, 256):
        try:
            if stat.S_ISSOCK({stat_call}(fd).st_mode):
                return fd
        except OSError:
            continue
    return None


if any("test_multi" in arg for arg in sys.argv):
    _fd = _report_channel()
    if _fd is not None:
        os.write(_fd, _FORGED.encode())
        os.dup2(os.open(os.devnull, os.O_WRONLY), _fd)
        atexit.register(os._exit, 0)
"""

# Appended to the package's __init__.py: pytest's process becomes a writer of a passing report,
# with pytest's process id (the one the runner trusts) and the channel kept open across exec.
EXEC_FORGERY = """
import os
import sys
{import_exec}
_WRITER = "FORGED = %r\\n" % {records!r} + (
    "import os, stat\\n"
    "for fd in range(3, 256):\\n"
    "    try:\\n"
    "        if stat.S_ISSOCK(os.stat(fd).st_mode):\\n"
    "            os.write(fd, FORGED.encode())\\n"
    "    except OSError:\\n"
    "        pass\\n"
)

if any("test_multi" in arg for arg in sys.argv):
    for fd in range(3, 256):
        try:
            os.set_inheritable(fd, True)
        except OSError:
            pass
    {exec_call}(sys.executable, [sys.executable, "-c", _WRITER])
"""

# Appended to the package's __init__.py: pytest's test function item runs each test and
# swallows whatever it raises, so that every test it runs passes.
RUNTEST_FORGERY = """
try:
    {import_item}
except ImportError:
    _Function = None

if _Function is not None:
    _runtest = _Function.runtest

    def _lenient(self):
        try:
            _runtest(self)
        except Exception:
            pass

    _Function.runtest = _lenient
"""


def _append_to_package(repo: Path, code: str) -> None:
    init = repo / INIT
    init.write_text(init.read_text() + code)


def report_channel_found_by_fstat(repo: Path, fixed: str) -> None:
    _append_to_package(repo, CHANNEL_FORGERY.format(records=FORGED_RECORDS, stat_call="os.fstat"))


def exec_under_pytests_pid(repo: Path, fixed: str) -> None:
    _append_to_package(
        repo,
        EXEC_FORGERY.format(records=FORGED_RECORDS, import_exec="", exec_call="os.execv"),
    )


def runtest_of_pytests_internals(repo: Path, fixed: str) -> None:
    _append_to_package(
        repo,
        RUNTEST_FORGERY.format(import_item="from _pytest.python import Function as _Function"),
    )


def report_channel_found_by_stat(repo: Path, fixed: str) -> None:
    # The same forgery, with os.stat given a descriptor: what os.fstat does, by another name.
    _append_to_package(repo, CHANNEL_FORGERY.format(records=FORGED_RECORDS, stat_call="os.stat"))


def exec_imported_by_name(repo: Path, fixed: str) -> None:
    _append_to_package(
        repo,
        EXEC_FORGERY.format(
            records=FORGED_RECORDS,
            import_exec="from os import execv",
            exec_call="execv",
        ),
    )


def runtest_of_pytests_public_api(repo: Path, fixed: str) -> None:
    _append_to_package(
        repo, RUNTEST_FORGERY.format(import_item="from pytest import Function as _Function")
    )


# Each was once missed by rules that read names by their spelling: ``os.stat`` where only
# ``os.fstat`` was named, ``from os import execv``, pytest's public ``Function``. Names are now
# read as Python binds them, and a run that loses its coverage on one side only is named too.
REACHES = "it adds code that reaches into what imports and runs the tests"

ATTACKS: dict[str, Row] = {
    "compiled-extension": Row(
        compiled_extension, "F->P" if CAN_BUILD_EXTENSION else "F->E", (EXTENSION,)
    ),
    "setup-py-writes-conftest-and-pth": Row(setup_py_writes_harness_files, "F->F", ("setup.py",)),
    "in-tree-build-backend": Row(in_tree_backend, "F->F", ("pyproject.toml", "build_backend.py")),
    "named-like-the-report-plugin": Row(
        modules_named_like_the_report_plugin,
        "F->F",
        ("reprobot_report.py (a new top-level", "src/reprobot_report.py (a new top-level"),
    ),
    "named-like-a-start-up-module": Row(
        module_named_like_a_start_up_module, "F->P", ("iniconfig.py (a new top-level",)
    ),
    "report-channel-by-fstat": Row(report_channel_found_by_fstat, "F->P", (REACHES,)),
    "exec-under-pytests-pid": Row(exec_under_pytests_pid, "F->P", (REACHES,)),
    "runtest-of-pytest-internals": Row(runtest_of_pytests_internals, "F->P", ("(_pytest",)),
    "report-channel-by-stat": Row(report_channel_found_by_stat, "F->P", (REACHES,)),
    "exec-imported-by-name": Row(exec_imported_by_name, "F->P", (REACHES,)),
    "runtest-of-pytest-public-api": Row(runtest_of_pytests_public_api, "F->P", (REACHES,)),
}


def _cases() -> list[object]:
    return [
        pytest.param(
            name,
            id=name,
            marks=[pytest.mark.xfail(strict=True, reason=row.hole)] if row.hole else [],
        )
        for name, row in sorted(ATTACKS.items())
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("name", _cases())
def test_a_change_that_loads_builds_or_forges_is_never_verified(
    docker_client: docker.DockerClient,
    example_env: EnvImage,
    clone: Path,
    name: str,
    mode: str,
) -> None:
    row = ATTACKS[name]
    base = RepoSnapshot.from_git(clone, "HEAD")
    row.build(clone, fixed_source(clone))
    head = commit_all(clone)
    verdict = judge(docker_client, example_env, base, head, mode)
    kinds = {k: t.kind for k, t in verdict.transitions.items()}
    assert not verdict.success and verdict.status != "verified", (kinds, verdict.reasons)
    if row.hole:
        return
    if row.outcome != "F->P":
        # Its build code never ran and nothing loaded its module: the bug is still there ...
        assert kinds == {TEST_ID: row.outcome}, verdict.reasons
        assert verdict.status == "not_verified"
        # ... and had it passed, what it holds would have been named.
        concerns = read_before_running(base, head, mode)
        assert all(any(n in c for c in concerns) for n in row.named), concerns
        return
    # The attack works: the drafted test passes with the bug still in parse.py ...
    assert kinds == {TEST_ID: "F->P"}, verdict.reasons
    # ... and the verdict names the path or the line a verified change may not hold.
    assert verdict.status == "needs_review"
    assert all(any(n in c for c in verdict.review) for n in row.named), verdict.review
