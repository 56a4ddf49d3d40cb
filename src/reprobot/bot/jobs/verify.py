"""The verify job: the stored reproducing tests of the issues a pull request closes, run on its
base and head; one comment edited in place, a check run, and the ``fix-verified`` label."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

import structlog
from sqlalchemy.exc import SQLAlchemyError

from reprobot.bot.config.repo_file import RepoConfig
from reprobot.bot.errors import JobAbandoned
from reprobot.bot.github.auth import VERIFY_PERMISSIONS
from reprobot.bot.github.linked_issues import closing_references
from reprobot.bot.github.repo_api import Conclusion, PullInfo
from reprobot.bot.jobs import setup as job_setup
from reprobot.bot.jobs.attempts import tries_again
from reprobot.bot.jobs.check_run import CheckRunOwner, title_for, why
from reprobot.bot.jobs.labels import apply_label, withdraw_label
from reprobot.bot.jobs.report_pages import link_line, publish
from reprobot.bot.metrics import MetricsProgress
from reprobot.bot.pages.documents import PullPage, environment_view, pull_page
from reprobot.bot.render.markdown import inline_code
from reprobot.bot.render.pull import (
    CHECK_NAME,
    VERIFICATION_MARKER,
    IssueVerdict,
    OwnTests,
    PullReport,
    nothing_to_run,
    render_pull_report,
)
from reprobot.bot.store.jobs import LIVE_STATES, Job
from reprobot.bot.store.records import ReproductionRecord
from reprobot.progress import Progress
from reprobot.validation import (
    EnvImage,
    Patch,
    RepoSnapshot,
    RunLimits,
    SnapshotError,
    diff_between,
    test_modules,
    verify,
)

if TYPE_CHECKING:
    import docker

    from reprobot.bot.context import AppContext
    from reprobot.bot.jobs.guard import Guard

log = structlog.get_logger(__name__)
COMMENT_KIND = "verification"


def linked_issues(session: job_setup.RepoSession, pull: PullInfo) -> list[int]:
    """Issues the pull request closes: closing keywords in its body, then GitHub's relation."""
    numbers = closing_references(pull.body, session.info.full_name)
    for number in session.api.closing_issues(pull.number):
        if number not in numbers:
            numbers.append(number)
    return numbers


def run(ctx: AppContext, job: Job, guard: Guard) -> None:
    session = job_setup.open_repo(ctx, job, VERIFY_PERMISSIONS)
    config = session.config.config
    if not job_setup.may_run(session, job, config.events.pull_requests):
        return
    pull = session.api.pull(job.number)
    if pull.state != "open":
        log.info("verify.skipped", state=pull.state)
        return
    if job.head_sha is not None and job.head_sha != pull.head_sha:
        # A newer push is on its way as its own job; this head no longer matters.
        log.info("verify.stale_head", head_sha=job.head_sha, current=pull.head_sha)
        return
    issues = linked_issues(session, pull)
    if not issues:
        log.info("verify.no_linked_issue")
        return
    stored = {n: ctx.records.reproduction(job.repo, n) for n in issues}
    any_stored = any(r is not None and r.reproduced for r in stored.values())
    if not any_stored and not config.draft_at_pull_request:
        guard.check()
        _nothing_to_run(ctx, session, job, pull, issues)
        return
    guard.check()
    refs = ", ".join(f"#{n}" for n in issues)
    check = CheckRunOwner(session.api, ctx.check_runs, job, pull.head_sha)
    check.start(
        CHECK_NAME,
        "Running the reproducing tests",
        f"Running the stored reproducing tests of {refs} on the base and on this head."
        if any_stored
        else f"Drafting reproducing tests from {refs}, knowing this pull request's change.",
    )
    try:
        _finish(ctx, session, job, pull, issues, stored, any_stored, guard, config, check.complete)
    except BaseException as exc:
        # This job owns the check run it started: whatever stopped it after that (the tests,
        # writing the page, the comment, the label), the check says why, and ends completed
        # unless another attempt of this job will reuse it; the worker then handles the error.
        again = tries_again(exc, job, ctx.settings.job_max_attempts) or (
            isinstance(exc, JobAbandoned) and _taken_over(ctx, job)
        )
        url = None
        if not again and not check.completed:
            title = title_for(exc)
            with contextlib.suppress(SQLAlchemyError):  # the error being reported comes first
                url = _publish_note(
                    ctx,
                    job,
                    pull,
                    issues,
                    "neutral",
                    title,
                    f"{title}: {why(exc)}",
                    private=session.info.private,
                )
        check.interrupted(exc, again, url)
        raise


def _taken_over(ctx: AppContext, job: Job) -> bool:
    """Whether the job lives on in another attempt (its lease expired and it was queued again
    or claimed by another worker), which will reuse the check run; a superseded or finished
    job's check run ends here."""
    with contextlib.suppress(SQLAlchemyError):
        now = ctx.ledger.get(job.id)
        return (
            now is not None
            and now.state in LIVE_STATES
            and (now.worker != job.worker or now.attempts != job.attempts)
        )
    return False


def _finish(
    ctx: AppContext,
    session: job_setup.RepoSession,
    job: Job,
    pull: PullInfo,
    issues: list[int],
    stored: Mapping[int, ReproductionRecord | None],
    any_stored: bool,
    guard: Guard,
    config: RepoConfig,
    complete: Callable[[Conclusion, str, str, str, str | None], None],
) -> None:
    """Run the tests, then write the page, the comment, the check (through ``complete``) and
    the label."""
    report, judged, page = _report(ctx, session, job, pull, stored, guard)
    if not any_stored and not judged:
        # Nothing drafted either: no comment, the neutral check says there was nothing to run.
        title, summary = nothing_to_run(issues)
        url = publish(
            ctx, job.repo, pull.number, pull.head_sha, "neutral", page, private=session.info.private
        )
        complete("neutral", title, summary, "", url)
        return
    log.info("verify.finished", conclusion=report.conclusion)
    url = publish(
        ctx,
        job.repo,
        pull.number,
        pull.head_sha,
        report.conclusion,
        page,
        private=session.info.private,
    )
    known = ctx.records.comment_id(job.repo, pull.number, COMMENT_KIND)
    comment = report.comment + link_line(url)
    comment_id = session.api.upsert_comment(pull.number, VERIFICATION_MARKER, comment, known)
    ctx.records.save_comment_id(job.repo, pull.number, COMMENT_KIND, comment_id)
    complete(report.conclusion, report.title, report.summary, report.text, url)
    name = config.labels.verified
    if report.conclusion == "success" and report.label_allowed:
        apply_label(session.api, ctx.records, pull.number, name, pull.labels, "verified")
    else:
        withdraw_label(session.api, ctx.records, pull.number, name, pull.labels)


def _publish_note(
    ctx: AppContext,
    job: Job,
    pull: PullInfo,
    issues: list[int],
    conclusion: str,
    title: str,
    note: str,
    *,
    private: bool,
) -> str | None:
    """A page for a check run with no verdict to show: what it says, for each linked issue."""
    page = pull_page(
        repo=job.repo,
        pull=pull.number,
        base_sha=pull.base_sha,
        head_sha=pull.head_sha,
        conclusion=conclusion,
        title=title,
        issues=[IssueVerdict(n, None, note=note) for n in issues],
        own_tests=OwnTests((), None),
    )
    return publish(ctx, job.repo, pull.number, pull.head_sha, conclusion, page, private=private)


def _nothing_to_run(
    ctx: AppContext, session: job_setup.RepoSession, job: Job, pull: PullInfo, issues: list[int]
) -> None:
    """No comment, but a neutral check that says why."""
    log.info("verify.no_reproduction", issues=issues)
    title, summary = nothing_to_run(issues)
    check = CheckRunOwner(session.api, ctx.check_runs, job, pull.head_sha)
    check.start(CHECK_NAME, title, summary)
    url = _publish_note(
        ctx, job, pull, issues, "neutral", title, summary, private=session.info.private
    )
    check.complete("neutral", title, summary, "", url)


def _report(
    ctx: AppContext,
    session: job_setup.RepoSession,
    job: Job,
    pull: PullInfo,
    stored: Mapping[int, ReproductionRecord | None],
    guard: Guard,
) -> tuple[PullReport, bool, PullPage]:
    """Fetch base and head, run every stored (or drafted) test and the pull request's own, and
    render the comment and the page; also whether any linked issue got a verdict."""
    # The fork's head is fetched through the base repository's refs/pull/N/head.
    mirror = job_setup.fetch(
        ctx.settings.cache_dir,
        session,
        [pull.base_sha, f"refs/pull/{pull.number}/head", pull.head_sha],
    )
    base = job_setup.snapshot(mirror, session, pull.base_sha)
    head = job_setup.snapshot(mirror, session, pull.head_sha)
    # Dependencies come from the base, a commit of the repository's own branches: a fork's
    # head never decides what is installed with network access.
    detected = job_setup.detected_environment(session, base)
    env = job_setup.environment(ctx, detected, base)
    limits = RunLimits.from_settings(ctx.settings)
    progress = MetricsProgress(ctx.metrics)
    try:
        change: Patch | None = diff_between(base, head, name="pull.diff")
    except SnapshotError as exc:
        log.warning("verify.diff_failed", error=str(exc))
        change = None
    verdicts = []
    drafting = session.config.config.draft_at_pull_request
    for number, record in stored.items():
        guard.check()
        if (record is None or not record.reproduced) and drafting:
            verdicts.append(
                _drafted_verdict(ctx, session, env, base, head, change, number, progress)
            )
            continue
        verdicts.append(
            _issue_verdict(ctx.docker, env, base, head, number, record, limits, progress)
        )
    guard.check()
    own = _own_tests(
        ctx.docker, env, base, change, session.config.config.test_paths, limits, progress
    )
    guard.check()
    report = render_pull_report(
        repo=job.repo,
        pull_number=pull.number,
        head_sha=pull.head_sha,
        issues=verdicts,
        own_tests=own,
        config_errors=session.config.errors,
        from_fork=pull.from_fork(job.repo),
    )
    page = pull_page(
        repo=job.repo,
        pull=pull.number,
        base_sha=pull.base_sha,
        head_sha=pull.head_sha,
        conclusion=report.conclusion,
        title=report.title,
        issues=verdicts,
        own_tests=own,
        environment=environment_view(env),
    )
    return report, any(v.verdict is not None for v in verdicts), page


def _issue_verdict(
    client: docker.DockerClient,
    env: EnvImage,
    base: RepoSnapshot,
    head: RepoSnapshot,
    number: int,
    stored: ReproductionRecord | None,
    limits: RunLimits,
    progress: Progress,
) -> IssueVerdict:
    if stored is None or not stored.reproduced:
        why = "has no reproducing test" if stored is not None else "was never reproduced"
        return IssueVerdict(number, None, note=f"#{number} {why}, so there is nothing to run.")
    verdict = verify(
        client,
        env,
        base,
        Patch(stored.test_patch, name=f"reproduction-{number}.diff"),
        head=head,
        test_ids=list(stored.failing_tests) or None,
        limits=limits,
        progress=progress,
    )
    return IssueVerdict(number, verdict, tests_diff=stored.test_patch)


def _drafted_verdict(
    ctx: AppContext,
    session: job_setup.RepoSession,
    env: EnvImage,
    base: RepoSnapshot,
    head: RepoSnapshot,
    change: Patch | None,
    number: int,
    progress: Progress,
) -> IssueVerdict:
    """A linked issue with no reproduction: draft from its text knowing this change. A test
    that fails on the base for the issue's reason and passes on the head is judged as usual
    and offered to the author; its assertions come from the issue, never from the head."""
    issue = session.api.find_issue(number)
    if issue is None or issue.is_pull:
        what = "is not an issue of this repository" if issue is None else "is a pull request"
        return IssueVerdict(number, None, note=f"#{number} {what}, so there is nothing to run.")
    if change is None:
        return IssueVerdict(number, None, note="The pull request's change could not be read.")
    result = job_setup.draft(ctx, issue, base, env, progress, fix=change)
    log.info("verify.drafted", issue=number, reproduced=result.reproduced)
    if not result.reproduced:
        return IssueVerdict(
            number,
            None,
            note=(
                f"#{number} has no reproducing test, and none drafted from it fails on the base "
                "for its reason and passes with this change."
            ),
        )
    verdict = verify(
        ctx.docker,
        env,
        base,
        Patch(result.test_patch, name=f"drafted-{number}.diff"),
        head=head,
        test_ids=list(result.failing_tests) or None,
        limits=RunLimits.from_settings(ctx.settings),
        progress=progress,
    )
    return IssueVerdict(number, verdict, suggested=result.test_patch, tests_diff=result.test_patch)


def _own_tests(
    client: docker.DockerClient,
    env: EnvImage,
    base: RepoSnapshot,
    change: Patch | None,
    test_paths: tuple[str, ...],
    limits: RunLimits,
    progress: Progress,
) -> OwnTests:
    """The pull request's own test changes (in ``change``, base to head), run on the base with
    and without its code changes: does the fix come with a test that fails before it?"""
    if change is None:
        return OwnTests((), None)
    files = change.files
    conftests = {f for f in files if f.rsplit("/", 1)[-1] == "conftest.py"}
    tests = set(test_modules(change))
    tests |= {
        f
        for f in files
        if f.endswith(".py") and any(f.startswith(p.rstrip("/") + "/") for p in test_paths)
    }
    tests -= conftests
    deleted = tests & set(change.deleted_files)
    kept = tests - deleted
    if not tests and not conftests:
        return OwnTests((), None)
    listed = tuple(sorted(tests | conftests))
    if not kept:
        what = (
            f"deletes {_names(deleted)} and adds or changes no test"
            if deleted
            else f"changes how its tests run ({_names(conftests)}) but no test"
        )
        return OwnTests(listed, None, note=what)
    test_patch = change.without_files([f for f in files if f not in kept | conftests])
    code_patch = change.without_files(sorted(tests | conftests))
    if not code_patch.files:
        return OwnTests(listed, None, note="changes tests and no other code to run them against")
    # Only whether the pull request brings a reproducing test: its own tests are the subject
    # here, so the project's other tests are not run as a guard a second time.
    verdict = verify(
        client,
        env,
        base,
        test_patch,
        fix=code_patch,
        limits=limits,
        progress=progress,
        guard=False,
    )
    return OwnTests(listed, verdict, tests_diff=test_patch.diff)


def _names(paths: set[str]) -> str:
    shown = [inline_code(p) for p in sorted(paths)[:5]]
    more = f" and {len(paths) - 5} more" if len(paths) > 5 else ""
    return ", ".join(shown) + more
