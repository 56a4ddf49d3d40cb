"""One repository's first contact as a row of the report, and whether its suite works there.

Pure functions: the detection, the build and the run go in as data (a ``Detection``, a
``Build``, a ``TestRun``), a ``Row`` comes out. A repository WORKS when its environment built,
its run collected tests and finished, no module failed to collect for a missing module, and at
most ``FAILING_SHARE`` of the collected tests failed or errored."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ConfigDict

from reprobot.bench.repos.selection import Selection
from reprobot.validation import Detection, Outcome, TestRun

# At most this share of the collected tests may fail or error for a suite to count as working:
# a few failures are the project's own (a flaky test, a test of the host), more are the setup's.
FAILING_SHARE = 0.02

# A module that does not collect because an import fails: a dependency the setup did not install.
_IMPORT_FAILURE = re.compile(r"\b(ModuleNotFoundError|ImportError)\b")
_NO_MODULE = re.compile(r"No module named '([^']+)'")
_CANNOT_IMPORT = re.compile(r"cannot import name '([^']+)' from '([^']+)'")
_CAUSE_LIMIT = 300


@dataclass(frozen=True)
class Build:
    """How the environment build went: the image, or the cause of its failure in one line.

    ``build_s`` is the image's cold build time (what building it took, whenever that was);
    ``wall_s`` what finding or building it took in this run; ``built_now`` whether this run built
    it."""

    ok: bool
    cause: str = ""
    image: str = ""
    build_s: float | None = None
    wall_s: float = 0.0
    built_now: bool = False
    size_mb: float | None = None
    added_mb: float | None = None


class Row(BaseModel):
    """A repository's line in the report (stored as JSON between runs)."""

    model_config = ConfigDict(frozen=True, extra="ignore")

    repo: str
    commit: str
    sources: dict[str, str] = {}
    python: str = ""
    install: str = ""
    # What the install brings for the tests besides the project (a dependency group, ...).
    test_requirements: tuple[str, ...] = ()
    test_cmd: str = ""
    # A step before the build that failed (the clone, the commit, detection), in one line.
    failure: str = ""
    build_ok: bool = False
    build_cause: str = ""
    image: str = ""
    build_s: float | None = None
    build_wall_s: float = 0.0
    built_now: bool = False
    size_mb: float | None = None
    added_mb: float | None = None
    selection: str = ""
    test_files: int = 0
    selected_files: int = 0
    collected: int = 0
    passed: int = 0
    failed: int = 0
    # Tests that errored (named apart from ``error``, which the benchmark's executor reads as a
    # unit that did not finish).
    errored: int = 0
    skipped: int = 0
    xfailed: int = 0
    xpassed: int = 0
    collection_errors: tuple[str, ...] = ()
    # Modules the collection errors name as missing (or, for an ImportError naming none, the
    # test module that failed to import).
    missing_modules: tuple[str, ...] = ()
    run_error: str = ""
    limits_hit: tuple[str, ...] = ()
    run_s: float = 0.0
    works: bool = False
    why_not: tuple[str, ...] = ()

    @property
    def missing_module(self) -> bool:
        return bool(self.missing_modules)

    def to_json(self) -> dict[str, Any]:
        # The JSON boundary: a stored unit result, and a row of report.json.
        return self.model_dump(mode="json")

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Row:
        # The JSON boundary: a row as ``to_json`` wrote it (the executor's own entries ignored).
        return cls.model_validate(data)


def one_line(text: str, limit: int = _CAUSE_LIMIT) -> str:
    """``text`` on one line, whitespace collapsed, cut at ``limit`` characters."""
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def build_cause(message: str) -> str:
    """An ``ImageBuildError``'s message in one line, without the image's tag (the row names the
    repository) and the build log's path (the log is copied next to the report)."""
    text = re.sub(r"\s*\(build log: [^)]*\)\s*$", "", message.strip())
    text = re.sub(r"^building \S+ ", "", text)
    return one_line(text)


def missing_module(text: str) -> str | None:
    """What a collection error says is missing, when an import failed: the module pip would
    have brought (``No module named 'yaml'`` → ``yaml``), or the module a name was not found in;
    ``""`` for an import failure naming neither; None when the error is no import failure."""
    if not _IMPORT_FAILURE.search(text):
        return None
    named = _NO_MODULE.search(text)
    if named:
        return named.group(1)
    cannot = _CANNOT_IMPORT.search(text)
    if cannot:
        return cannot.group(2)
    return ""


def _counts(outcomes: Mapping[str, Outcome]) -> dict[str, int]:
    counts = dict.fromkeys(("passed", "failed", "errored", "skipped", "xfailed", "xpassed"), 0)
    for test_id, outcome in outcomes.items():
        if "::" not in test_id:
            continue  # a module's collection error: counted apart
        key = outcome.value if outcome not in (Outcome.ERROR, Outcome.MISSING) else "errored"
        counts[key] += 1
    return counts


def _run_problem(run: TestRun) -> str:
    """Why a run did not finish on its own ("" when it did): its error, or the time limit (a
    suite stopped at its deadline reports only the tests that ran before)."""
    if run.error:
        return run.error
    if "timeout" in run.limits_hit:
        return f"stopped at the time limit after {run.duration_s:.0f} s"
    return ""


def judge(
    build_ok: bool,
    collected: int,
    failing: int,
    missing_modules: tuple[str, ...],
    run_error: str,
) -> tuple[bool, tuple[str, ...]]:
    """Whether a suite works, and every reason it does not."""
    if not build_ok:
        return False, ("the environment did not build",)
    why: list[str] = []
    if run_error:
        why.append(f"the run did not finish: {one_line(run_error, 120)}")
    if collected == 0:
        why.append("no test collected")
    if missing_modules:
        named = ", ".join(m for m in missing_modules if m) or "an import"
        why.append(f"a module does not collect: missing {named}")
    if collected and failing > FAILING_SHARE * collected:
        why.append(f"{failing} of {collected} tests failed or errored (> {FAILING_SHARE:.0%})")
    return not why, tuple(why)


def make_row(
    repo: str,
    commit: str,
    detected: Detection,
    build: Build,
    selection: Selection | None = None,
    run: TestRun | None = None,
) -> Row:
    """The row of a repository whose detection ran: its build, and its run when it built."""
    spec = detected.spec
    fields: dict[str, object] = {
        "repo": repo,
        "commit": commit,
        "sources": dict(detected.sources),
        "python": spec.python,
        "install": spec.install,
        "test_requirements": spec.test_requirements,
        "test_cmd": spec.test_cmd,
        "build_ok": build.ok,
        "build_cause": build.cause,
        "image": build.image,
        "build_s": build.build_s,
        "build_wall_s": build.wall_s,
        "built_now": build.built_now,
        "size_mb": build.size_mb,
        "added_mb": build.added_mb,
    }
    if selection is not None:
        fields |= {
            "selection": selection.sentence(),
            "test_files": selection.test_files,
            "selected_files": len(selection.files) or selection.test_files,
        }
    collected = failing = 0
    missing: list[str] = []
    if run is not None:
        counts = _counts(run.outcomes)
        collected = sum(counts.values())
        failing = counts["failed"] + counts["errored"]
        broken = sorted(t for t, o in run.outcomes.items() if "::" not in t and o is Outcome.ERROR)
        for module in broken:
            name = missing_module(run.failures.get(module, ""))
            if name is not None:
                missing.append(name or module)
        fields |= {
            **counts,
            "collected": collected,
            "collection_errors": tuple(broken),
            "missing_modules": tuple(dict.fromkeys(missing)),
            "run_error": one_line(_run_problem(run)),
            "limits_hit": tuple(sorted(run.limits_hit)),
            "run_s": round(run.duration_s, 1),
        }
    run_error = str(fields.get("run_error", ""))
    works, why = judge(build.ok, collected, failing, tuple(dict.fromkeys(missing)), run_error)
    if build.ok and run is None:
        works, why = False, ("the tests did not run",)
    return Row.model_validate({**fields, "works": works, "why_not": why})


def failed_row(repo: str, commit: str, failure: str, detected: Detection | None = None) -> Row:
    """The row of a repository that stopped before its build: no clone, no such commit, a
    detection that raised (``failure`` says which, in one line)."""
    spec: dict[str, object] = {}
    if detected is not None:
        spec = {
            "sources": dict(detected.sources),
            "python": detected.spec.python,
            "install": detected.spec.install,
            "test_requirements": detected.spec.test_requirements,
            "test_cmd": detected.spec.test_cmd,
        }
    return Row.model_validate(
        {
            "repo": repo,
            "commit": commit,
            **spec,
            "failure": one_line(failure),
            "works": False,
            "why_not": (one_line(failure, 120),),
        }
    )
