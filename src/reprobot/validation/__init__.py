"""Sandboxed test runs: snapshots, environments, containers, outcomes, coverage and verdicts.

This layer imports neither ``reprobot.generation`` nor ``reprobot.bot``. What the layers above use
of it is exported here, and they import it from here only (``tests/test_architecture.py``); its
subpackages are ``source`` (the code under test), ``env`` (environments), ``sandbox`` (the
container runs) and ``results`` (outcomes, coverage, oracles, grading).
"""

from __future__ import annotations

from reprobot.validation.concerns import change_concerns
from reprobot.validation.env.base_image import DEBIAN_SUITES, ensure_base_image
from reprobot.validation.env.detect import (
    CONFIG_PATH,
    Detection,
    EnvSettings,
    detect_environment,
    read_env_settings,
)
from reprobot.validation.env.detect.settings_file import MAX_CONFIG_BYTES, Command, load_yaml
from reprobot.validation.env.env_image import EnvImage, conda_names, ensure_environment
from reprobot.validation.env.envspec import SUPPORTED_PYTHONS, DebianPackage, EnvSpec, PythonCompat
from reprobot.validation.env.image_cache import (
    CachedImage,
    cached_images,
    created_epoch,
    prune,
    unique_bytes,
)
from reprobot.validation.env.pipconf import host_index_settings
from reprobot.validation.env.test_commands import Runner, runner_family, runner_of
from reprobot.validation.errors import DockerUnavailableError, ImageBuildError, SnapshotError
from reprobot.validation.results.oracles import STRENGTH, Oracle, OracleKind, oracle_of
from reprobot.validation.results.ruling import GuardOutcomes, rule
from reprobot.validation.results.run_problem import run_problem
from reprobot.validation.results.success import (
    F2F,
    F2P,
    P2F,
    P2P,
    OutcomeReading,
    categorise,
    succeeds,
)
from reprobot.validation.results.testrun import FileCoverage, Outcome, TestRun
from reprobot.validation.results.verdict import (
    ChangeCoverage,
    FileChangeCoverage,
    Transition,
    change_coverage,
    changed_lines,
    executable_lines,
    transitions,
)
from reprobot.validation.runs.pair import RunPair, Side, run_pair, run_side
from reprobot.validation.runs.run import run_tests
from reprobot.validation.sandbox.container import connect
from reprobot.validation.sandbox.determinism import HASH_SEED, SECOND_HASH_SEED
from reprobot.validation.sandbox.determinism import describe as pinned_run_settings
from reprobot.validation.sandbox.limits import RunLimits
from reprobot.validation.sandbox.reaper import reap, remove_own, stop_sandboxes
from reprobot.validation.source.companion_tests import companion_test_modules
from reprobot.validation.source.git_changes import fix_changes
from reprobot.validation.source.partial_clone import absent_files
from reprobot.validation.source.patch import (
    Patch,
    applies_to,
    diff_between,
    patched_sources,
    test_modules,
)
from reprobot.validation.source.python_text import UNPARSABLE, UNREADABLE
from reprobot.validation.source.snapshot import RepoSnapshot
from reprobot.validation.source.workspace import clone_url, is_url
from reprobot.validation.verify import Verdict, read_oracles, verify

__all__ = [
    "CONFIG_PATH",
    "DEBIAN_SUITES",
    "F2F",
    "F2P",
    "HASH_SEED",
    "MAX_CONFIG_BYTES",
    "P2F",
    "P2P",
    "SECOND_HASH_SEED",
    "STRENGTH",
    "SUPPORTED_PYTHONS",
    "UNPARSABLE",
    "UNREADABLE",
    "CachedImage",
    "ChangeCoverage",
    "Command",
    "DebianPackage",
    "Detection",
    "DockerUnavailableError",
    "EnvImage",
    "EnvSettings",
    "EnvSpec",
    "FileChangeCoverage",
    "FileCoverage",
    "GuardOutcomes",
    "ImageBuildError",
    "Oracle",
    "OracleKind",
    "Outcome",
    "OutcomeReading",
    "Patch",
    "PythonCompat",
    "RepoSnapshot",
    "RunLimits",
    "RunPair",
    "Runner",
    "Side",
    "SnapshotError",
    "TestRun",
    "Transition",
    "Verdict",
    "absent_files",
    "applies_to",
    "cached_images",
    "categorise",
    "change_concerns",
    "change_coverage",
    "changed_lines",
    "clone_url",
    "companion_test_modules",
    "conda_names",
    "connect",
    "created_epoch",
    "detect_environment",
    "diff_between",
    "ensure_base_image",
    "ensure_environment",
    "executable_lines",
    "fix_changes",
    "host_index_settings",
    "is_url",
    "load_yaml",
    "oracle_of",
    "patched_sources",
    "pinned_run_settings",
    "prune",
    "read_env_settings",
    "read_oracles",
    "reap",
    "remove_own",
    "rule",
    "run_pair",
    "run_problem",
    "run_side",
    "run_tests",
    "runner_family",
    "runner_of",
    "stop_sandboxes",
    "succeeds",
    "test_modules",
    "transitions",
    "unique_bytes",
    "verify",
]
