"""The one result a sandboxed run sends back, read defensively (pure functions).

The runner writes a tar of a few known files to the container's standard output. Everything in
it passed through a container that ran untrusted code, so the host reads exactly those files,
each within its size, checks the status file's shape, and turns anything else into a clear
problem of the run; it never raises on what came back.
"""

from __future__ import annotations

import io
import json
import re
import tarfile
from collections.abc import Collection, Mapping
from dataclasses import dataclass, field
from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from reprobot.validation.results.testrun import Outcome

MIB = 1024 * 1024
# Each file the runner may send, and the most of it the host reads.
LIMITS: Mapping[str, int] = {
    "status.json": 16 * MIB,
    "junit.xml": 32 * MIB,
    "coverage.json": 256 * MIB,
    "contexts.json": 256 * MIB,
    "pytest.log": 4 * MIB,
    "install.log": 4 * MIB,
}
RUNNER_VERSION = 2
# What the runner prints first on its standard error: the container's short id.
_ANNOUNCED = re.compile(rb"reprobot-sandbox: ([0-9a-f]{12})\b")


class _Model(BaseModel):
    model_config = ConfigDict(extra="ignore", strict=True, frozen=True)


class PatchStatus(_Model):
    name: str = Field(max_length=1000)
    applied: bool
    method: str | None = Field(default=None, max_length=100)
    output: str = Field(default="", max_length=20000)


class InstallStatus(_Model):
    ok: bool
    mode: str | None = Field(default=None, max_length=100)
    # Requirements of the tree the environment lacks (pip's own names for them).
    missing: list[Annotated[str, Field(max_length=200)]] = Field(
        default_factory=list, max_length=100
    )


class RunnerStatus(_Model):
    """What the runner says about its run (``status.json``)."""

    runner: int
    sandbox: str = Field(default="", max_length=64)
    ran: bool = False
    error: str | None = Field(default=None, max_length=4000)
    patches: list[PatchStatus] = Field(default_factory=list, max_length=1000)
    patches_applied: bool | None = None
    install: InstallStatus | None = None
    selection_mode: Literal["ids", "files"] = "ids"
    # Which runner ran: pytest with Reprobot's plugin, or Reprobot's unittest-family reporter.
    tool: Literal["pytest", "unittest"] = "pytest"
    pytest_exit: int | None = None
    coverage_ok: bool | None = None
    oom_kills: int | None = None
    collected: list[str] | None = Field(default=None, max_length=1_000_000)
    report_exitstatus: int | None = None
    report_problem: str | None = Field(default=None, max_length=4000)
    # Bytes other processes than pytest's own wrote to its report channel (set aside unread).
    report_foreign_bytes: int = Field(default=0, ge=0)
    # Tests marked as expected failures that passed, which JUnit shows as plain passes.
    xpassed: list[str] = Field(default_factory=list, max_length=1_000_000)


@dataclass(frozen=True)
class SandboxResult:
    """The files that came back, the runner's status, and why the result cannot be used."""

    files: Mapping[str, bytes] = field(default_factory=dict)
    status: RunnerStatus | None = None
    problem: str | None = None


def read_result(stdout: bytes, limits: Mapping[str, int] = LIMITS) -> SandboxResult:
    """The runner's tar from ``stdout``; empty when nothing came back. ``limits`` names the
    files the runner may send, each with the most of it the host reads."""
    if not stdout:
        return SandboxResult()
    files: dict[str, bytes] = {}
    try:
        with tarfile.open(fileobj=io.BytesIO(stdout), mode="r:") as tar:
            for member in tar:
                if member.name not in limits or member.name in files:
                    return SandboxResult(problem=f"the result holds an unexpected {member.name!r}")
                if not member.isfile() or member.size > limits[member.name]:
                    return SandboxResult(problem=f"the result's {member.name} is too large")
                handle = tar.extractfile(member)
                files[member.name] = handle.read() if handle is not None else b""
    except (tarfile.TarError, EOFError, OSError) as exc:
        return SandboxResult(problem=f"the result is not a readable tar ({exc})")
    raw = files.get("status.json")
    if raw is None:
        return SandboxResult(files, problem="the result holds no status")
    try:
        document = json.loads(raw)
    except ValueError:
        return SandboxResult(files, problem="the result's status is not JSON")
    if not isinstance(document, dict):
        return SandboxResult(files, problem="the result's status is not an object")
    try:
        status = RunnerStatus.model_validate(document)
    except ValidationError as exc:
        where = "; ".join(
            ".".join(str(p) for p in err["loc"]) + ": " + err["msg"] for err in exc.errors()[:3]
        )
        return SandboxResult(files, problem=f"the result's status has the wrong shape ({where})")
    if status.runner != RUNNER_VERSION:
        return SandboxResult(files, problem=f"the result comes from runner {status.runner}")
    return SandboxResult(files, status)


def uncollected(outcomes: Mapping[str, Outcome], collected: Collection[str]) -> list[str]:
    """Reported tests pytest never collected: pytest's own run did not report them. A module's
    collection error (an id without ``::``) is reported without being collected, and is
    allowed."""
    known = set(collected)
    return sorted(
        test_id
        for test_id, outcome in outcomes.items()
        if test_id not in known and not ("::" not in test_id and outcome is Outcome.ERROR)
    )


def collected_only(
    outcomes: Mapping[str, Outcome], collected: Collection[str]
) -> tuple[dict[str, Outcome], list[str]]:
    """The outcomes of tests pytest collected (and of modules that failed to collect), and the
    ids of the others, which never count whatever they say: a test pytest never collected
    never ran in its run, so its outcome was written by something else (or under an id no
    collected item has). Dropping them takes nothing from the defence a whole discarded report
    gave: the same report without them would count the same outcomes."""
    stray = uncollected(outcomes, collected)
    dropped = set(stray)
    return {t: o for t, o in outcomes.items() if t not in dropped}, stray


def announced_sandbox(stderr: bytes) -> str:
    """The sandbox the runner named on its standard error, when nothing else came back."""
    match = _ANNOUNCED.search(stderr[:4096])
    return match.group(1).decode() if match else ""
