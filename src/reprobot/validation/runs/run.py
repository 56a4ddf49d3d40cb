"""``run_tests``: one sandboxed pytest run of a snapshot plus patches in an environment image."""

from __future__ import annotations

import json
import re
from collections.abc import Collection, Iterator, Mapping, Sequence
from typing import Any

import docker

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.env.envspec import (
    compiled_fingerprint,
    is_compiled_source,
    is_manifest,
    manifests_fingerprint,
)
from reprobot.validation.results.coverage_report import (
    CoverageDataError,
    parse_contexts_json,
    parse_coverage_json,
    with_contexts,
)
from reprobot.validation.results.junit import JUnitError, parse_junit
from reprobot.validation.results.sandbox_result import (
    RunnerStatus,
    SandboxResult,
    announced_sandbox,
    collected_only,
    read_result,
)
from reprobot.validation.results.testrun import FileCoverage, Outcome, PatchResult, TestRun
from reprobot.validation.sandbox.container import (
    ContainerResult,
    ContainerSpec,
    run_container,
)
from reprobot.validation.sandbox.determinism import HASH_SEED, pinned_environment
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.sandbox.reaper import reap
from reprobot.validation.sandbox.scripts import script_text
from reprobot.validation.sandbox.tarstream import small_tar
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot

# The user everything of the project runs as, inside the sandbox.
SANDBOX_USER = "1000:1000"
REPO_ROOT = "/work/repo"
# The runner's only capabilities: to become the sandbox user (dropping every capability, the
# bounding set included), to kill what the tests leave behind, and to give the loopback
# interface the addresses any CI runner has (it has no other). The project's code has none.
RUNNER_CAPABILITIES = ("SETUID", "SETGID", "SETPCAP", "KILL", "NET_ADMIN")


def runner_command() -> list[str]:
    """The runner, as source on its command line (nothing the tests can write is ever on its
    path): isolated mode, and no site, so no .pth file of the project runs in it."""
    return ["python", "-I", "-S", "-c", script_text("runner.py").decode("utf-8")]


def sandbox_spec(image: str, limits: RunLimits, environment: dict[str, str]) -> ContainerSpec:
    """The locked-down container of a test run: no network, read-only root, the runner as root
    with five capabilities and the project's code as the sandbox user with none."""
    return ContainerSpec(
        image=image,
        command=runner_command(),
        purpose="test-run",
        user="0",
        environment=environment,
        working_dir="/work",
        network="none",
        read_only=True,
        tmpfs={
            "/work": f"rw,exec,nosuid,nodev,size={limits.workdir_mb}m,mode=1777",
            "/tmp": f"rw,exec,nosuid,nodev,size={limits.tmp_mb}m,mode=1777",
        },
        memory_mb=limits.memory_mb,
        cpus=limits.cpus,
        pids=limits.pids,
        drop_capabilities=True,
        capabilities=RUNNER_CAPABILITIES,
    )


def _inputs(
    snapshot: RepoSnapshot, job: dict[str, Any], patches: Sequence[Patch]
) -> Iterator[bytes]:
    yield from snapshot.iter_tar("repo/")
    files = {
        ".reprobot/job.json": json.dumps(job).encode(),
        ".reprobot/cov.py": script_text("cov.py"),
        ".reprobot/cov_contexts.py": script_text("cov_contexts.py"),
        ".reprobot/reprobot_report.py": script_text("reprobot_report.py"),
        ".reprobot/reprobot_unittest.py": script_text("reprobot_unittest.py"),
    }
    for i, patch in enumerate(patches):
        files[f".reprobot/patches/{i:03d}.diff"] = patch.diff.encode("utf-8", "surrogateescape")
    yield small_tar(files)


def needs_reinstall(
    env: EnvImage, snapshot: RepoSnapshot, patches: Sequence[Patch], trusted_build: bool = True
) -> bool:
    """Whether a run must install the project again before testing: the image's install is not
    editable, the tree's manifests or compiled sources are not those the image installed, or a
    patch changes a manifest or a compiled source (its extension must be built from it).

    Without ``trusted_build`` (the side of a verdict that holds the change under judgement), a
    tree or patch whose manifests are not the image's is never installed again: installing runs
    their build code, which must not run before the verdict's tests do. Such a change needs
    review whatever its tests say (``source.allowlist``)."""
    manifests_changed = manifests_fingerprint(snapshot, env.spec) != env.manifests or any(
        is_manifest(f) for p in patches for f in p.files
    )
    if manifests_changed and not trusted_build:
        return False
    if not env.editable or manifests_changed:
        return True
    if env.compiled and compiled_fingerprint(snapshot) != env.compiled:
        return True
    return any(is_manifest(f) or is_compiled_source(f) for p in patches for f in p.files)


def run_tests(
    client: docker.DockerClient,
    env: EnvImage,
    snapshot: RepoSnapshot,
    patches: Sequence[Patch] = (),
    selection: Sequence[str] = (),
    coverage: bool = False,
    limits: RunLimits | None = None,
    contexts: bool = False,
    coverage_files: Sequence[str] = (),
    trusted_build: bool = True,
    hash_seed: int = HASH_SEED,
) -> TestRun:
    """Run the environment's test command on ``snapshot`` with ``patches`` applied, in a sandbox.

    ``selection`` narrows the run to test ids or files (empty: the whole suite); ``contexts``
    (with ``coverage``) records which test function ran each line; ``coverage_files`` narrows
    coverage to those files (a fix's: every reader of a verdict's coverage reads only them, and
    a tracer that follows no other file's lines runs far faster); ``trusted_build`` as
    ``needs_reinstall`` takes it; ``hash_seed`` is the run's ``PYTHONHASHSEED`` (with the time
    zone and locale pinned, ``determinism``). A patch that
    does not apply, an install that fails or a limit that is hit is part of the result, not an
    exception; only a failure of Docker itself raises.
    """
    limits = limits or RunLimits()
    reap(client)
    reinstall = needs_reinstall(env, snapshot, patches, trusted_build)
    job = {
        "patches": [{"name": p.name, "file": f"{i:03d}.diff"} for i, p in enumerate(patches)],
        "reinstall": reinstall,
        "test_cmd": env.spec.test_cmd,
        "selection": list(selection),
        "coverage": coverage,
        "coverage_contexts": coverage and contexts,
        "coverage_files": list(coverage_files) if coverage else [],
        "env": env.spec.env,
        # The runner stops pytest a little before the host's deadline, so that whatever pytest
        # reported so far still comes back.
        "timeout_s": max(10.0, limits.timeout_s - 30.0),
    }
    environment = {
        **_blank_build_settings(client, env.tag),
        "HOME": "/work/home",
        "LANG": "C.UTF-8",
        **pinned_environment(hash_seed),
        **env.spec.env,
    }
    result = run_container(
        client,
        sandbox_spec(env.tag, limits, environment),
        _inputs(snapshot, job, patches),
        timeout_s=limits.timeout_s,
        output_cap_bytes=limits.output_cap_bytes,
    )
    return to_testrun(
        result, read_result(result.stdout), snapshot.list_files(), selection, bool(patches)
    )


def _blank_build_settings(client: docker.DockerClient, image: str) -> dict[str, str]:
    """Empty values for the image's PIP_* variables.

    An environment image keeps the environment of the build that committed it, and that build
    had the host's index settings, credentials in index URLs included; a run must not see them.
    """
    config = client.images.get(image).attrs.get("Config") or {}
    names = (item.partition("=")[0] for item in config.get("Env") or [])
    return {name: "" for name in names if name.startswith("PIP_")}


def limits_hit(result: ContainerResult, status: RunnerStatus | None) -> frozenset[str]:
    """The limits a run hit, as the engine and the runner saw them: memory only when the kernel
    killed a process for it, never for any exit 137."""
    hit = set()
    if result.timed_out or (status is not None and status.pytest_exit == -9):
        hit.add("timeout")
    if result.output_capped:
        hit.add("output")
    if result.oom_killed or (status is not None and (status.oom_kills or 0) > 0):
        hit.add("memory")
    return frozenset(hit)


def _no_result(result: ContainerResult, hit: frozenset[str]) -> str:
    """Why no usable result came back, in words."""
    if result.removed:
        return "the sandbox container was removed by another process before the run ended"
    if "timeout" in hit:
        return f"the run passed its deadline ({result.duration_s:.0f} s) and was stopped"
    if "output" in hit:
        return "the run printed past its output cap and was stopped"
    if "memory" in hit:
        return "the sandbox ran out of memory before the runner reported"
    if result.exit_code == 137:
        return "the runner was killed (exit 137) before it reported"
    return f"the runner stopped without reporting (exit {result.exit_code})"


def _pytest_problem(status: RunnerStatus, hit: frozenset[str]) -> str | None:
    """What went wrong with pytest itself, when it did not finish on its own."""
    code = status.pytest_exit
    if code is None or "timeout" in hit:
        return None
    if code > 128 and code - 128 == 9:
        if "memory" in hit:
            return "pytest was killed by the memory limit"
        return "pytest was killed (signal 9)"
    if code > 128:
        return f"pytest was killed by signal {code - 128}"
    return None


def exit_disagrees(code: int | None, outcomes: Mapping[str, Outcome]) -> str | None:
    """Why pytest's exit status, which the runner got from the kernel, contradicts the report
    (written inside pytest's process, where the code under test runs too): exit 0 with a failed
    test, or exit 1 ("tests failed") with none."""
    failed = sum(1 for o in outcomes.values() if o in (Outcome.FAILED, Outcome.ERROR))
    if code == 0 and failed:
        return (
            f"pytest exited 0 but its report has {failed} failed test(s): the report is not "
            "pytest's own account of the run"
        )
    if code == 1 and not failed:
        return (
            "pytest exited 1 (tests failed) but its report has no failed test: the report is "
            "not pytest's own account of the run"
        )
    return None


_ERROR_LINE = re.compile(r"^(?:E\s+)?([A-Za-z_][\w.]*(?:Error|Exception|Exit)\b.*)$")


def _last_error_line(log: bytes) -> str:
    """``: <the last exception line of the log>`` (what stopped the runner before it could
    report), or nothing; the log is the project's output, so it is cut short and only quoted."""
    for line in reversed(log.decode("utf-8", "replace").splitlines()[-400:]):
        match = _ERROR_LINE.match(line.strip())
        if match:
            return f": {match.group(1)[:300]}"
    return ""


def _reported(
    junit: bytes, status: RunnerStatus, repo_files: Collection[str], hit: frozenset[str]
) -> tuple[dict[str, Outcome], dict[str, str], list[str], str | None]:
    """What a report that came back says: outcomes and failure details of the tests pytest
    collected, the ids of those it never collected, and why the run is in error, if it is."""
    tool = "pytest" if status.tool == "pytest" else "the unittest runner"
    try:
        outcomes, failures = parse_junit(junit, repo_files, status.collected or ())
    except JUnitError as exc:
        return {}, {}, [], f"{tool}'s report is unreadable: {exc}"
    if status.collected is None:
        return {}, {}, [], f"{tool} never said what it collected"
    # Only what pytest collected counts, and the exit status is checked against that alone: a
    # stray failure in the report cannot make up for forged passes.
    outcomes, unmatched = collected_only(outcomes, status.collected)
    failures = {t: d for t, d in failures.items() if t in outcomes}
    for test_id in status.xpassed:
        if outcomes.get(test_id) is Outcome.PASSED:
            outcomes[test_id] = Outcome.XPASSED
    error = _pytest_problem(status, hit)
    if error is None and status.tool == "pytest":
        error = exit_disagrees(status.pytest_exit, outcomes)
    return outcomes, failures, unmatched, error


def to_testrun(
    result: ContainerResult,
    sandbox: SandboxResult,
    repo_files: Collection[str],
    selection: Sequence[str],
    patched: bool = False,
) -> TestRun:
    """A ``TestRun`` from what came back, checked: every malformed, missing or inconsistent
    part becomes the run's ``error``, never an exception."""
    status = sandbox.status
    hit = limits_hit(result, status)
    files = sandbox.files
    log = files.get("pytest.log", b"") or files.get("install.log", b"")
    if status is None:
        stderr = result.stderr.decode("utf-8", "replace")[-2000:]
        return TestRun(
            outcomes={t: Outcome.MISSING for t in selection if "::" in t},
            # Nothing is known to have applied, unless there was nothing to apply.
            patches_applied=not patched,
            install_ok=False,
            log_excerpt=(log.decode("utf-8", "replace") or stderr)[-20000:],
            duration_s=result.duration_s,
            limits_hit=hit,
            error=sandbox.problem or _no_result(result, hit),
            sandbox_id=announced_sandbox(result.stderr),
        )
    outcomes: dict[str, Outcome] = {}
    failures: dict[str, str] = {}
    unmatched: list[str] = []
    error: str | None = status.error
    if status.ran:
        junit = files.get("junit.xml")
        tool = "pytest" if status.tool == "pytest" else "the unittest runner"
        if status.report_problem:
            error = f"{tool}'s report cannot be trusted: {status.report_problem}"
        elif junit is None and "timeout" in hit:
            # Stopped at the time limit: the selected tests are missing, and limits_hit says why.
            error = None
        elif junit is None:
            error = _pytest_problem(status, hit) or (
                f"{tool} wrote no report (exit {status.pytest_exit})"
                + _last_error_line(files.get("pytest.log", b""))
            )
        else:
            outcomes, failures, unmatched, error = _reported(junit, status, repo_files, hit)
    # A selected test that pytest never reported is missing, or an error when its module
    # failed to collect.
    for test_id in selection:
        if test_id in outcomes or "::" not in test_id:
            continue
        module = test_id.split("::", 1)[0]
        outcomes[test_id] = (
            Outcome.ERROR if outcomes.get(module) is Outcome.ERROR else Outcome.MISSING
        )
    coverage: dict[str, FileCoverage] | None = None
    if "coverage.json" in files and error is None:
        try:
            coverage = parse_coverage_json(files["coverage.json"], REPO_ROOT)
            if "contexts.json" in files:
                contexts_by_file = parse_contexts_json(files["contexts.json"], REPO_ROOT)
                coverage = with_contexts(coverage, contexts_by_file)
        except CoverageDataError as exc:
            coverage = None
            error = f"the coverage data is unreadable: {exc}"
    install = status.install
    if install is not None and install.missing:
        error = error or (
            f"the tree requires {', '.join(install.missing)}, which the environment does not "
            "have: its manifests changed since the environment was built; build the "
            "environment from a trusted commit with these manifests"
        )
        log = files.get("install.log", b"")
    elif install is not None and not install.ok:
        error = error or "re-installing the project failed"
        log = files.get("install.log", b"")
    return TestRun(
        outcomes=outcomes,
        patches_applied=bool(status.patches_applied),
        failures=failures,
        patches=tuple(PatchResult(p.name, p.applied, p.method, p.output) for p in status.patches),
        install_ok=install.ok if install is not None else True,
        pytest_exit=status.pytest_exit,
        log_excerpt=log.decode("utf-8", "replace")[-20000:],
        duration_s=result.duration_s,
        coverage=coverage,
        limits_hit=hit,
        selection_mode=status.selection_mode,
        error=error,
        sandbox_id=status.sandbox,
        unmatched=tuple(unmatched),
    )
