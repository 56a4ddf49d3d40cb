"""The test sessions a project defines for its task runners: tox environments, nox sessions,
Hatch's test environment and Makefile targets; what each installs and the commands it runs.

tox.ini and ``legacy_tox_ini`` are read with ``configparser``, tox.toml and ``[tool.tox]`` with
``tomllib``, a noxfile with ``ast`` (only literal arguments count: nothing of it is executed).
"""

from __future__ import annotations

import ast
import configparser
import re
import shlex
import tomllib
from dataclasses import dataclass
from typing import Any

from reprobot.validation.env.detect.metadata import ProjectMeta, Reader
from reprobot.validation.env.detect.plan import InstallPlan, requirement_plan

_TOX_SUBSTITUTIONS = {"{toxinidir}": ".", "{tox_root}": ".", "{posargs}": ""}
_FACTOR = re.compile(r"^([\w{},.!-]+):\s+(.*)$")
# tox's positional arguments, with or without a default: the sandbox appends its own selection.
_POSARGS = re.compile(r"\{posargs(?::[^{}]*)?\}")
# pip options whose value is the next word.
_PIP_VALUED = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--group",
        "-C",
        "--config-settings",
        "--only-binary",
        "--no-binary",
        "--platform",
        "--python-version",
        "-t",
        "--target",
        "--prefix",
        "--root",
        "--upgrade-strategy",
        "--python",
        "-p",
        "--implementation",
        "--abi",
        "--src",
        "--trusted-host",
        "--proxy",
    }
)


@dataclass(frozen=True)
class ProjectSession:
    """A named session of the project's task runner (a tox environment, a nox session): what it
    installs, and its command lines in order."""

    name: str
    plan: InstallPlan
    commands: tuple[str, ...]


def dependency_lines(lines: list[str], meta: ProjectMeta, where: str) -> InstallPlan:
    """A plan of requirement-file lines as tox ``deps`` and pip take them: ``-r FILE``, ``.``
    or ``-e .[extra]`` for the project, ``-c`` constraints (left out), requirements."""
    files: list[str] = []
    extras: list[str] = []
    texts: list[str] = []
    for raw in lines:
        line = raw.split(" #", 1)[0].strip()
        for key, value in _TOX_SUBSTITUTIONS.items():
            line = line.replace(key, value)
        if not line or line.startswith("#") or "{" in line:
            continue
        if line.startswith(("-r", "--requirement")):
            files.append(_relative(re.sub(r"^(-r|--requirement)[ =]?", "", line).strip()))
            continue
        if line.startswith(("-c", "--constraint", "-i", "--index-url", "--extra-index-url")):
            continue
        line = re.sub(r"^(-e|--editable)\s+", "", line)
        own = re.match(r"^\.?/?\.?(\[([^\]]*)\])?$", line)
        if own is not None and line.startswith("."):
            extras += [e.strip() for e in (own.group(2) or "").split(",") if e.strip()]
            continue
        texts.append(line)
    plan = requirement_plan(texts, meta.name)
    return InstallPlan(tuple(extras) + plan.extras, tuple(files), plan.packages, (where,))


def _tox_substituted(command: str) -> str:
    """A tox command with the substitutions a sandbox can make: the tox root is the tree's."""
    command = _POSARGS.sub("", command)
    for key in ("{toxinidir}/", "{tox_root}/"):
        command = command.replace(key, "")
    for key, value in _TOX_SUBSTITUTIONS.items():
        command = command.replace(key, value)
    return command.strip()


def _relative(path: str) -> str:
    return path.removeprefix("./")


# --- tox ---------------------------------------------------------------------------------------


def _factors_match(condition: str, env: str | None) -> bool:
    """Whether a tox factor condition (``py38,py39:`` or ``!pypy:``) selects ``env``."""
    names = set(re.split(r"[-]", env or ""))
    for alternative in condition.split(","):
        wanted = [f for f in alternative.split("-") if f]
        if all((f[1:] not in names) if f.startswith("!") else (f in names) for f in wanted):
            return True
    return False


def joined_lines(lines: list[str]) -> list[str]:
    """``lines`` with shell continuations (a line ending in a backslash) joined to the next."""
    out: list[str] = []
    pending = ""
    for line in lines:
        stripped = line.rstrip()
        if stripped.endswith("\\"):
            pending += stripped[:-1].strip() + " "
            continue
        out.append((pending + stripped.strip()) if pending else line)
        pending = ""
    if pending.strip():
        out.append(pending.strip())
    return out


def _ini_lines(value: str, env: str | None) -> list[str]:
    out = []
    for line in joined_lines(value.splitlines()):
        factor = _FACTOR.match(line.strip())
        if factor is None:
            out.append(line)
        elif "{" not in factor.group(1) and _factors_match(factor.group(1), env):
            out.append(factor.group(2))
    return out


def _tox_ini(text: str, env: str | None, meta: ProjectMeta, where: str) -> ProjectSession | None:
    parser = configparser.ConfigParser(interpolation=None)
    try:
        parser.read_string(text)
    except configparser.Error:
        return None
    sections = [
        s for s in (f"testenv:{env}" if env else "", "testenv") if s and parser.has_section(s)
    ]
    if not sections:
        return None

    def value(key: str) -> str:
        for section in sections:
            if parser.has_option(section, key):
                return parser.get(section, key)
        return ""

    plan = dependency_lines(_ini_lines(value("deps"), env), meta, f"{where} [{sections[0]}]")
    extras = [e.strip() for e in re.split(r"[,\n]", value("extras")) if e.strip()]
    groups = [g.strip() for g in re.split(r"[,\n]", value("dependency_groups")) if g.strip()]
    for group in groups:
        plan = plan.merged(meta.dependency_group(group))
    commands = tuple(_tox_substituted(c) for c in _ini_lines(value("commands"), env))
    return ProjectSession(
        env or "testenv", plan.merged(InstallPlan(extras=tuple(extras))), commands
    )


def _dict(value: object) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _tox_toml(
    data: dict[str, Any], env: str | None, meta: ProjectMeta, where: str
) -> ProjectSession | None:
    base = _dict(data.get("env_run_base"))
    own = _dict(_dict(data.get("env")).get(env)) if env else {}
    if not base and not own:
        return None
    merged = {**base, **own}
    deps = [d for d in merged.get("deps", []) if isinstance(d, str)]
    plan = dependency_lines(deps, meta, where)
    extras = tuple(e for e in merged.get("extras", []) if isinstance(e, str))
    for group in merged.get("dependency_groups", []):
        if isinstance(group, str):
            plan = plan.merged(meta.dependency_group(group))
    commands = tuple(
        shlex.join([w for w in c if isinstance(w, str) and not _POSARGS.fullmatch(w)])
        for c in merged.get("commands", [])
        if isinstance(c, list)
    )
    return ProjectSession(env or "env_run_base", plan.merged(InstallPlan(extras=extras)), commands)


def tox_session(read: Reader, meta: ProjectMeta, env: str | None) -> ProjectSession | None:
    """tox's environment ``env`` (None: its base), from tox.ini, tox.toml or pyproject.toml."""
    text = read("tox.ini")
    if text:
        return _tox_ini(text, env, meta, "tox.ini")
    text = read("tox.toml")
    if text:
        try:
            return _tox_toml(tomllib.loads(text), env, meta, "tox.toml")
        except tomllib.TOMLDecodeError:
            return None
    tool = (
        meta.pyproject.get("tool", {}).get("tox")
        if isinstance(meta.pyproject.get("tool"), dict)
        else None
    )
    if isinstance(tool, dict):
        legacy = tool.get("legacy_tox_ini")
        if isinstance(legacy, str):
            return _tox_ini(legacy, env, meta, "pyproject.toml [tool.tox]")
        return _tox_toml(tool, env, meta, "pyproject.toml [tool.tox]")
    return None


# --- nox ---------------------------------------------------------------------------------------


def _literal_strings(args: list[ast.expr]) -> list[str] | None:
    out = []
    for arg in args:
        if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
            out.append(arg.value)
        elif not isinstance(arg, ast.Starred):
            return None
    return out


def _group_names(args: list[ast.expr]) -> list[str]:
    """The groups of ``*nox.project.dependency_groups(PYPROJECT, "test", ...)`` arguments."""
    names: list[str] = []
    for arg in args:
        call = arg.value if isinstance(arg, ast.Starred) else None
        if not isinstance(call, ast.Call) or not isinstance(call.func, ast.Attribute):
            continue
        if call.func.attr == "dependency_groups":
            names += [
                a.value
                for a in call.args
                if isinstance(a, ast.Constant) and isinstance(a.value, str)
            ]
    return names


def _session_name(function: ast.FunctionDef) -> str | None:
    for decorator in function.decorator_list:
        target = decorator.func if isinstance(decorator, ast.Call) else decorator
        name = target.attr if isinstance(target, ast.Attribute) else getattr(target, "id", "")
        if name != "session":
            continue
        if isinstance(decorator, ast.Call):
            for keyword in decorator.keywords:
                if keyword.arg == "name" and isinstance(keyword.value, ast.Constant):
                    return str(keyword.value.value)
        return function.name
    return None


def nox_sessions(text: str, meta: ProjectMeta) -> list[ProjectSession]:
    """The sessions of a noxfile, in file order, with their literal installs and runs."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return []
    sessions = []
    for function in (n for n in tree.body if isinstance(n, ast.FunctionDef)):
        name = _session_name(function)
        if name is None:
            continue
        plan = InstallPlan()
        commands: list[str] = []
        for call in (n for n in ast.walk(function) if isinstance(n, ast.Call)):
            method = call.func.attr if isinstance(call.func, ast.Attribute) else ""
            words = _literal_strings(call.args)
            if method == "install":
                for group in _group_names(call.args):
                    plan = plan.merged(meta.dependency_group(group))
                if words:
                    plan = plan.merged(pip_words(words, meta, f"noxfile.py session {name}"))
            elif method == "run" and words:
                commands.append(shlex.join(words))
        sessions.append(ProjectSession(name, plan, tuple(commands)))
    return sessions


def pip_words(words: list[str], meta: ProjectMeta, where: str) -> InstallPlan:
    lines: list[str] = []
    index = 0
    while index < len(words):
        word = words[index]
        if word in ("-r", "--requirement", "-e", "--editable", "-c", "--constraint"):
            lines.append(f"{word} {words[index + 1]}" if index + 1 < len(words) else word)
            index += 2
            continue
        if word in _PIP_VALUED:
            index += 2
            continue
        if not word.startswith("-"):
            lines.append(word)
        index += 1
    return dependency_lines(lines, meta, where)


def nox_session(read: Reader, meta: ProjectMeta, name: str | None) -> ProjectSession | None:
    """Session ``name`` of the noxfile; without one, the first named for tests, else the first."""
    text = read("noxfile.py")
    sessions = nox_sessions(text, meta) if text else []
    if name is not None:
        return next((s for s in sessions if s.name == name), None)
    for wanted in ("tests", "test", "pytest"):
        found = next((s for s in sessions if s.name == wanted), None)
        if found is not None:
            return found
    return sessions[0] if sessions else None


# --- make --------------------------------------------------------------------------------------


def make_rule(text: str, target: str) -> tuple[list[str], list[str]]:
    """The prerequisites and the recipe lines of ``target`` in a Makefile (``@`` and ``-``
    prefixes removed, make's ``$(VAR)`` left as written: a line using one is not read
    further)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        rule = re.match(rf"^{re.escape(target)}\s*:(?!=)(.*)$", line)
        if rule:
            recipe: list[str] = []
            for body in lines[index + 1 :]:
                if not body.startswith("\t") and not (recipe and recipe[-1].endswith("\\")):
                    break
                recipe.append(body.strip())
            steps = [step.lstrip("@-").strip() for step in joined_lines(recipe)]
            return rule.group(1).split("#", 1)[0].split(), steps
    return [], []
