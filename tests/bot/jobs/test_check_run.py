"""A verification job's check run (``CheckRunOwner``) and the reaper's part in its life, against the
GitHub stand-in and a real store: created once, reused by the job's next attempt, always
completed."""

from __future__ import annotations

from typing import Any

from reprobot.bot.context import AppContext
from reprobot.bot.errors import GitHubError, JobAbandoned
from reprobot.bot.github.auth import VERIFY_PERMISSIONS, GitHubApp
from reprobot.bot.github.repo_api import RepoAPI
from reprobot.bot.jobs.check_run import NOT_FINISHED, SUPERSEDED, CheckRunOwner
from reprobot.bot.jobs.worker import Reaper
from reprobot.bot.store.jobs import Job
from tests.bot.github.scenario import APP_ID, INSTALLATION, REPO
from tests.bot.jobs.conftest import verify_job
from tests.support.github_server import GitHubServer
from tests.support.widgets import Sources

NAME = "Reprobot"


def api_of(app: GitHubApp) -> RepoAPI:
    auth = app.installation(INSTALLATION, REPO, VERIFY_PERMISSIONS)
    return RepoAPI(app.client_for(auth), REPO, APP_ID)


def runs(server: GitHubServer) -> list[dict[str, Any]]:
    return server.check_runs(REPO)


def test_an_attempt_that_is_tried_again_leaves_its_check_run_for_the_next_to_reuse(
    server: GitHubServer, app: GitHubApp, ctx: AppContext, sources: Sources
) -> None:
    job = verify_job(ctx, sources.main_sha)
    first = CheckRunOwner(api_of(app), ctx.check_runs, job, sources.main_sha)
    first.start(NAME, "Running the reproducing tests", "base and head")
    first.interrupted(GitHubError("GitHub is down", status=502), again=True, url=None)

    (run,) = runs(server)
    assert run["status"] == "in_progress"
    assert run["output"]["title"] == "Trying again" and "GitHub is down" in run["output"]["summary"]

    second = CheckRunOwner(api_of(app), ctx.check_runs, job, sources.main_sha)
    second.start(NAME, "Running the reproducing tests", "base and head")
    second.complete("success", "Verified", "all good", "", None)

    (run,) = runs(server)  # the same check run, not a second one
    assert run["id"] == first.id == second.id
    assert (run["status"], run["conclusion"]) == ("completed", "success")
    stored = ctx.check_runs.get(job.id)
    assert stored is not None and stored.completed


def test_an_attempt_that_is_not_tried_again_completes_its_check_run_saying_why(
    server: GitHubServer, app: GitHubApp, ctx: AppContext, sources: Sources
) -> None:
    job = verify_job(ctx, sources.main_sha)
    check = CheckRunOwner(api_of(app), ctx.check_runs, job, sources.main_sha)
    check.start(NAME, "Running", "base and head")
    check.interrupted(ValueError("secret text of an internal error"), again=False, url=None)

    (run,) = runs(server)
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")
    assert run["output"]["title"] == NOT_FINISHED
    # Only Reprobot's own errors are quoted; anything else by its type.
    assert run["output"]["summary"] == "`ValueError`"

    # A re-run of the finished job cannot reopen it: it makes a new one and records that.
    again = CheckRunOwner(api_of(app), ctx.check_runs, job, sources.main_sha)
    again.start(NAME, "Running", "base and head")
    assert again.id != check.id and len(runs(server)) == 2
    stored = ctx.check_runs.get(job.id)
    assert stored is not None and stored.check_run_id == again.id and not stored.completed


def test_a_superseded_job_completes_its_check_run_as_superseded(
    server: GitHubServer, app: GitHubApp, ctx: AppContext, sources: Sources
) -> None:
    job = verify_job(ctx, sources.main_sha)
    check = CheckRunOwner(api_of(app), ctx.check_runs, job, sources.main_sha)
    check.start(NAME, "Running", "base and head")
    check.interrupted(JobAbandoned("a newer push"), again=False, url=None)
    (run,) = runs(server)
    assert (run["status"], run["output"]["title"]) == ("completed", SUPERSEDED)


def test_the_reaper_completes_check_runs_whose_job_ended_without_completing_them(
    server: GitHubServer, app: GitHubApp, ctx: AppContext, sources: Sources
) -> None:
    # Three jobs whose workers created a check run and died (nothing completed it): one has
    # run out of attempts, one is still going (another attempt will reuse its check run), and
    # one finished but GitHub refused the completion.
    failed = verify_job(ctx, sources.main_sha, pull=3)
    alive = verify_job(ctx, sources.first_sha, pull=4)
    done = verify_job(ctx, sources.main_sha, pull=5)
    for job in (failed, alive, done):
        CheckRunOwner(api_of(app), ctx.check_runs, job, str(job.head_sha)).start(
            NAME, "Running", ""
        )
    assert ctx.ledger.finish(failed.id, "w1", "failed", error="worker lost after 3 attempts")
    assert ctx.ledger.finish(done.id, "w1", "done")
    # GitHub fails the first completion through all its retries: left for the next round.
    server.fail_next("PATCH", r"/check-runs/", 502, times=3)

    reaper = Reaper(ctx, interval_s=3600)
    reaper.complete_check_runs()
    assert len(ctx.check_runs.left_behind()) == 1
    reaper.complete_check_runs()

    by_job = {job.id: the_run(server, ctx, job) for job in (failed, alive, done)}
    assert len(runs(server)) == 3
    lost = by_job[failed.id]
    assert (lost["status"], lost["conclusion"]) == ("completed", "neutral")
    assert lost["output"]["title"] == NOT_FINISHED
    assert "worker lost after 3 attempts" in lost["output"]["summary"]
    assert by_job[done.id]["status"] == "completed"
    assert by_job[alive.id]["status"] == "in_progress"  # its job lives on
    assert ctx.check_runs.left_behind() == []


def the_run(server: GitHubServer, ctx: AppContext, job: Job) -> dict[str, Any]:
    stored = ctx.check_runs.get(job.id)
    assert stored is not None
    (run,) = [r for r in runs(server) if r["id"] == stored.check_run_id]
    return run
