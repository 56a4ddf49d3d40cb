"""Reprobot's pytest plugin (standard library and pytest only; pytest 3.3 to 9, Python 3.9+).

Loaded with ``-p`` under a module name new in every run, from a folder the tests cannot write,
and first it makes pytest's process one its children cannot trace or read the memory of. It
reports on the file
descriptor the runner handed it (``REPROBOT_REPORT_FD``), which nothing else of the run holds:

- when collection finishes, before any test function runs, the ids pytest collected;
- when the session finishes, right after pytest wrote its JUnit report, that report's text,
  pytest's exit status and the tests marked as expected failures that passed (JUnit shows
  those as plain passes); then it closes the descriptor.

The descriptor is taken out of the environment and is not inherited by the tests' subprocesses.

pytest's start-up loads the plugins (``pytest11`` entry points) of the environment only: this
plugin, loaded with ``-p`` before pytest loads installed plugins, has pytest load them from
metadata outside the tree, or in the tree where the runner found it after putting back the
image's build and any re-install of a trusted build (``trusted_metadata.json`` beside it). A
tree's own ``*.dist-info`` or ``*.egg-info``, wherever the import path finds it, is never read,
on any pytest: old ones read installed plugins through ``pkg_resources``, which also finds
``*.egg`` folders and ``*.egg-link`` files.

A pytest plugin installed editable (the project under test, when it is one) keeps pytest's
assertion rewriting: an editable install that serves its modules through an import finder hides
them from pytest's rewriting hook, so this plugin names them to pytest when it is imported,
before pytest loads the plugins installed with the environment, as a regular install would
have them rewritten.

A test that raises a project's own skip exception (a class named ``Skipped`` or ``SkipTest``
that is not pytest's, such as sympy's ``sympy.utilities.pytest.Skipped``, which its own runner
reports as a skip) is reported skipped, as that project's runner would, not failed.
"""

from __future__ import annotations

import json
import os
from importlib import metadata
from typing import Any

import pytest

PR_SET_DUMPABLE = 4


def _out_of_reach() -> None:
    """Make this process non-dumpable: a process of the same user (what the tests start) can
    then neither ptrace it nor open its ``/proc/<pid>/mem``, ``environ`` or ``fd``, which only
    a capability the sandbox user lacks would allow. It lasts until pytest's process exits;
    what the tests exec is dumpable again, and harmless to it."""
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(PR_SET_DUMPABLE, 0, 0, 0, 0)
    except (OSError, AttributeError):
        pass


_out_of_reach()
TREE = "/work/repo"
TRUSTED_METADATA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "trusted_metadata.json")
_channel: dict[str, Any] = {"fd": None}
_xpassed: list[str] = []


def _send(record: dict[str, Any]) -> None:
    fd = _channel["fd"]
    if fd is None:
        return
    data = (json.dumps(record) + "\n").encode("utf-8", "surrogateescape")
    while data:
        written = os.write(fd, data)
        data = data[written:]


def pytest_configure(config: Any) -> None:
    value = os.environ.pop("REPROBOT_REPORT_FD", None)
    if value and value.isdigit():
        fd = int(value)
        os.set_inheritable(fd, False)
        _channel["fd"] = fd


def _node_id(nodeid: str) -> str:
    """A test's id as pytest 4 and later write it: before 4, a test method's id holds its class's
    instance (``path::Class::()::test``), which the JUnit report and selection by id leave out.
    A parameter's id (after ``[``) is left as it is."""
    head, bracket, params = nodeid.partition("[")
    return head.replace("::()", "") + bracket + params


def pytest_collection_finish(session: Any) -> None:
    if session.config.pluginmanager.getplugin("dsession") is None:
        _send({"collected": [_node_id(item.nodeid) for item in session.items]})


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    # Under xdist the workers collect, each the same ids: the first to finish speaks for all.
    if not _channel.get("xdist_reported"):
        _channel["xdist_reported"] = True
        _send({"collected": [_node_id(i) for i in ids]})


def _trusted_in_tree() -> frozenset[str]:
    try:
        with open(TRUSTED_METADATA, encoding="utf-8") as fh:
            named = json.load(fh)
    except (OSError, ValueError):
        return frozenset()
    return frozenset(n for n in named if isinstance(n, str)) if isinstance(named, list) else frozenset()


def trusted(dist: Any, in_tree: frozenset[str]) -> bool:
    """Whether a distribution's entry points may load: its metadata lies outside the tree, or
    is metadata of the tree the runner named."""
    location = getattr(dist, "_path", None)
    if location is None:
        return False
    path = os.path.abspath(str(location))
    if path != TREE and not path.startswith(TREE + os.sep):
        return True
    return path in in_tree


class _DistFacade:
    """What pytest reads of a plugin's distribution (its header's ``plugins:`` line, the
    ``required_plugins`` setting): pluggy's own facade, whose place differs by version."""

    def __init__(self, dist: Any) -> None:
        self._dist = dist

    @property
    def project_name(self) -> str:
        return str(self._dist.metadata["name"])

    def __getattr__(self, name: str) -> Any:
        return getattr(self._dist, name)


def load_trusted_entry_points(pluginmanager: Any, group: str, name: Any = None) -> int:
    """pluggy's ``load_setuptools_entrypoints``, reading only trusted distributions."""
    in_tree = _trusted_in_tree()
    count = 0
    for dist in list(metadata.distributions()):
        if not trusted(dist, in_tree):
            continue
        for ep in dist.entry_points:
            if ep.group != group or (name is not None and ep.name != name):
                continue
            if pluginmanager.get_plugin(ep.name) or pluginmanager.is_blocked(ep.name):
                continue
            plugin = ep.load()
            pluginmanager.register(plugin, name=ep.name)
            pluginmanager._plugin_distinfo.append((plugin, _DistFacade(dist)))
            count += 1
    return count


def pytest_addhooks(pluginmanager: Any) -> None:
    # Called as this plugin is registered (``-p``), before pytest loads installed plugins.
    def load(group: str, name: Any = None) -> int:
        return load_trusted_entry_points(pluginmanager, group, name)

    pluginmanager.load_setuptools_entrypoints = load


def _editable(dist: Any) -> bool:
    try:
        direct = json.loads(dist.read_text("direct_url.json") or "{}")
    except ValueError:
        return False
    return bool(isinstance(direct, dict) and (direct.get("dir_info") or {}).get("editable"))


def editable_plugin_modules() -> list[str]:
    """The top-level modules of the pytest plugins (``pytest11`` entry points) of editable
    installs."""
    found: list[str] = []
    for dist in metadata.distributions():
        plugins = [e for e in dist.entry_points if e.group == "pytest11"]
        if plugins and _editable(dist):
            found += [e.value.split(":", 1)[0].split(".", 1)[0].strip() for e in plugins]
    return sorted(set(found))


def _keep_assertion_rewriting() -> None:
    register = getattr(pytest, "register_assert_rewrite", None)
    modules = editable_plugin_modules()
    if register is not None and modules:
        register(*modules)


_keep_assertion_rewriting()

_SKIP_NAMES = frozenset({"Skipped", "SkipTest"})


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: Any, call: Any) -> Any:
    outcome = yield
    report = outcome.get_result()
    excinfo = call.excinfo
    if report.failed and excinfo is not None and call.when in ("setup", "call"):
        kind = excinfo.type
        if kind.__name__ in _SKIP_NAMES and not getattr(report, "wasxfail", None):
            path, lineno, _ = item.reportinfo()
            report.outcome = "skipped"
            reason = str(excinfo.value) or kind.__name__
            report.longrepr = (str(path), (lineno or 0) + 1, f"Skipped: {reason}")


def pytest_runtest_logreport(report: Any) -> None:
    if report.when == "call" and report.passed and getattr(report, "wasxfail", None) is not None:
        _xpassed.append(_node_id(report.nodeid))


@pytest.hookimpl(trylast=True)
def pytest_sessionfinish(session: Any, exitstatus: Any) -> None:
    if _channel["fd"] is None:
        return
    junit = None
    path = getattr(session.config.option, "xmlpath", None)
    if path and not hasattr(session.config, "workerinput"):
        try:
            with open(path, encoding="utf-8", errors="surrogateescape") as fh:
                junit = fh.read()
        except OSError:
            junit = None
    _send({"finished": True, "exitstatus": int(exitstatus), "junit": junit, "xpassed": _xpassed})
    os.close(_channel["fd"])
    _channel["fd"] = None
