"""What an environment image holds, and the content hash that names it."""

from __future__ import annotations

import hashlib
import json
import re
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from reprobot.validation.source.snapshot import RepoSnapshot

PythonVersion = Literal["3.9", "3.11", "3.13"]
SUPPORTED_PYTHONS: tuple[str, ...] = ("3.9", "3.11", "3.13")

# Files whose content decides what an environment installs; a change to any of them means a new
# environment image, and a run on a tree whose manifests differ from the image's re-installs the
# project (offline, without dependencies) before testing.
_MANIFEST_NAMES = ("pyproject.toml", "setup.py", "setup.cfg", "tox.ini")
_REQUIREMENTS_RE = re.compile(r"^(requirements[^/]*\.(txt|in)|requirements/[^/]+\.(txt|in))$")


# A Debian package name (Debian policy 5.6.7): it goes onto an apt-get command line.
DebianPackage = Annotated[str, StringConstraints(pattern=r"^[a-z0-9][a-z0-9+.-]+$")]

# Behaviours of the Python a project's era ran on that the sandbox's newer Python changed, each
# restored in the environment at interpreter start-up (reprobot's env_build.py holds the code):
# - "collections-abc-aliases": ``collections.Mapping`` and the other ABCs as plain attributes of
#   ``collections``, as before Python 3.7; from 3.7 to 3.9 each use warns (DeprecationWarning),
#   so a project that turns deprecations into errors cannot import itself, and 3.10 removed them.
PythonCompat = Literal["collections-abc-aliases"]


class EnvSpec(BaseModel):
    """How to build a repository's environment: Python, dependencies, install and test commands."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    python: PythonVersion = "3.11"
    requirements: tuple[str, ...] = ()
    pip_packages: tuple[str, ...] = ()
    test_requirements: tuple[str, ...] = Field(
        default=(),
        description="requirements the project declares for its tests (a dependency group, a "
        "Poetry, PDM or Hatch group, a tox or nox session, its CI job's installs), installed "
        "after the project; one that cannot be installed is left out and named",
    )
    pre_install: tuple[str, ...] = Field(
        default=(), description="shell commands run as root before anything is installed"
    )
    install: str = "python -m pip install -e ."
    prepare: tuple[str, ...] = Field(
        default=(),
        description="the project's own scripts its test session runs before the tests (a data "
        "download, code generation), run in the build after the install, with network; what "
        "they write into the tree is kept with the install's files; one that fails is named",
    )
    test_cmd: str = "pytest"
    env: dict[str, str] = Field(default_factory=dict)
    system_packages: tuple[DebianPackage, ...] = Field(
        default=(),
        description="Debian packages (compilers, libraries) for the environment image only",
    )
    constraints: tuple[str, ...] = Field(
        default=(),
        description="requirement specifiers that bound every install of the build (pip's "
        "constraints): a release of a dependency too new for the project's era is kept out",
    )
    binary_requirements: tuple[str, ...] = Field(
        default=(),
        description="requirement files whose lines are taken only as wheels, each on its own "
        "(a conda environment file: conda ships binaries, so a pip source build is no equivalent)",
    )
    notes: tuple[str, ...] = Field(
        default=(), description="why the spec departs from its source (a Python substituted, ...)"
    )
    warm: tuple[str, ...] = Field(
        default=(),
        description="shell commands run once at the end of the build, with network, as the "
        "sandbox user: what they download into its home (a project's data files and caches, "
        "fetched at test start-up) is there for every offline run",
    )

    python_compat: tuple[PythonCompat, ...] = Field(
        default=(),
        description="behaviours of an older Python the project's era relied on, restored in the "
        "environment when the sandbox's Python stands in for that older one",
    )

    def canonical_json(self) -> str:
        data = self.model_dump(mode="json")
        # Fields added after the first images were built hash only when set, so an image built
        # from a spec that does not use them keeps its tag.
        for name in _LATER_FIELDS:
            if not data[name]:
                del data[name]
        return json.dumps(data, sort_keys=True, separators=(",", ":"))


_LATER_FIELDS = (
    "test_requirements",
    "prepare",
    "system_packages",
    "constraints",
    "binary_requirements",
    "notes",
    "warm",
    "python_compat",
)


def is_manifest(path: str) -> bool:
    """Whether ``path`` is a dependency manifest (whatever the spec's own requirements files)."""
    return path in _MANIFEST_NAMES or _REQUIREMENTS_RE.match(path) is not None


def manifest_paths(files: list[str], spec: EnvSpec) -> list[str]:
    """The dependency manifests among ``files`` (sorted), plus the spec's requirements files."""
    chosen = {f for f in files if f in _MANIFEST_NAMES or _REQUIREMENTS_RE.match(f)}
    chosen.update(r for r in spec.requirements if r in files)
    return sorted(chosen)


def manifests_fingerprint(snapshot: RepoSnapshot, spec: EnvSpec) -> str:
    """A hash of the manifest files of ``snapshot`` (names and contents)."""
    digest = hashlib.sha256()
    for path in manifest_paths(snapshot.list_files(), spec):
        data = snapshot.read_file(path) or b""
        digest.update(path.encode() + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


# Sources compiled into extensions: an editable install built them once, in the image, and a
# tree whose sources differ must build them again before its tests say anything.
COMPILED_SUFFIXES = (
    ".c",
    ".h",
    ".cpp",
    ".cc",
    ".cxx",
    ".hpp",
    ".hxx",
    ".pyx",
    ".pxd",
    ".pxi",
    ".f",
    ".f90",
    ".f95",
    ".for",
)


def is_compiled_source(path: str) -> bool:
    return path.lower().endswith(COMPILED_SUFFIXES)


def compiled_fingerprint(snapshot: RepoSnapshot) -> str:
    """A hash of the tree's compiled sources (names and contents); empty when it has none."""
    sources = sorted((p, b) for p, b in snapshot.blob_ids().items() if is_compiled_source(p))
    if not sources:
        return ""
    digest = hashlib.sha256()
    for path, blob in sources:
        digest.update(f"{path}\0{blob}\0".encode("utf-8", "surrogateescape"))
    return digest.hexdigest()


def environment_key(spec: EnvSpec, fingerprint: str, base_id: str) -> str:
    """The content hash tagging an environment image: spec, manifests and the base it builds on."""
    digest = hashlib.sha256()
    for part in (spec.canonical_json(), fingerprint, base_id):
        digest.update(part.encode() + b"\0")
    return digest.hexdigest()[:20]
