"""``run_tests``: one sandboxed pytest run of a snapshot plus patches in an environment image."""

from __future__ import annotations

import io
import json
import tarfile
from collections.abc import Iterator, Sequence
from typing import Any

import docker

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.env.envspec import manifests_fingerprint
from reprobot.validation.results.coverage_report import (
    parse_contexts_json,
    parse_coverage_json,
    with_contexts,
)
from reprobot.validation.results.junit import parse_junit
from reprobot.validation.results.testrun import FileCoverage, Outcome, PatchResult, TestRun
from reprobot.validation.sandbox.container import (
    ContainerResult,
    ContainerSpec,
    reap,
    run_container,
)
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.sandbox.scripts import script_text
from reprobot.validation.sandbox.tarstream import small_tar
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot

SANDBOX_USER = "1000:1000"
REPO_ROOT = "/work/repo"
# The image's build artifacts (egg-info, generated version files) go back next to the fresh tree
# unless the run re-installs; then the runner starts.
_COMMAND = (
    "tar -x -i -f - -C /work"
    ' && if [ "$REPROBOT_REINSTALL" != 1 ] && [ -f /opt/reprobot/repo-build.tar ];'
    " then tar -x -f /opt/reprobot/repo-build.tar -C /work/repo; fi"
    " && exec python /work/.reprobot/runner.py"
)


def sandbox_spec(image: str, limits: RunLimits, environment: dict[str, str]) -> ContainerSpec:
    """The locked-down container of a test run: no network, no capabilities, read-only root."""
    return ContainerSpec(
        image=image,
        command=["/bin/sh", "-c", _COMMAND],
        purpose="test-run",
        user=SANDBOX_USER,
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
    )


def _inputs(
    snapshot: RepoSnapshot, job: dict[str, Any], patches: Sequence[Patch]
) -> Iterator[bytes]:
    yield from snapshot.iter_tar("repo/")
    files = {
        ".reprobot/job.json": json.dumps(job).encode(),
        ".reprobot/runner.py": script_text("runner.py"),
        ".reprobot/cov.py": script_text("cov.py"),
        ".reprobot/cov_contexts.py": script_text("cov_contexts.py"),
    }
    for i, patch in enumerate(patches):
        files[f".reprobot/patches/{i:03d}.diff"] = patch.diff.encode("utf-8", "surrogateescape")
    yield small_tar(files)


def _read_results(stdout: bytes) -> dict[str, bytes]:
    try:
        with tarfile.open(fileobj=io.BytesIO(stdout)) as tar:
            out = {}
            for member in tar.getmembers():
                fh = tar.extractfile(member)
                if fh is not None:
                    out[member.name] = fh.read()
            return out
    except tarfile.TarError:
        return {}


def run_tests(
    client: docker.DockerClient,
    env: EnvImage,
    snapshot: RepoSnapshot,
    patches: Sequence[Patch] = (),
    selection: Sequence[str] = (),
    coverage: bool = False,
    limits: RunLimits | None = None,
    contexts: bool = False,
) -> TestRun:
    """Run the environment's test command on ``snapshot`` with ``patches`` applied, in a sandbox.

    ``selection`` narrows the run to test ids or files (empty: the whole suite); ``contexts``
    (with ``coverage``) records which test function ran each line. A patch that
    does not apply, an install that fails or a limit that is hit is part of the result, not an
    exception; only a failure of Docker itself raises.
    """
    limits = limits or RunLimits()
    reap(client)
    reinstall = (not env.editable) or manifests_fingerprint(snapshot, env.spec) != env.manifests
    job = {
        "patches": [{"name": p.name, "file": f"{i:03d}.diff"} for i, p in enumerate(patches)],
        "reinstall": reinstall,
        "test_cmd": env.spec.test_cmd,
        "selection": list(selection),
        "coverage": coverage,
        "coverage_contexts": coverage and contexts,
        "env": env.spec.env,
        # The runner stops pytest a little before the host's deadline, so that whatever pytest
        # reported so far still comes back.
        "timeout_s": max(10.0, limits.timeout_s - 30.0),
    }
    environment = {
        **_blank_build_settings(client, env.tag),
        "HOME": "/work/home",
        "LANG": "C.UTF-8",
        "REPROBOT_REINSTALL": "1" if reinstall else "0",
        **env.spec.env,
    }
    result = run_container(
        client,
        sandbox_spec(env.tag, limits, environment),
        _inputs(snapshot, job, patches),
        timeout_s=limits.timeout_s,
        output_cap_bytes=limits.output_cap_bytes,
    )
    return _to_testrun(result, _read_results(result.stdout), snapshot, selection, bool(patches))


def _blank_build_settings(client: docker.DockerClient, image: str) -> dict[str, str]:
    """Empty values for the image's PIP_* variables.

    An environment image keeps the environment of the build that committed it, and that build
    had the host's index settings, credentials in index URLs included; a run must not see them.
    """
    config = client.images.get(image).attrs.get("Config") or {}
    names = (item.partition("=")[0] for item in config.get("Env") or [])
    return {name: "" for name in names if name.startswith("PIP_")}


def _limits_hit(result: ContainerResult) -> frozenset[str]:
    hit = set()
    if result.timed_out:
        hit.add("timeout")
    if result.output_capped:
        hit.add("output")
    if result.oom_killed or result.exit_code == 137:
        hit.add("memory")
    return frozenset(hit)


def _to_testrun(
    result: ContainerResult,
    files: dict[str, bytes],
    snapshot: RepoSnapshot,
    selection: Sequence[str],
    job_patches: bool,
) -> TestRun:
    status: dict[str, Any] = json.loads(files["status.json"]) if "status.json" in files else {}
    repo_files = set(snapshot.list_files())
    outcomes: dict[str, Outcome] = {}
    failures: dict[str, str] = {}
    if "junit.xml" in files:
        outcomes, failures = parse_junit(files["junit.xml"], repo_files)
    if status.get("pytest_exit") == -9:
        limits_hit = _limits_hit(result) | {"timeout"}
    else:
        limits_hit = _limits_hit(result)
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
    if "coverage.json" in files:
        coverage = parse_coverage_json(files["coverage.json"], REPO_ROOT)
        if "contexts.json" in files:
            contexts_by_file = parse_contexts_json(files["contexts.json"], REPO_ROOT)
            coverage = with_contexts(coverage, contexts_by_file)
    log = files.get("pytest.log", b"") or files.get("install.log", b"")
    error = None
    if not status:
        error = "the sandbox returned no result" + (
            f" (limits hit: {', '.join(sorted(limits_hit))})" if limits_hit else ""
        )
        stderr = result.stderr.decode("utf-8", "replace")[-2000:]
        log = log or stderr.encode()
    elif status.get("install", {}).get("ok") is False:
        error = "re-installing the project failed"
        log = files.get("install.log", b"")
    return TestRun(
        outcomes=outcomes,
        # Without a status the runner died before reporting: nothing is known to have applied.
        patches_applied=bool(status.get("patches_applied", not job_patches)),
        failures=failures,
        patches=tuple(
            PatchResult(p["name"], bool(p["applied"]), p.get("method"), p.get("output", ""))
            for p in status.get("patches", [])
        ),
        install_ok=bool(status.get("install", {}).get("ok", bool(status))),
        pytest_exit=status.get("pytest_exit"),
        log_excerpt=log.decode("utf-8", "replace")[-20000:],
        duration_s=result.duration_s,
        coverage=coverage,
        limits_hit=limits_hit,
        selection_mode=status.get("selection_mode", "ids"),
        error=error,
    )
