"""The same tests run before and after a fix: the one pair of sandbox runs every verdict and
benchmark grades.

Each side is a tree and the patches applied to it, in order (the reproducing tests last, so a
fix cannot rewrite them). The two runs share nothing, so by default they run at once, in two
sandboxes: a verdict takes the time of its slower side instead of the sum of both. Each sandbox
keeps its own limits, so a pair run at once can hold twice one run's memory and processes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import docker

from reprobot.validation.env.env_image import EnvImage
from reprobot.validation.results.testrun import FileCoverage, TestRun
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.determinism import HASH_SEED
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.source.patch import Patch
from reprobot.validation.source.snapshot import RepoSnapshot

Coverage = Mapping[str, FileCoverage] | None


@dataclass(frozen=True)
class Side:
    """One side of a pair: a tree, and the patches applied to it in order."""

    tree: RepoSnapshot
    patches: Sequence[Patch] = ()
    # False for the side holding a change under judgement: its build code never runs
    # (``run.needs_reinstall``).
    trusted_build: bool = True


@dataclass(frozen=True)
class RunPair:
    """The runs of the same tests before (R) and after the fix."""

    before: TestRun
    after: TestRun

    @property
    def coverage(
        self,
    ) -> tuple[Mapping[str, FileCoverage] | None, Mapping[str, FileCoverage] | None]:
        return self.before.coverage, self.after.coverage


def run_side(
    client: docker.DockerClient,
    env: EnvImage,
    side: Side,
    selection: Sequence[str],
    *,
    coverage: bool = False,
    contexts: bool = False,
    coverage_files: Sequence[str] = (),
    limits: RunLimits | None = None,
    hash_seed: int = HASH_SEED,
) -> TestRun:
    """One side of a pair, alone: for a benchmark whose candidates share one before side, each
    candidate's after side runs as every pair runs it (its build code only when trusted)."""
    return run_tests(
        client,
        env,
        side.tree,
        side.patches,
        selection,
        coverage=coverage,
        limits=limits,
        contexts=contexts,
        coverage_files=coverage_files,
        trusted_build=side.trusted_build,
        hash_seed=hash_seed,
    )


def run_pair(
    client: docker.DockerClient,
    env: EnvImage,
    before: Side,
    after: Side,
    selection: Sequence[str],
    *,
    coverage: bool = False,
    contexts: bool = False,
    coverage_files: Sequence[str] = (),
    limits: RunLimits | None = None,
    at_once: bool = True,
    hash_seed: int = HASH_SEED,
) -> RunPair:
    """Run ``selection`` on both sides, as ``run_tests`` runs it, under one hash seed (a test
    whose outcome the seed decides cannot pass on one side by the draw alone); with ``at_once``
    the two sandboxes run side by side. An error of Docker itself on either side raises, as it
    does in ``run_tests``."""

    def run(side: Side) -> TestRun:
        return run_side(
            client,
            env,
            side,
            selection,
            coverage=coverage,
            limits=limits,
            contexts=contexts,
            coverage_files=coverage_files,
            hash_seed=hash_seed,
        )

    if not at_once:
        return RunPair(run(before), run(after))
    with ThreadPoolExecutor(max_workers=2, thread_name_prefix="sandbox-pair") as pool:
        first, second = pool.submit(run, before), pool.submit(run, after)
        return RunPair(first.result(), second.result())
