"""What one command line of a CI job, a task-runner session or a Makefile does for the tests:
what it installs, and the test command it runs.

Install commands are read, never run as written: ``pip install`` (also as ``python -m pip`` and
``uv pip``), ``uv sync``, ``poetry install``, ``pdm install``/``sync`` become an install plan
of the project's extras, requirement files and requirements; ``tox``, ``nox``, ``hatch test``,
``hatch run`` and ``make`` lead to the session or target they name, whose own lines are read
the same way. A test command is kept only when a sandbox can report on it as it is.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Collection
from dataclasses import dataclass, field, replace

from reprobot.validation.env.detect.metadata import ProjectMeta, Reader, pick
from reprobot.validation.env.detect.plan import InstallPlan
from reprobot.validation.env.detect.sessions import (
    make_rule,
    nox_session,
    pip_words,
    tox_session,
)
from reprobot.validation.env.runner_detect import usable_command
from reprobot.validation.env.test_commands import ASSIGNMENT, PYTHON_PROGRAM, runner_of

# Wrappers that only choose the environment a command runs in; the sandbox has its own.
_WRAPPERS = (("poetry", "run"), ("pipenv", "run"), ("pdm", "run"))
# Words that open the body of a shell condition or loop: ``if [ -f r.txt ]; then pip install``.
_SHELL_KEYWORDS = frozenset({"then", "do", "else", "{", "(", "!", "time", "sudo"})
_MAX_DEPTH = 3
_MAKE_VARIABLE = re.compile(r"\$[({][^)}]*[)}]")
# Make targets that run tests, whatever their recipe reads as: never run as preparation.
_TEST_TARGETS = frozenset({"test", "tests", "check", "pytest", "unittest", "coverage", "cov"})
_DEBIAN_NAME = re.compile(r"^[a-z0-9][a-z0-9+.-]+$")
# unittest's dotted names of one test module, class or method.
_DOTTED_TEST = re.compile(r"^\w+(\.\w+)*\.[Tt]est\w*(\.\w+)*$")


@dataclass(frozen=True)
class Project:
    """What reading a command line may consult: the manifests and the tree."""

    meta: ProjectMeta
    files: Collection[str]
    read: Reader


@dataclass(frozen=True)
class LineReading:
    """What a line installs, whether it runs the tests, the test command usable as it is, and
    the project's own scripts it runs before the tests (``prepare``: a data download, code
    generation), which make files the tests need."""

    plan: InstallPlan = field(default_factory=InstallPlan)
    runs_tests: bool = False
    test_command: str | None = None
    prepare: tuple[str, ...] = ()
    # Debian packages it installs with apt (a library a dependency builds against).
    system_packages: tuple[str, ...] = ()
    # Whether the tests it runs are a few named ones rather than the suite.
    narrow: bool = False

    def merged(self, later: LineReading) -> LineReading:
        # What runs after the tests (a coverage upload, a report) prepares nothing for them.
        prepare = self.prepare if self.runs_tests else self.prepare + later.prepare
        return LineReading(
            self.plan.merged(later.plan),
            self.runs_tests or later.runs_tests,
            self.test_command or later.test_command,
            tuple(dict.fromkeys(prepare)),
            tuple(dict.fromkeys(self.system_packages + later.system_packages)),
            self.narrow if self.runs_tests else later.narrow,
        )


NOTHING = LineReading()


def split_line(line: str) -> list[list[str]]:
    """The simple commands of a shell line (split at ``&&``, ``;`` and ``||``), each as words;
    a part that does not split as shell words is left out."""
    out = []
    for part in re.split(r"&&|\|\||;", line):
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            continue
        while words and (ASSIGNMENT.match(words[0]) or words[0] in _SHELL_KEYWORDS):
            words = words[1:]
        if words:
            out.append(words)
    return out


def read_line(line: str, project: Project, where: str, depth: int = 0) -> LineReading:
    reading = NOTHING
    for words in split_line(line):
        reading = reading.merged(read_words(words, line, project, where, depth))
    return reading


def _program(words: list[str]) -> tuple[str, list[str]]:
    """The program and its arguments, ``python -m X`` read as program X."""
    name = words[0].rsplit("/", 1)[-1]
    if PYTHON_PROGRAM.match(name) and len(words) > 2 and words[1] == "-m":
        return words[2], words[3:]
    return name, words[1:]


def read_words(
    words: list[str], line: str, project: Project, where: str, depth: int
) -> LineReading:
    program, args = _program(words)
    for wrapper in _WRAPPERS:
        if [program, *args[:1]] == list(wrapper):
            return read_words(args[1:], line, project, where, depth) if len(args) > 1 else NOTHING
    if program == "uv" and args[:1] == ["run"]:
        return _uv_run(args[1:], line, project, where, depth)
    if program == "uv" and args[:2] == ["pip", "install"]:
        return LineReading(pip_words(args[2:], project.meta, where))
    if program == "pip" and args[:1] == ["install"]:
        return LineReading(_pip_install(args[1:], project, where))
    if program == "uv" and args[:1] == ["sync"]:
        return LineReading(_uv_sync(args[1:], project.meta, where))
    if program == "poetry" and args[:1] == ["install"]:
        return LineReading(_poetry_install(args[1:], project.meta, where))
    if program == "pdm" and args[:1] in (["install"], ["sync"]):
        return LineReading(_pdm_install(args[1:], project.meta, where))
    if program == "coverage" and args[:1] == ["run"]:
        rest = [a for a in args[1:] if not a.startswith("--")]
        return read_words(["python", *rest], line, project, where, depth)
    if depth >= _MAX_DEPTH:
        return NOTHING
    if program == "tox":
        return _tox(args, project, depth)
    if program == "nox":
        return _nox(args, project, depth)
    if program == "hatch":
        return _hatch(args, project, where, depth)
    if program == "make":
        return _make(args, project, depth)
    script = _own_script(words, project)
    if script is not None:
        return LineReading(prepare=(script,))
    test_script = _test_script(words, project)
    if test_script is not None:
        return test_script
    if program in ("apt-get", "apt") and args[:1] == ["install"]:
        return LineReading(system_packages=tuple(a for a in args[1:] if _DEBIAN_NAME.match(a)))
    if runner_of(shlex.join(words)) is not None:
        # A line with shell syntax, CI expressions or variables means something only where it ran.
        usable = None if re.search(r"[$`><|&;]", line) else usable_command(shlex.join(words))
        return LineReading(runs_tests=True, test_command=usable, narrow=_names_tests(words))
    return NOTHING


def _names_tests(words: list[str]) -> bool:
    """Whether a test command runs a few tests it names (``tests/test_x.py::test_y``, unittest's
    ``tests.test_meta.TestVersion``) rather than the suite."""
    return any("::" in w or _DOTTED_TEST.match(w) for w in words if not w.startswith("-"))


# setup.py commands that install, package or test rather than make files in the tree.
_SETUP_PY_NOT_PREPARING = frozenset(
    {"install", "develop", "test", "sdist", "bdist_wheel", "bdist", "upload", "check", "clean"}
)


def _script_of(words: list[str], project: Project) -> str | None:
    """The tree's Python file ``python path/to/script.py ...`` runs, if it runs one."""
    program = words[0].rsplit("/", 1)[-1]
    if not PYTHON_PROGRAM.match(program) or len(words) < 2:
        return None
    script = words[1].removeprefix("./")
    return script if script in project.files and script.endswith(".py") else None


def _is_test_file(path: str) -> bool:
    parts = path.split("/")
    return parts[-1].startswith("test") or any(
        p in ("test", "tests", "testing") for p in parts[:-1]
    )


def _own_script(words: list[str], project: Project) -> str | None:
    """``python path/to/script.py ...`` for a script of the project's tree that is no test
    (``setup.py`` with a command that makes files, ``build_ext --inplace`` say), as a command
    line; else None."""
    script = _script_of(words, project)
    if script is None or _is_test_file(script):
        return None
    if script == "setup.py" and (len(words) < 3 or words[2] in _SETUP_PY_NOT_PREPARING):
        return None
    return shlex.join(["python", script, *words[2:]])


def _test_script(words: list[str], project: Project) -> LineReading | None:
    """``python tests/test.py``: a test file run as a script. One that runs unittest is run by
    unittest's discovery of that file, which the sandbox reports on; another says nothing a
    sandbox can read, but is still the test line."""
    script = _script_of(words, project)
    if script is None or not _is_test_file(script):
        return None
    folder, _, name = script.rpartition("/")
    if re.search(r"^\s*(import unittest|from unittest import)", project.read(script) or "", re.M):
        command = ["python", "-m", "unittest", "discover", "-s", folder or ".", "-p", name]
        return LineReading(runs_tests=True, test_command=shlex.join(command))
    return LineReading(runs_tests=True)


def _option_values(args: list[str], *names: str) -> list[str]:
    """The values of ``--name VALUE``, ``--name=VALUE`` (and short ``-X VALUE``) options."""
    values = []
    for index, arg in enumerate(args):
        for name in names:
            if arg == name and index + 1 < len(args):
                values.append(args[index + 1])
            elif arg.startswith(name + "=") and name.startswith("--"):
                values.append(arg.split("=", 1)[1])
    return [v for part in values for v in re.split(r"[,\s]+", part) if v]


def _pip_install(args: list[str], project: Project, where: str) -> InstallPlan:
    plan = pip_words(args, project.meta, where)
    for group in _option_values(args, "--group"):
        # pip's ``--group [path:]name``: groups of this project's pyproject.toml only.
        path, _, name = group.rpartition(":")
        if path in ("", "pyproject.toml", "./pyproject.toml"):
            plan = plan.merged(project.meta.dependency_group(name))
    return plan


def _default_dev_group(meta: ProjectMeta) -> InstallPlan:
    plan = InstallPlan()
    for group in meta.uv_default_groups():
        plan = plan.merged(meta.dependency_group(group))
    return plan


def _uv_sync(args: list[str], meta: ProjectMeta, where: str) -> InstallPlan:
    """``uv sync``: the project, its default group ``dev`` unless told otherwise, and the
    extras and groups it names."""
    extras = tuple(_option_values(args, "--extra"))
    if "--all-extras" in args:
        extras += tuple(sorted(meta.extras()))
    plan = InstallPlan(extras=extras, sources=(where,))
    if not {"--no-dev", "--only-dev", "--no-default-groups"} & set(args):
        plan = plan.merged(_default_dev_group(meta))
    groups = _option_values(args, "--group", "--only-group")
    if "--all-groups" in args:
        groups += list(meta.dependency_groups())
    for group in groups:
        plan = plan.merged(meta.dependency_group(group))
    return plan


def _uv_run(args: list[str], line: str, project: Project, where: str, depth: int) -> LineReading:
    """``uv run [options] COMMAND``: ``uv sync`` with the same options, then the command."""
    options: list[str] = []
    index = 0
    while index < len(args) and args[index].startswith("-"):
        takes_value = args[index] in (
            "--extra",
            "--group",
            "--with",
            "--python",
            "-p",
            "--only-group",
        )
        options += args[index : index + (2 if takes_value else 1)]
        index += 2 if takes_value else 1
    synced = LineReading(_uv_sync(options, project.meta, where))
    command = args[index:]
    return synced.merged(read_words(command, line, project, where, depth)) if command else synced


def _poetry_install(args: list[str], meta: ProjectMeta, where: str) -> InstallPlan:
    only = _option_values(args, "--only")
    groups = only or meta.poetry_default_groups() + _option_values(args, "--with")
    groups = [g for g in groups if g not in _option_values(args, "--without") and g != "main"]
    extras = tuple(_option_values(args, "--extras", "-E"))
    if "--all-extras" in args:
        extras += tuple(sorted(meta.extras()))
    plan = InstallPlan(extras=extras, sources=(where,))
    for group in groups:
        plan = plan.merged(meta.poetry_group(group))
    return plan


def _pdm_install(args: list[str], meta: ProjectMeta, where: str) -> InstallPlan:
    groups = _option_values(args, "--group", "-G")
    if "--prod" not in args and "--production" not in args and not groups:
        groups = list(meta.pdm_groups())
    plan = InstallPlan(sources=(where,))
    for group in groups:
        plan = plan.merged(meta.pdm_group(group) or meta.dependency_group(group))
        if group in meta.extras():
            plan = plan.merged(InstallPlan(extras=(group,)))
    return plan


def _session_reading(
    name: str, plan: InstallPlan, commands: tuple[str, ...], project: Project, depth: int
) -> LineReading:
    reading = LineReading(plan)
    for command in commands:
        reading = reading.merged(read_line(command, project, name, depth + 1))
    return reading


def _tox(args: list[str], project: Project, depth: int) -> LineReading:
    if args[:1] in (["run"], ["r"], ["run-parallel"], ["p"]):
        args = args[1:]
    envs = _option_values(args, "-e", "--env")
    # tox -e py311,lint: the environment that runs tests is the one to read; an expression
    # (py${{ matrix.python }}) or a Python factor alone means the base environment.
    named = [e for e in envs if not re.fullmatch(r"py\d*|py3\d*|ALL", e) and "$" not in e]
    for env in named or [None]:  # type: ignore[list-item]
        session = tox_session(project.read, project.meta, env)
        if session is None:
            continue
        reading = _session_reading(
            f"tox {session.name}", session.plan, session.commands, project, depth
        )
        if reading.runs_tests:
            return reading
    return NOTHING


def _nox(args: list[str], project: Project, depth: int) -> LineReading:
    names = _option_values(args, "-s", "--session", "--sessions") or [None]  # type: ignore[list-item]
    for named in names:
        # A session chosen by a CI expression: the noxfile's test session stands in for it.
        session = nox_session(project.read, project.meta, None if named and "$" in named else named)
        if session is not None:
            return _session_reading(
                f"nox {session.name}", session.plan, session.commands, project, depth
            )
    return NOTHING


def _hatch(args: list[str], project: Project, where: str, depth: int) -> LineReading:
    env = _option_values(args, "-e", "--env")
    rest = [
        a
        for i, a in enumerate(args)
        if not (a in ("-e", "--env") or (i and args[i - 1] in ("-e", "--env")))
    ]
    if rest[:1] == ["test"]:
        plan = project.meta.hatch_env("hatch-test")
        options = [
            a
            for a in rest[1:]
            if a.startswith("-") and a not in ("--cover", "--all", "--parallel", "-c", "-a", "-p")
        ]
        return LineReading(plan, True, usable_command(shlex.join(["pytest", *options])))
    if rest[:1] == ["run"] and len(rest) > 1:
        target, _, script = rest[1].rpartition(":")
        name = (env[0] if env else target) or "default"
        plan = project.meta.hatch_env(name)
        scripts = project.meta.hatch_envs().get(name, {}).get("scripts", {})
        body = scripts.get(script) if isinstance(scripts, dict) else None
        lines = [body] if isinstance(body, str) else [b for b in body or [] if isinstance(b, str)]
        if not lines:
            lines = [shlex.join([script, *rest[2:]])]
        reading = LineReading(plan)
        for line in lines:
            reading = reading.merged(read_line(line, project, where, depth + 1))
        return reading
    return NOTHING


def _make(args: list[str], project: Project, depth: int) -> LineReading:
    """What ``make TARGET...`` does, target by target as make runs them: each prerequisite
    first, once; a target whose own recipe neither installs, prepares nor runs tests (code
    generation, ``cython pkg/_speed.pyx``) is the project's own preparation, run whole."""
    targets = [a for a in args if not a.startswith("-") and "=" not in a]
    text = project.read("Makefile") or project.read("makefile") or ""
    done: set[str] = set()

    def target_reading(target: str) -> LineReading:
        if target in done or len(done) > 50:
            return NOTHING
        done.add(target)
        prerequisites, recipe = make_rule(text, target)
        reading = NOTHING
        for prerequisite in prerequisites:
            reading = reading.merged(target_reading(prerequisite))
        own = NOTHING
        for line in recipe:
            # A word that is only a make variable (``$(PYTEST_FLAGS)``) is a setting of the
            # line, not its command: read without it, the line still says what it runs.
            words = [w for w in line.split() if not _MAKE_VARIABLE.fullmatch(w)]
            read = read_line(" ".join(words), project, f"Makefile {target}", depth + 1)
            if len(words) < len(line.split()):
                read = replace(read, test_command=None)
            own = own.merged(read)
        named_for_tests = target.lower() in _TEST_TARGETS
        if recipe and not named_for_tests and not (own.runs_tests or own.plan or own.prepare):
            own = LineReading(prepare=(f"make {target}",))
        return reading.merged(own)

    reading = NOTHING
    for target in targets or ["test"]:
        reading = reading.merged(target_reading(target))
    return reading


def metadata_session(project: Project) -> LineReading:
    """What a project declares for its tests in its task runners' base sessions (tox, nox, the
    test script of Hatch's test environment), next to its packaging metadata
    (``ProjectMeta.declared_for_tests``): what they install, prepare and run."""
    reading = NOTHING
    envs = project.meta.hatch_envs()
    hatch = "hatch-test" if "hatch-test" in envs else pick(envs)
    scripts = envs.get(hatch, {}).get("scripts") if hatch else None
    script = pick(scripts) if isinstance(scripts, dict) else None
    if hatch == "hatch-test":
        reading = reading.merged(read_line("hatch test", project, "pyproject.toml"))
    elif script is not None and isinstance(scripts, dict):
        reading = reading.merged(
            read_line(f"hatch run {hatch}:{script}", project, "pyproject.toml")
        )
    if {"tox.ini", "tox.toml"} & set(project.files) or "tox" in project.meta.pyproject.get(
        "tool", {}
    ):
        session = tox_session(project.read, project.meta, None)
        if session is not None:
            reading = reading.merged(
                _session_reading(session.name, session.plan, session.commands, project, 0)
            )
    if "noxfile.py" in project.files:
        session = nox_session(project.read, project.meta, None)
        if session is not None:
            reading = reading.merged(
                _session_reading(session.name, session.plan, session.commands, project, 0)
            )
    return reading
