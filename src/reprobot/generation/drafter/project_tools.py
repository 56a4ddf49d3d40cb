"""The commands a project offers, and how a test starts one with its own interpreter: the
console scripts its manifests declare, and its packages with a ``__main__`` module. Pure
functions."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass

from reprobot.generation.repo.test_layout import TestLayout

_SCRIPT = re.compile(r"^\s*(?P<name>[\w.-]+)\s*=\s*['\"]?(?P<target>[\w.]+:[\w.]+)['\"]?\s*,?\s*$")


@dataclass(frozen=True)
class Tool:
    """How to start a command of the project with the test's interpreter."""

    name: str
    argv_prefix: tuple[str, ...]  # after sys.executable


def console_scripts(manifests: Mapping[str, str]) -> dict[str, str]:
    """Console scripts declared in pyproject.toml, setup.cfg or setup.py: name → module:function."""
    out: dict[str, str] = {}
    text = manifests.get("pyproject.toml")
    if text:
        try:
            data = tomllib.loads(text)
        except tomllib.TOMLDecodeError:
            data = {}
        project = data.get("project")
        scripts = project.get("scripts") if isinstance(project, dict) else None
        if isinstance(scripts, dict):
            out.update({str(k): str(v) for k, v in scripts.items()})
    for name in ("setup.cfg", "setup.py"):
        for line in (manifests.get(name) or "").split("\n"):
            match = _SCRIPT.match(line.strip().strip("'\""))
            if match:
                out.setdefault(match.group("name"), match.group("target"))
    return out


def project_tools(layout: TestLayout, manifests: Mapping[str, str]) -> dict[str, Tool]:
    tools: dict[str, Tool] = {}
    for name, target in console_scripts(manifests).items():
        module, _, function = target.partition(":")
        code = (
            f"import sys; from {module} import {function.split('.')[0]} as main; sys.exit(main())"
        )
        if function.count(".") == 0 and module.replace(".", "").replace("_", "").isalnum():
            tools[name] = Tool(name, ("-c", code))
    for package in layout.packages:
        if f"{package}.__main__" in layout.modules:
            tools[package] = Tool(package, ("-m", package))
    return tools
