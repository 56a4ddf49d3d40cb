"""What every job does first: a narrowed token, the repository's facts and configuration, the
commits it needs, and the environment to test them in."""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from reprobot.bot.config.repo_file import ConfigResult, parse_repo_config
from reprobot.bot.context import AppContext
from reprobot.bot.errors import GitHubError
from reprobot.bot.github import mirror as git_mirror
from reprobot.bot.github.auth import InstallationAuth
from reprobot.bot.github.repo_api import IssueInfo, RepoAPI, RepoInfo
from reprobot.bot.metrics import MetricsProgress
from reprobot.bot.store.jobs import Job
from reprobot.generation import Reproduction, bind_llm_drafter, parse_issue, reproduce
from reprobot.progress import Progress
from reprobot.validation import (
    CONFIG_PATH,
    Detection,
    EnvImage,
    Patch,
    RepoSnapshot,
    detect_environment,
    ensure_environment,
)

log = structlog.get_logger(__name__)

# People whose say counts for a command even when their association is not listed: GitHub's
# permission levels that can push.
_WRITERS = frozenset({"admin", "maintain", "write"})


@dataclass(frozen=True)
class RepoSession:
    """One job's view of its repository."""

    api: RepoAPI
    auth: InstallationAuth
    info: RepoInfo
    default_sha: str
    config: ConfigResult


def open_repo(ctx: AppContext, job: Job, permissions: Mapping[str, str]) -> RepoSession:
    """Token, repository, default branch head and ``.github/reprobot.yml`` for ``job``."""
    auth = ctx.github.installation(job.installation_id, job.repo, permissions)
    api = RepoAPI(ctx.github.client_for(auth), job.repo, ctx.github.app_id, ctx.github.bot_login())
    info = api.repository()
    default_sha = api.branch_sha(info.default_branch)
    config = parse_repo_config(api.file_text(CONFIG_PATH, default_sha))
    if config.errors:
        log.warning("config.invalid", errors=list(config.errors))
    return RepoSession(api, auth, info, default_sha, config)


def trigger(job: Job) -> str:
    """What started the job: ``opened``, ``edited``, ``synchronize``, ``command:verify`` ..."""
    return str(job.payload.get("trigger", "opened"))


def may_run(session: RepoSession, job: Job, event_enabled: bool) -> bool:
    """Whether the repository lets this job run: a command needs commands switched on and a
    person allowed to use them; anything else needs its event switched on."""
    config = session.config.config
    if trigger(job).startswith("command:"):
        if config.events.commands and command_allowed(session, job.payload):
            return True
        log.info("job.command_refused", by=job.payload.get("requested_by"))
        return False
    if not event_enabled:
        log.info("job.disabled_by_config")
    return event_enabled


def command_allowed(session: RepoSession, payload: Mapping[str, Any]) -> bool:
    """Whether the person who commented a command may use it: their author association is one
    the configuration lists, or they can push to the repository."""
    allowed = session.config.config.commands_from
    if str(payload.get("author_association", "NONE")) in allowed:
        return True
    user = str(payload.get("requested_by", ""))
    return bool(user) and session.api.permission(user) in _WRITERS


def fetch(cache_dir: Path, session: RepoSession, refs: Sequence[str]) -> Path:
    """The local mirror of the repository, holding every commit of ``refs``. A token GitHub
    refuses (revoked since the job began) is renewed once, as for API requests."""
    token = session.auth.token
    try:
        return _fetch(cache_dir, session, refs, token.token)
    except GitHubError as exc:
        if exc.status != 401:
            raise
        rejected_at = time.monotonic()
        log.warning("github.git_token_rejected", repo=session.info.full_name)
        fresh = session.auth.renew(token, rejected_at)
        return _fetch(cache_dir, session, refs, fresh.token)


def _fetch(cache_dir: Path, session: RepoSession, refs: Sequence[str], token: str) -> Path:
    return git_mirror.fetch(cache_dir, session.info.full_name, session.info.clone_url, token, refs)


def snapshot(mirror: Path, session: RepoSession, sha: str) -> RepoSnapshot:
    return RepoSnapshot.from_git(mirror, sha, session.info.full_name)


def detected_environment(session: RepoSession, trusted: RepoSnapshot) -> Detection:
    """The environment of the repository as the command line and the benchmark detect it, with
    the settings of its configuration file as the App read them, from ``trusted`` (a commit
    of the repository's own branches)."""
    return detect_environment(trusted, settings=session.config.config)


def environment(ctx: AppContext, detected: Detection, trusted: RepoSnapshot) -> EnvImage:
    """The environment image, built (with network) only from the trusted commit."""
    return ensure_environment(
        ctx.docker,
        detected.spec,
        trusted,
        ctx.settings,
        MetricsProgress(ctx.metrics),
        sources=detected.sources,
    )


def draft(
    ctx: AppContext,
    issue: IssueInfo,
    snapshot: RepoSnapshot,
    env: EnvImage,
    progress: Progress,
    fix: Patch | None = None,
) -> Reproduction:
    """Reproduce ``issue`` on ``snapshot`` as ``reprobot reproduce`` does (with the LLM methods
    when the App has an endpoint); with ``fix``, patch-aware."""
    return reproduce(
        parse_issue(issue.title, issue.body, f"#{issue.number}"),
        snapshot,
        env,
        ctx.settings,
        client=ctx.docker,
        llm_drafter=bind_llm_drafter(ctx.settings),
        progress=progress,
        fix=fix,
    )
