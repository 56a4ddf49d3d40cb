"""The reproduce job: an issue's reproducing test, drafted and confirmed on the default branch
head, stored, and shown on the issue as one comment and a label."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from reprobot.bot.github.auth import REPRODUCE_PERMISSIONS
from reprobot.bot.jobs import setup as job_setup
from reprobot.bot.jobs.labels import apply_label
from reprobot.bot.jobs.report_pages import link_line, publish
from reprobot.bot.metrics import MetricsProgress
from reprobot.bot.pages.documents import environment_view, reproduction_page
from reprobot.bot.render.reproduction import (
    REPRODUCTION_MARKER,
    render_not_reproduced,
    render_reproduction,
)
from reprobot.bot.render.setup_failure import render_setup_failed
from reprobot.bot.store.jobs import Job
from reprobot.bot.store.records import ReproductionRecord
from reprobot.generation import Reproduction
from reprobot.validation import ImageBuildError

if TYPE_CHECKING:
    from reprobot.bot.context import AppContext
    from reprobot.bot.jobs.guard import Guard

log = structlog.get_logger(__name__)
COMMENT_KIND = "reproduction"


def run(ctx: AppContext, job: Job, guard: Guard) -> None:
    session = job_setup.open_repo(ctx, job, REPRODUCE_PERMISSIONS)
    config = session.config.config
    trigger = job_setup.trigger(job)
    if not job_setup.may_run(session, job, config.events.issues):
        return
    issue = session.api.issue(job.number)
    if issue.is_pull or issue.state != "open":
        log.info("reproduce.skipped", state=issue.state, is_pull=issue.is_pull)
        return
    stored = ctx.records.reproduction(job.repo, job.number)
    if trigger == "edited" and stored is not None and stored.reproduced:
        log.info("reproduce.already_reproduced")
        return

    mirror = job_setup.fetch(
        ctx.settings.cache_dir,
        session,
        [session.default_sha, f"refs/heads/{session.info.default_branch}"],
    )
    snapshot = job_setup.snapshot(mirror, session, session.default_sha)
    detected = job_setup.detected_environment(session, snapshot)
    try:
        env = job_setup.environment(ctx, detected, snapshot)
    except ImageBuildError as exc:
        # Trying again builds the same thing: the maintainer is told what failed and how to set
        # the environment up instead, and the job ends.
        log.warning("reproduce.setup_failed", error=str(exc))
        guard.check()
        body = render_setup_failed(
            marker=REPRODUCTION_MARKER,
            repo=job.repo,
            sha=snapshot.sha,
            error=str(exc),
            cause=exc.cause,
            detected=detected,
        )
        known = ctx.records.comment_id(job.repo, job.number, COMMENT_KIND)
        comment_id = session.api.upsert_comment(job.number, REPRODUCTION_MARKER, body, known)
        ctx.records.save_comment_id(job.repo, job.number, COMMENT_KIND, comment_id)
        return
    guard.check()
    result = job_setup.draft(ctx, issue, snapshot, env, MetricsProgress(ctx.metrics))
    log.info(
        "reproduce.finished",
        reproduced=result.reproduced,
        method=result.chosen.draft.method if result.chosen else None,
        sandbox_runs=result.sandbox_runs,
        duration_s=round(result.duration_s, 2),
    )
    # Nothing is written once a newer request owns this issue or the lease is gone.
    guard.check()
    # A rerun that fails to reproduce never replaces a test that did.
    if result.reproduced or stored is None or not stored.reproduced:
        ctx.records.save_reproduction(_record(job, result))
    errors = session.config.errors
    # Labelled, and said "Reproduced", only as sure as the dev sets showed the label to be right;
    # below that the comment says it probably reproduces the issue, and what to check.
    confidence = result.confidence
    labelled = result.reproduced and confidence.score >= ctx.settings.label_min_confidence
    if result.reproduced:
        body = render_reproduction(
            repo=job.repo,
            issue_number=job.number,
            base_sha=result.base_sha,
            test_patch=result.test_patch,
            failing_tests=result.failing_tests,
            failure=result.failure_excerpt,
            method=result.chosen.draft.method if result.chosen else "",
            test_command=detected.spec.test_cmd,
            config_errors=errors,
            oracle=result.chosen.oracle if result.chosen else None,
            to_check=None if labelled else confidence.to_check,
        )
    elif config.comment_on_failure or trigger.startswith("command:"):
        # Someone asked explicitly: an answer is owed even when it is "not reproduced".
        tried = [(c.draft.method, c.outcome.value, c.reason) for c in result.candidates]
        tried += [(method, "no draft", why) for method, why in result.rejected]
        body = render_not_reproduced(
            repo=job.repo, base_sha=result.base_sha, tried=tried, config_errors=errors
        )
    else:
        return
    page = reproduction_page(
        result,
        repo=job.repo,
        issue=job.number,
        test_command=detected.spec.test_cmd,
        config_errors=errors,
        environment=environment_view(env),
        issue_title=issue.title,
        probably=result.reproduced and not labelled,
    )
    status = "reproduced" if result.reproduced else "not_reproduced"
    body += link_line(
        publish(ctx, job.repo, job.number, None, status, page, private=session.info.private)
    )
    known = ctx.records.comment_id(job.repo, job.number, COMMENT_KIND)
    comment_id = session.api.upsert_comment(job.number, REPRODUCTION_MARKER, body, known)
    ctx.records.save_comment_id(job.repo, job.number, COMMENT_KIND, comment_id)
    if labelled:
        apply_label(
            session.api,
            ctx.records,
            job.number,
            config.labels.reproduced,
            issue.labels,
            "reproduced",
        )


def _record(job: Job, result: Reproduction) -> ReproductionRecord:
    return ReproductionRecord(
        repo=job.repo,
        issue_number=job.number,
        base_sha=result.base_sha,
        reproduced=result.reproduced,
        test_patch=result.test_patch,
        failing_tests=tuple(result.failing_tests),
        failure=result.failure_excerpt,
        method=result.chosen.draft.method if result.chosen else "",
        candidates=tuple(c.to_json() for c in result.candidates),
    )
