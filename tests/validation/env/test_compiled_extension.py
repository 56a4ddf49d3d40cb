"""A project with a C extension, against a real Docker engine: the extension is built in the
environment image, and a tree or a patch that changes its C source is built again before its
tests run, so a verdict never judges a stale binary."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.detect import detect_environment
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.runs.run import run_tests
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot
from tests.support.repos import commit_files, git, make_repo, pyproject

pytestmark = pytest.mark.docker

SETUP = """\
from setuptools import Extension, setup

setup(packages=["speed"], ext_modules=[Extension("speed._speed", ["speed/_speed.c"])])
"""
C_SOURCE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *add(PyObject *self, PyObject *args) {
    long a, b;
    if (!PyArg_ParseTuple(args, "ll", &a, &b)) return NULL;
    return PyLong_FromLong(a + b);
}

static PyMethodDef methods[] = {{"add", add, METH_VARARGS, "a + b"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_speed", NULL, -1, methods};
PyMODINIT_FUNC PyInit__speed(void) { return PyModule_Create(&module); }
"""
TEST = "from speed import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"
PASSED = {"tests/test_speed.py::test_add": Outcome.PASSED}
FAILED = {"tests/test_speed.py::test_add": Outcome.FAILED}


def test_a_c_extension_is_built_and_rebuilt_when_its_source_changes(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    repo = make_repo(
        tmp_path / "speed",
        {
            "pyproject.toml": pyproject("speed"),
            "setup.py": SETUP,
            "speed/__init__.py": "from speed._speed import add\n",
            "speed/_speed.c": C_SOURCE,
            "tests/test_speed.py": TEST,
        },
    )
    good = RepoSnapshot.from_git(repo, "HEAD", "test/speed")
    broken_sha = commit_files(
        repo, {"speed/_speed.c": C_SOURCE.replace("a + b", "a + b + 1")}, "off by one"
    )
    broken = RepoSnapshot.from_git(repo, broken_sha, "test/speed")
    breaking = Patch(git(repo, "diff", good.sha, broken_sha) + "\n", name="off-by-one")
    spec = EnvSpec(python="3.11", env={"RUN": uuid.uuid4().hex})
    env = ensure_environment(docker_client, spec, good, settings)
    made = [env.tag]
    try:
        assert env.compiled
        assert run_tests(docker_client, env, good).outcomes == PASSED
        # The image holds the binary built from the good source; these runs must not use it.
        assert run_tests(docker_client, env, broken).outcomes == FAILED
        assert run_tests(docker_client, env, good, patches=[breaking]).outcomes == FAILED
        # From a trusted commit, the changed source is built once, into a layer.
        layer = ensure_environment(docker_client, spec, broken, settings, on=env)
        made.append(layer.tag)
        assert layer.tag != env.tag
        assert run_tests(docker_client, layer, broken).outcomes == FAILED
    finally:
        for tag in reversed(made):
            docker_client.images.remove(tag, force=True)


CPP_SOURCE = """\
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <numeric>
#include <vector>

static PyObject *total(PyObject *self, PyObject *args) {
    long a, b, c;
    if (!PyArg_ParseTuple(args, "lll", &a, &b, &c)) return NULL;
    std::vector<long> values{a, b, c};
    return PyLong_FromLong(std::accumulate(values.begin(), values.end(), 0L));
}

static PyMethodDef methods[] = {{"total", total, METH_VARARGS, "a + b + c"}, {NULL, NULL, 0, NULL}};
static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_fast", NULL, -1, methods};
PyMODINIT_FUNC PyInit__fast(void) { return PyModule_Create(&module); }
"""


def test_a_cpp_extension_gets_its_compiler_from_detection_and_builds(
    docker_client: docker.DockerClient, tmp_path: Path, settings: Settings
) -> None:
    """The base image has a C compiler only: a C++ source makes detection ask for g++, which
    the environment build installs from Debian's packages before building the extension."""
    repo = make_repo(
        tmp_path / "fast",
        {
            "pyproject.toml": pyproject("fast"),
            "setup.py": (
                "from setuptools import Extension, setup\n\n"
                'setup(packages=["fast"], ext_modules=[Extension("fast._fast", '
                '["fast/_fast.cpp"], language="c++")])\n'
            ),
            "fast/__init__.py": "from fast._fast import total\n",
            "fast/_fast.cpp": CPP_SOURCE,
            "tests/test_fast.py": (
                "from fast import total\n\n\ndef test_total():\n    assert total(1, 2, 3) == 6\n"
            ),
        },
    )
    snapshot = RepoSnapshot.from_git(repo, "HEAD", "test/fast")
    detected = detect_environment(snapshot).spec
    assert detected.system_packages == ("g++",)
    spec = detected.model_copy(update={"env": {**detected.env, "RUN": uuid.uuid4().hex}})
    env = ensure_environment(docker_client, spec, snapshot, settings)
    try:
        assert env.compiled
        assert run_tests(docker_client, env, snapshot).outcomes == {
            "tests/test_fast.py::test_total": Outcome.PASSED
        }
    finally:
        docker_client.images.remove(env.tag, force=True)
