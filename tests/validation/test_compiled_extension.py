"""A project with a C extension, against a real Docker engine: the extension is built in the
environment image, and a tree or a patch that changes its C source is built again before its
tests run, so a verdict never judges a stale binary."""

from __future__ import annotations

import uuid
from pathlib import Path

import docker
import pytest

from reprobot.settings import Settings
from reprobot.validation.env.env_image import ensure_environment
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.results.testrun import Outcome
from reprobot.validation.sandbox.run import run_tests
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
