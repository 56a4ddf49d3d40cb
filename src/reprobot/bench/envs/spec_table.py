"""The environment table (``env_specs.json``, or the harness's own table converted) and an
instance's ``EnvSpec`` from it: pure conversions.

Environment records map ``repo → version → record`` with the keys ``python``,
``pip_packages``, ``requirements``, ``install``, ``test_cmd`` (the harness's), plus these optional
ones that this module adds to the schema:

- ``constraints``: requirement specifiers installed with the pinned packages that also bound
  every later install of the build, the project's own included (pip's constraints), e.g.
  ``"pytest<8"`` where a project's test set-up predates a newer pytest;
- ``env``: extra environment variables for the build and every run;
- ``python_compat``: behaviours of the Python the harness names that the sandbox's newer Python
  changed, restored in the environment (``EnvSpec.python_compat`` lists them).

Free-text keys (``observed``, ``test_ids``, ...) are notes and are ignored. An overlay with the
same shape (``load_env_specs(path, overlay)``) adds such keys without editing the transcribed file.
"""

from __future__ import annotations

import json
import re
import shlex
from collections.abc import Mapping
from pathlib import Path
from typing import Any, cast, get_args

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from reprobot.bench.data.instances import DatasetError
from reprobot.bench.envs.harness_table import harness_table, is_harness_document
from reprobot.validation import SUPPORTED_PYTHONS, EnvSpec, PythonCompat, runner_family

# The table as its JSON files hold it: records stay JSON, merged as JSON (an overlay's lists extend
# the base's), until ``to_env_spec`` reads one into an ``EnvSpec``.
SpecTable = dict[str, dict[str, dict[str, Any]]]

# What a converted non-pytest test command runs instead: pytest with a summary of every outcome.
PYTEST_FALLBACK = "pytest -rA"
_ENV_WORD = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")


def merge_spec_tables(base: SpecTable, overlay: SpecTable) -> SpecTable:
    """``base`` with each (repo, version) record updated by ``overlay``'s record of the same key.

    List values of the overlay extend the base's lists; other values replace them."""
    merged: SpecTable = {
        repo: {v: dict(r) for v, r in versions.items()} for repo, versions in base.items()
    }
    for repo, versions in overlay.items():
        for version, record in versions.items():
            target = merged.setdefault(repo, {}).setdefault(version, {})
            for key, value in record.items():
                if isinstance(value, list) and isinstance(target.get(key), list):
                    target[key] = [*target[key], *value]
                elif isinstance(value, dict) and isinstance(target.get(key), dict):
                    target[key] = {**target[key], **value}
                else:
                    target[key] = value
    return merged


def spec_table(document: Mapping[str, Any]) -> SpecTable:
    """The ``repo → version → record`` table of an env_specs document (its ``specs`` key), as
    the file's JSON holds it."""
    specs = document.get("specs", document)
    if not isinstance(specs, dict):
        raise DatasetError("env specs document has no 'specs' mapping")
    return {
        str(repo): {str(v): dict(r) for v, r in versions.items() if isinstance(r, dict)}
        for repo, versions in specs.items()
        if isinstance(versions, dict)
    }


def default_overlay() -> Path:
    """Reprobot's own additions to the transcribed harness table (``env_overrides.json``, kept
    at the top of ``bench/`` where the README names it)."""
    return Path(__file__).parent.parent / "env_overrides.json"


def load_env_specs(path: Path, overlay: Path | None = None) -> SpecTable:
    """The spec table of ``path``, with ``overlay``'s records (same shape) merged over it.

    ``path`` is an ``env_specs.json`` or the harness's own ``harness_specs.json``; the latter is
    converted (``harness_table``), its Python releases mapped by the overlay's ``pythons``."""
    # The JSON boundary: the two files' documents.
    document = json.loads(Path(path).read_text(encoding="utf-8"))
    extra: Mapping[str, Any] = (
        json.loads(Path(overlay).read_text(encoding="utf-8")) if overlay is not None else {}
    )
    if isinstance(document, dict) and is_harness_document(document):
        pythons = {str(k): str(v) for k, v in extra.get("pythons", {}).items()}
        table = harness_table(document, pythons)
    else:
        table = spec_table(document)
    if overlay is not None:
        table = merge_spec_tables(table, spec_table({"specs": extra.get("specs", {})}))
    return table


def split_env_words(command: str) -> tuple[list[str], list[str]]:
    """Leading ``VAR=value`` words of a shell command line, and the rest."""
    words = shlex.split(command)
    cut = 0
    while cut < len(words) and _ENV_WORD.match(words[cut]):
        cut += 1
    return words[:cut], words[cut:]


def pytest_test_command(test_cmd: str) -> str:
    """The harness's test command as one a sandbox reports on.

    A pytest command, or one of the unittest family (Django's ``tests/runtests.py``, a
    ``manage.py test``, ``python -m unittest``), stays as it is. Any other runner (sympy's
    ``bin/test``, ``tox``) reports nothing Reprobot can read, so it is replaced by pytest; its
    leading ``VAR=value`` assignments are kept, its own options are dropped since they mean
    nothing to pytest.
    """
    if runner_family(test_cmd) is not None:
        return test_cmd
    assignments, _ = split_env_words(test_cmd)
    return " ".join([*(shlex.quote(a) for a in assignments), PYTEST_FALLBACK])


def scm_pretend_version(version: str) -> str:
    """A full release number for a harness version (``"5.4"`` → ``"5.4.0"``)."""
    parts = version.split(".")
    return version if len(parts) >= 3 else ".".join([*parts, *["0"] * (3 - len(parts))])


def replace_pins(packages: list[str], replacements: list[str]) -> list[str]:
    """``packages`` with each requirement of the same project as a replacement swapped for it.

    The harness pins the releases of its own Python; some of them do not run on the sandbox
    Python that stands in for it, and a constraint cannot undo a pin (pip refuses the pair), so
    the overlay names the requirement to use instead. A replacement whose project the harness
    does not pin is an error: it would silently do nothing."""
    if not replacements:
        return packages
    by_name = {_project(r): r for r in replacements}
    unused = set(by_name) - {_project(p) for p in packages}
    if unused:
        raise DatasetError(f"replace_pins names projects the spec does not pin: {sorted(unused)}")
    return [by_name.get(_project(p), p) for p in packages]


def _project(requirement: str) -> str:
    try:
        return canonicalize_name(Requirement(requirement).name)
    except InvalidRequirement as exc:
        raise DatasetError(f"not a requirement: {requirement!r}") from exc


def to_env_spec(record: Mapping[str, Any], version: str) -> EnvSpec:
    """The ``EnvSpec`` of one environment record (the table's JSON) of ``version``.

    Every spec sets ``SETUPTOOLS_SCM_PRETEND_VERSION``: a tree streamed into a container has no
    ``.git``, and setuptools_scm-versioned projects cannot build without it; projects that do
    not use setuptools_scm never read it."""
    python = str(record.get("python", "3.11"))
    if python not in SUPPORTED_PYTHONS:
        raise DatasetError(
            f"Python {python} is not a sandbox Python ({', '.join(SUPPORTED_PYTHONS)})"
        )
    packages = replace_pins(
        [str(p) for p in record.get("pip_packages", []) or []],
        [str(p) for p in record.get("replace_pins", []) or []],
    )
    constraints = [str(c) for c in record.get("constraints", []) or []]
    env = {"SETUPTOOLS_SCM_PRETEND_VERSION": scm_pretend_version(version)}
    env.update({str(k): str(v) for k, v in (record.get("env") or {}).items()})

    def strings(key: str) -> tuple[str, ...]:
        return tuple(str(x) for x in record.get(key, []) or [])

    return EnvSpec(
        python=python,
        requirements=strings("requirements"),
        binary_requirements=strings("binary_requirements"),
        pip_packages=tuple(packages),
        constraints=tuple(constraints),
        pre_install=strings("pre_install"),
        system_packages=strings("system_packages"),
        install=str(record.get("install") or "python -m pip install -e ."),
        test_cmd=pytest_test_command(str(record.get("test_cmd") or "pytest")),
        env=env,
        notes=strings("notes"),
        warm=strings("warm"),
        python_compat=python_compat(strings("python_compat")),
    )


def python_compat(names: tuple[str, ...]) -> tuple[PythonCompat, ...]:
    """``names`` as the Python behaviours an environment can restore, or a clear error."""
    known = get_args(PythonCompat)
    unknown = [n for n in names if n not in known]
    if unknown:
        raise DatasetError(f"unknown python_compat {unknown}: known are {list(known)}")
    return tuple(cast(PythonCompat, n) for n in names)


def env_spec_for(table: SpecTable, repo: str, version: str) -> EnvSpec:
    """The ``EnvSpec`` of ``repo`` at harness version ``version``."""
    try:
        record = table[repo][version]
    except KeyError as exc:
        raise DatasetError(f"no environment record for {repo} {version}") from exc
    return to_env_spec(record, version)
