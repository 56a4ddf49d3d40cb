"""One detection of a repository's environment, used by the App, the command line and the
benchmark alike: what the project itself declares, in this order of trust.

1. ``.github/reprobot.yml``: its setup steps (or install command), Python, test command,
   system packages and warm-up commands.
2. The test job of its CI workflows: the Python versions it runs on, what it installs before
   the tests (``pip install``, ``uv sync``, ``poetry install``, ``tox -e``, ``nox -s``,
   ``hatch test``, ``make test``, read as an install plan, never run as written), the Debian
   packages it installs, the project's own scripts it runs first, and its test command.
3. Packaging metadata: what each tool installs for tests and development (``metadata``), tox's,
   nox's and Hatch's test sessions, a requirements file for tests; ``requires-python`` and
   classifiers for Python.

``Detection.sources`` says for each part which source decided it; environment images keep it
in their labels and ``reprobot env list`` shows it.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from reprobot.validation.env.detect.commands import LineReading, Project, metadata_session
from reprobot.validation.env.detect.metadata import ProjectMeta
from reprobot.validation.env.detect.plan import InstallPlan
from reprobot.validation.env.detect.python_choice import choose_python, listed_in_classifiers
from reprobot.validation.env.detect.scm_version import git_version
from reprobot.validation.env.detect.settings_file import (
    CONFIG_PATH,
    EnvSettings,
    read_env_settings,
)
from reprobot.validation.env.detect.workflows import WorkflowHints, workflow_hints
from reprobot.validation.env.envspec import EnvSpec
from reprobot.validation.env.runner_detect import detect_system_packages, detect_test_command
from reprobot.validation.source.snapshot import RepoSnapshot

_REQUIREMENT_CANDIDATES = (
    "requirements/tests.txt",
    "requirements/test.txt",
    "requirements/testing.txt",
    "requirements/dev.txt",
    "requirements-test.txt",
    "requirements-tests.txt",
    "requirements-testing.txt",
    "requirements-dev.txt",
    "test-requirements.txt",
    "tests/requirements.txt",
    "dev-requirements.txt",
    "requirements.txt",
)
_INSTALLABLE = ("pyproject.toml", "setup.py", "setup.cfg")


@dataclass(frozen=True)
class Detection:
    """The environment to build, and for each of its parts what decided it."""

    spec: EnvSpec
    sources: dict[str, str] = field(default_factory=dict)


def _python(settings: EnvSettings, hints: WorkflowHints, meta: ProjectMeta) -> tuple[str, str]:
    if settings.python:
        return settings.python, CONFIG_PATH
    requires = meta.requires_python()
    bound = f", requires-python {requires}" if requires else ""
    if hints.pythons:
        listed = ", ".join(sorted(hints.pythons, key=lambda v: tuple(map(int, v.split(".")))))
        where = hints.job or "CI workflows"
        return choose_python(hints.pythons, requires), f"{where} (Python {listed}){bound}"
    classified = listed_in_classifiers(meta.classifiers())
    if classified:
        return choose_python(classified, requires), f"the project's classifiers{bound}"
    return choose_python((), requires), bound.removeprefix(", ") or "the default"


def _plan(
    hints: WorkflowHints, sessions: LineReading, project: Project
) -> tuple[InstallPlan, tuple[str, ...]]:
    """The CI test job's installs and preparing scripts when it has readable installs, else the
    packaging metadata's and the task runners' base sessions'."""
    if hints.plan:
        return hints.plan, hints.prepare
    plan = project.meta.declared_for_tests().merged(sessions.plan)
    if not plan.requirement_files:
        found = next((r for r in _REQUIREMENT_CANDIDATES if r in project.files), None)
        if found:
            plan = plan.merged(InstallPlan(requirement_files=(found,), sources=(found,)))
    return plan, hints.prepare or sessions.prepare


def _install_command(extras: tuple[str, ...], installable: bool) -> str:
    if not installable:
        return "true"
    if extras:
        return f"python -m pip install -e {shlex.quote('.[' + ','.join(extras) + ']')}"
    return "python -m pip install -e ."


def detect_environment(snapshot: RepoSnapshot, settings: EnvSettings | None = None) -> Detection:
    """The environment of ``snapshot`` (see the module's docstring). ``settings``: the App's
    already-read settings; otherwise they are read from the snapshot's ``.github/reprobot.yml``."""
    files = snapshot.list_files()
    file_set = set(files)

    def read(path: str) -> str | None:
        if path not in file_set:
            return None
        raw = snapshot.read_file(path)
        return raw.decode("utf-8", "replace") if raw is not None else None

    settings = settings if settings is not None else read_env_settings(snapshot)
    meta = ProjectMeta.read(read)
    project = Project(meta, file_set, read)
    workflows = {
        path: read(path) or ""
        for path in files
        if path.startswith(".github/workflows/") and path.endswith((".yml", ".yaml"))
    }
    hints = workflow_hints(workflows, project)
    sources: dict[str, str] = {}
    python, sources["python"] = _python(settings, hints, meta)

    sessions = metadata_session(project)
    plan, prepare = _plan(hints, sessions, project)
    installable = bool(file_set.intersection(_INSTALLABLE))
    pre_install: tuple[str, ...] = ()
    if settings.setup_steps:
        pre_install, install = settings.setup_steps[:-1], settings.setup_steps[-1]
        plan, prepare = InstallPlan(), ()
        sources["install"] = f"{CONFIG_PATH} setup_steps"
    elif settings.install:
        install = settings.install
        sources["install"] = f"{CONFIG_PATH} install"
    else:
        install = _install_command(plan.extras, installable)
        said = [hints.job] if hints.plan and hints.job else []
        sources["install"] = "; ".join(dict.fromkeys(said + list(plan.sources))) or (
            "the project's manifests" if installable else "nothing to install"
        )
    if plan.packages:
        sources["test_requirements"] = "; ".join(plan.sources)
    if prepare:
        sources["prepare"] = (hints.job or "CI workflows") if hints.prepare else "tox or nox"

    if settings.test_command:
        test_cmd, sources["test_command"] = settings.test_command, CONFIG_PATH
    elif hints.test_command:
        test_cmd, sources["test_command"] = hints.test_command, hints.job or "CI workflows"
    elif sessions.test_command:
        # The project's own test session (a unittest discovery of ``*tests.py``, say) decides
        # over "pytest, since pytest is configured", which may collect other files.
        test_cmd = sessions.test_command
        sources["test_command"] = "the project's tox, nox or Hatch test session"
    else:
        test_cmd = detect_test_command(file_set, read)
        sources["test_command"] = "the project's test configuration"

    ci_packages = () if settings.declares_setup() else hints.system_packages
    system_packages = tuple(
        sorted({*detect_system_packages(file_set, read), *ci_packages, *settings.system_packages})
    )
    if ci_packages:
        sources["system_packages"] = hints.job or "CI workflows"
    version = git_version(snapshot)
    if version is not None:
        sources["version"] = version.label()
    spec = EnvSpec(
        python=python,
        requirements=tuple(r for r in plan.requirement_files if r in file_set),
        test_requirements=plan.packages,
        pre_install=pre_install,
        install=install,
        prepare=prepare,
        test_cmd=test_cmd,
        system_packages=system_packages,
        warm=settings.warm_commands,
    )
    return Detection(spec=spec, sources=sources)


__all__ = ["CONFIG_PATH", "Detection", "EnvSettings", "detect_environment", "read_env_settings"]
