"""Why a run tells nothing about a project's tests (pure functions): the run's own error, no
test reported at all, or only test modules that could not import a module the environment
lacks. A run whose tests ran, whatever they did, has no problem; a collection error that is
reported as an outcome counts as a test that ran, unless a missing module caused it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from reprobot.validation.results.testrun import Outcome, TestRun

# How Python says a module is not installed; the name is the project's output, so it is bounded.
_NO_MODULE = re.compile(r"No module named '([\w.]{1,200})'")
_SHOWN = 3


def is_collection_error(test_id: str, outcomes: Mapping[str, Outcome]) -> bool:
    """Whether ``test_id`` is a module that failed to collect, or a selected test of one (an
    error only because its module is)."""
    module = test_id.split("::", 1)[0]
    return outcomes.get(module) is Outcome.ERROR and outcomes.get(test_id) is Outcome.ERROR


def missing_modules(run: TestRun) -> list[str]:
    """The modules the run's collection errors say are not installed, first mention first."""
    found: list[str] = []
    for test_id, outcome in sorted(run.outcomes.items()):
        if "::" in test_id or outcome is not Outcome.ERROR:
            continue
        for name in _NO_MODULE.findall(run.failures.get(test_id, "")):
            if name not in found:
                found.append(name)
    return found


def _listed(names: list[str]) -> str:
    shown = ", ".join(names[:_SHOWN])
    return shown + (f" and {len(names) - _SHOWN} more" if len(names) > _SHOWN else "")


def _nothing_reported(run: TestRun, test_cmd: str) -> str:
    """Why a run that reported no test at all did not."""
    if "timeout" in run.limits_hit:
        return "no test ran: the run passed its time limit before any test was reported"
    missing = sorted(t for t, o in run.outcomes.items() if o is Outcome.MISSING)
    if missing:
        return f"no test ran: `{test_cmd}` reported none of the selected tests ({_listed(missing)})"
    return f"no test ran: `{test_cmd}` collected no test (exit {run.pytest_exit})"


def run_problem(run: TestRun, test_cmd: str) -> str | None:
    """Why ``run`` (of the command ``test_cmd``) tells nothing about the project's tests, in one
    line: its error (an environment that lacks a requirement, a report that cannot be trusted),
    no test reported, or only modules that could not import what the environment lacks. None
    when some test ran, and when a patch did not apply: nothing was to run then, and the
    result says which patch."""
    if run.error:
        return run.error
    if not run.patches_applied:
        return None
    reported = {t: o for t, o in run.outcomes.items() if o is not Outcome.MISSING}
    if not reported:
        return _nothing_reported(run, test_cmd)
    modules = missing_modules(run)
    if modules and all(is_collection_error(t, reported) for t in reported):
        return (
            f"no test ran: the tests cannot import {_listed(modules)}, which the environment "
            "does not have"
        )
    return None
