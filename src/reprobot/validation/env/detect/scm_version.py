"""Versions a project's build derives from git, for a tree that arrives without git data.

Every build and run streams the commit's tree into a container with no ``.git``, so a project
whose version comes from git (setuptools-scm, hatch-vcs, flit-scm, pdm-backend's ``scm``
source, versioneer, pbr, poetry-dynamic-versioning) cannot tell it and fails to install or
installs ``0+unknown``. Each such tool takes a version from the environment instead; the
version given is the one ``git describe`` derives from the commit (the nearest tag and the
commits since), as the tool itself would have.
"""

from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass

from packaging.version import InvalidVersion, Version

from reprobot.validation.env.detect.metadata import ProjectMeta, Reader
from reprobot.validation.source.snapshot import RepoSnapshot

# What each tool reads in place of git (versioneer reads the first: the build writes its
# static version file from it, see env_build.py).
VERSION_VARIABLES = (
    "SETUPTOOLS_SCM_PRETEND_VERSION",
    "PDM_BUILD_SCM_VERSION",
    "PBR_VERSION",
)
_BYPASS = "POETRY_DYNAMIC_VERSIONING_BYPASS"


@dataclass(frozen=True)
class GitVersion:
    """The tool that derives the version from git, and the version given to it."""

    tool: str
    version: str
    described: str  # what ``git describe`` said, or why it said nothing

    def environment(self) -> dict[str, str]:
        env = dict.fromkeys(VERSION_VARIABLES, self.version)
        env[_BYPASS] = self.version
        return env

    def label(self) -> str:
        return f"{self.tool}: {self.version} ({self.described})"


def _build_requires(meta: ProjectMeta) -> str:
    system = meta.pyproject.get("build-system")
    requires = system.get("requires") if isinstance(system, dict) else None
    return " ".join(r for r in requires or [] if isinstance(r, str)).lower().replace("_", "-")


def version_tool(meta: ProjectMeta, read: Reader) -> str | None:
    """The tool that derives the project's version from git, or None."""
    tool = meta.pyproject.get("tool")
    tables = tool if isinstance(tool, dict) else {}
    requires = _build_requires(meta)
    hatch_version = (
        tables.get("hatch", {}).get("version", {}) if isinstance(tables.get("hatch"), dict) else {}
    )
    pdm_version = (
        tables.get("pdm", {}).get("version", {}) if isinstance(tables.get("pdm"), dict) else {}
    )
    if isinstance(hatch_version, dict) and hatch_version.get("source") == "vcs":
        return "hatch-vcs"
    if isinstance(pdm_version, dict) and pdm_version.get("source") == "scm":
        return "pdm-backend (scm)"
    if "poetry-dynamic-versioning" in tables or "poetry-dynamic-versioning" in requires:
        return "poetry-dynamic-versioning"
    if "flit-scm" in requires:
        return "flit-scm"
    setup_py = meta.setup_py
    if "setuptools-scm" in tables or "setuptools-scm" in requires or "use_scm_version" in setup_py:
        return "setuptools-scm"
    if "setuptools_scm" in tables or re.search(r"setup_requires[^\]]*setuptools.scm", setup_py):
        return "setuptools-scm"
    if meta.setup_cfg.has_section("versioneer") or "versioneer" in tables:
        return "versioneer"
    if meta.setup_cfg.has_section("pbr") or re.search(r"pbr\s*=\s*True", setup_py):
        return "pbr"
    return None


def describe(snapshot: RepoSnapshot) -> tuple[str | None, str]:
    """``git describe --tags --long`` of the snapshot's commit, and what to say of it."""
    if snapshot.path is None:
        return None, "no git repository"
    proc = subprocess.run(
        [
            "git",
            "-C",
            str(snapshot.path),
            "describe",
            "--tags",
            "--long",
            "--match",
            "*[0-9]*",
            snapshot.sha,
        ],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    if proc.returncode != 0:
        return None, "no tag reaches the commit"
    return proc.stdout.strip(), f"git describe: {proc.stdout.strip()}"


def version_from_description(described: str | None, sha: str) -> str:
    """The version setuptools-scm's ``post-release`` scheme would give: the tag's version at the
    tag, ``TAG.postN+gSHA`` N commits after it; ``0.0.0+gSHA`` when no tag is a version."""
    local = f"g{sha[:7]}"
    if described:
        match = re.match(r"^(?P<tag>.*)-(?P<distance>\d+)-g[0-9a-f]+$", described)
        if match:
            tag = re.sub(r"^[^0-9]*", "", match.group("tag"))
            try:
                version = Version(tag)
            except InvalidVersion:
                version = None
            if version is not None:
                distance = int(match.group("distance"))
                if distance == 0:
                    return version.public
                later = f"{version.public}.post{distance}+{local}"
                try:
                    return str(Version(later))
                except InvalidVersion:  # a tag that is a post-release already
                    return f"{version.public}+{local}"
    return f"0.0.0+{local}"


def git_version(snapshot: RepoSnapshot) -> GitVersion | None:
    """The version to give a project whose version comes from git; None for any other."""

    def read(path: str) -> str | None:
        raw = snapshot.read_file(path)
        return raw.decode("utf-8", "replace") if raw is not None else None

    tool = version_tool(ProjectMeta.read(read), read)
    if tool is None:
        return None
    described, why = describe(snapshot)
    return GitVersion(tool, version_from_description(described, snapshot.sha), why)
