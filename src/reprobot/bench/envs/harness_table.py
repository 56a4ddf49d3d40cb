"""The SWT-Bench harness's environment table (``harness_specs.json``) as a Reprobot spec table.

The harness describes each repository and version for conda: a Python release, a ``packages``
field (conda package names, or ``requirements.txt`` / ``environment.yml`` meaning the files of
``requirements_paths`` / ``environment_yml_paths``), pinned ``pip_packages``, ``pre_install``
shell steps, an ``install`` and a ``test_cmd``, and ``eval_commands`` run before testing. This
module turns each record into the record shape ``spec_table.to_env_spec`` reads, without conda:

- the Python release becomes the nearest sandbox Python (``pythons``, data), with a note;
- conda package names become pip requirements (``name=1.2`` → ``name==1.2``, names through
  ``conda_names.json``); an environment file becomes binary-only requirements, since conda
  ships built packages and a pip source build of the same name is no equivalent;
- ``export NAME=value`` steps of ``eval_commands`` become the spec's environment.

Everything else that a release needs on a newer Python (pins, system packages) is data in the
overlay (``env_overrides.json``), merged over the converted table.
"""

from __future__ import annotations

import re
import shlex
from collections.abc import Mapping
from typing import Any

from reprobot.validation import conda_names

# Keys only the harness's records carry; a document whose records have them is a harness table.
_HARNESS_KEYS = frozenset({"packages", "requirements_paths", "environment_yml_paths"})
_CONDA_PIN = re.compile(r"^([A-Za-z0-9_.\-]+)(=+)?(.*)$")
_EXPORT = re.compile(r"^export\s+([A-Za-z_][A-Za-z0-9_]*)=(.*)$")

# Every function here reads the harness's JSON document and writes env_specs.json's records: the
# table stays JSON until ``spec_table.to_env_spec`` reads a record into an ``EnvSpec``.


def is_harness_document(document: Mapping[str, Any]) -> bool:
    """Whether ``document`` is the harness's table (``repo → version → record``, no ``specs``)."""
    if "specs" in document:
        return False
    for versions in document.values():
        if isinstance(versions, dict):
            for record in versions.values():
                if isinstance(record, dict) and _HARNESS_KEYS & record.keys():
                    return True
    return False


def conda_requirement(word: str, names: Mapping[str, str]) -> str:
    """A conda package spec as a pip requirement: ``numpy=1.16`` → ``numpy==1.16``."""
    match = _CONDA_PIN.match(word.strip())
    if match is None:
        return word
    name, equals, rest = match.groups()
    name = names.get(name.lower(), name)
    if equals:
        return f"{name}=={rest.split('=', 1)[0]}"
    return name + rest


def exported_environment(commands: list[str]) -> dict[str, str]:
    """The variables that ``export NAME=value`` steps set (other steps are not environment)."""
    env: dict[str, str] = {}
    for command in commands:
        match = _EXPORT.match(command.strip())
        if match:
            words = shlex.split(match.group(2)) or [""]
            env[match.group(1)] = words[0]
    return env


def harness_record(
    record: Mapping[str, Any], pythons: Mapping[str, str], names: Mapping[str, str]
) -> dict[str, Any]:
    """One harness record in the shape of an ``env_specs.json`` record."""
    python = str(record.get("python") or "3.11")
    target = pythons.get(python, python)
    notes: list[str] = []
    if target != python:
        notes.append(
            f"the harness runs Python {python}; the nearest Python these sandboxes have is {target}"
        )
    packages = str(record.get("packages") or "").strip()
    requirements: list[str] = []
    binary: list[str] = []
    pinned: list[str] = []
    if packages == "requirements.txt":
        requirements = [str(p) for p in record.get("requirements_paths") or []]
    elif packages == "environment.yml":
        binary = [str(p) for p in record.get("environment_yml_paths") or []]
    elif packages:
        pinned = [conda_requirement(w, names) for w in packages.split()]
    pinned += [str(p) for p in record.get("pip_packages") or []]
    out: dict[str, Any] = {
        "python": target,
        "requirements": requirements,
        "binary_requirements": binary,
        "pip_packages": pinned,
        "pre_install": [str(c) for c in record.get("pre_install") or []],
        "install": str(record.get("install") or "python -m pip install -e ."),
        "test_cmd": str(record.get("test_cmd") or "pytest"),
        "env": exported_environment([str(c) for c in record.get("eval_commands") or []]),
        "notes": notes,
    }
    return out


def harness_table(
    document: Mapping[str, Any], pythons: Mapping[str, str]
) -> dict[str, dict[str, dict[str, Any]]]:
    """Every record of the harness's table, converted (``harness_record``): a spec table."""
    names = conda_names()
    return {
        str(repo): {
            str(version): harness_record(record, pythons, names)
            for version, record in versions.items()
            if isinstance(record, dict)
        }
        for repo, versions in document.items()
        if isinstance(versions, dict)
    }
