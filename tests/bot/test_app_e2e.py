"""The GitHub App end to end: signed deliveries to ``reprobot serve``, jobs run by real
workers with real Docker runs against a real repository served over git's HTTP protocol, and
the comments, labels and check runs they leave on a local GitHub."""

from __future__ import annotations

import html
import itertools
import re
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import httpx
import pytest

from reprobot.bot.render.pull import CHECK_NAME, VERIFICATION_MARKER
from reprobot.bot.render.reproduction import REPRODUCTION_MARKER
from reprobot.validation.env.env_image import EnvImage
from tests.support import webhooks
from tests.support.app_harness import APP_ID, INSTALLATION, REPO, AppHarness, wait_for
from tests.support.browser import Chromium
from tests.support.example_patches import FIX
from tests.support.repos import EXAMPLE

pytestmark = pytest.mark.docker
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "pages"

ISSUE_TITLE, _, ISSUE_BODY = (EXAMPLE / "ISSUE.md").read_text().partition("\n")
# The pull request's own test: fails before the fix, passes with it.
OWN_TEST = """\
from durations import parse_duration


def test_two_units():
    assert parse_duration("2m5s") == 125
"""


@pytest.fixture(scope="module")
def app(
    tmp_path_factory: pytest.TempPathFactory, example_repo: Path, example_env: EnvImage
) -> Iterator[AppHarness]:
    harness = AppHarness(tmp_path_factory.mktemp("app"), example_repo)
    harness.serve(workers=1)
    yield harness
    harness.close()


def _check_runs(app: AppHarness, head_sha: str) -> list[dict[str, object]]:
    return [r for r in app.github.check_runs(REPO) if r["head_sha"] == head_sha]


_LINK = re.compile(r"\[Full report\]\((?P<url>[^)\s]+)\)")


def _page(app: AppHarness, url: object) -> str:
    """The report page at ``url`` (one of the App's own), fetched as a reader would."""
    assert isinstance(url, str) and url.startswith(f"{app.url}/pages/"), url
    answer = httpx.get(url, timeout=10)
    assert answer.status_code == 200, answer.text
    assert answer.headers["content-security-policy"].startswith("default-src 'none'")
    assert answer.headers["cache-control"] == "private, no-store"
    return answer.text


def _comment_page(app: AppHarness, body: str) -> str:
    match = _LINK.search(body)
    assert match, body
    return _page(app, match["url"])


def _completed(app: AppHarness, head_sha: str) -> dict[str, object] | None:
    runs = [r for r in _check_runs(app, head_sha) if r["status"] == "completed"]
    return runs[-1] if runs else None


def test_an_issue_is_reproduced_once_for_20_concurrent_copies_of_its_delivery(
    app: AppHarness,
) -> None:
    data = app.open_issue(1, ISSUE_TITLE, ISSUE_BODY)
    with ThreadPoolExecutor(20) as pool:
        answers = list(
            pool.map(lambda _: app.deliver("issues", data, "delivery-issue-1"), range(20))
        )
    assert {a.status_code for a in answers} == {202}
    assert len({tuple(a.json()["jobs"]) for a in answers}) == 1
    assert sum(not a.json()["duplicate"] for a in answers) == 1
    jobs = app.wait("the job to finish", lambda: app.finished(1), timeout=300)
    assert [(j.kind, j.state, j.attempts) for j in jobs] == [("reproduce", "done", 1)], app.logs()
    (comment,) = app.bot_comments(1)
    body = str(comment["body"])
    assert body.startswith(REPRODUCTION_MARKER)
    assert "ValueError" in body and "git apply" in body
    assert app.github.issue_labels(REPO, 1) == ["reproduced"]
    assert len(app.github.comments(REPO, 1)) == 1
    # The comment links to the reproduction's page, which shows the test and how it fails.
    page = _comment_page(app, body)
    assert "Reproduced at" in page and "ValueError" in page and "Copy the diff" in page
    # The issue's title, escaped, names what the page is about.
    assert f"issue #1: {html.escape(ISSUE_TITLE, quote=False)}</p>" in page
    # The token was narrowed to the repository and the job's permissions, and only ever sent
    # in headers: no URL the server saw carries it, and the mirror's config does not hold it.
    token = app.github.tokens[-1]
    assert token["repositories"] == ["durations"]
    assert token["permissions"] == {"metadata": "read", "contents": "read", "issues": "write"}
    assert not any(
        str(t["token"]) in c.path + str(c.query)
        for t in app.github.tokens
        for c in app.github.calls
    )
    mirror_config = (app.cache_dir / "mirrors" / "example" / "durations.git" / "config").read_text()
    assert "ghs_" not in mirror_config and "extraheader" not in mirror_config.lower()
    # Mutations went one at a time.
    writes = sorted(
        (c.started, c.finished)
        for c in app.github.calls
        if c.method in ("POST", "PATCH", "DELETE") and c.path.startswith("/api/v3/")
    )
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(writes))
    # The App's metrics saw it all: the deliveries, the job and its sandbox runs, the requests.
    metrics = httpx.get(f"{app.url}/metrics", timeout=10).text
    assert 'reprobot_deliveries_total{event="issues",outcome="jobs"} 1.0' in metrics
    assert 'reprobot_deliveries_total{event="issues",outcome="duplicate"} 19.0' in metrics
    assert 'reprobot_jobs{kind="reproduce",state="done"} 1.0' in metrics
    assert 'reprobot_job_duration_seconds_count{kind="reproduce",outcome="done"} 1.0' in metrics
    assert "reprobot_sandbox_run_duration_seconds_count" in metrics
    assert 'reprobot_github_requests_total{method="POST",status="201"}' in metrics


def test_a_fix_pull_request_is_verified_and_a_second_push_edits_the_same_comment(
    app: AppHarness,
) -> None:
    app.wait("issue #1's reproduction", lambda: app.bot_comments(1), timeout=400)
    head = app.push({"tests/test_units.py": OWN_TEST}, "Parse several units", "fix", patch=FIX)
    data = app.open_pull(2, head, "This parses `1h30m`.\n\nFixes #1")
    # A person's comment quoting the App's marker: it must never be edited.
    human = app.github.add_comment(REPO, 2, "quoting the bot: " + VERIFICATION_MARKER)
    assert app.deliver("pull_request", data).status_code == 202
    run = app.wait("the completed check run", lambda: _completed(app, head), timeout=300)
    app.wait("the verification job", lambda: app.finished(2), timeout=60)
    assert run["name"] == CHECK_NAME
    assert run["conclusion"] == "success", (run, app.logs())
    (comment,) = app.bot_comments(2)
    body = str(comment["body"])
    assert body.startswith(VERIFICATION_MARKER)
    assert "#1" in body and head[:7] in body
    assert "comes with 1 test that fails before the change" in body  # the PR's own test
    assert app.github.issue_labels(REPO, 2) == ["fix-verified"]
    # The check run and the comment lead to the same page: every section of the comment, with
    # each test's outcomes and the changed lines the tests ran.
    page = _page(app, run["details_url"])
    link = _LINK.search(body)
    assert link and link["url"] == run["details_url"]
    assert "Issue #1: ✅ Verified" in page and "fail → pass (reproduced, then fixed)" in page
    assert "src/durations/parse.py" in page
    assert 'class="mark run"' in page, page
    assert "The pull request&#39;s own tests" in page
    # An altered link, or one signed with another key, names no page: the same 404 as none.
    token = str(run["details_url"]).rsplit("/", 1)[1]
    signed, _, signature = token.rpartition(".")
    # The signature's first character, a whole one (its last also carries padding bits).
    altered = f"{signed}.{'B' if signature[0] == 'A' else 'A'}{signature[1:]}"
    for bad in (altered, "x" * 40):
        gone = httpx.get(f"{app.url}/pages/{bad}", timeout=10)
        assert (gone.status_code, "There is no page here." in gone.text) == (404, True)

    # A second push: the same comment is edited, a new check run is made for the new head.
    second = app.push({"CHANGES.md": "Several units.\n"}, "Changelog", "fix")
    app.github.set_pull_head(REPO, 2, second)
    sync = webhooks.pull_request(
        "synchronize", REPO, INSTALLATION, 2, second, app.base_sha, data["pull_request"]["body"]
    )
    assert app.deliver("pull_request", sync).status_code == 202
    app.wait("the second check run", lambda: _completed(app, second), timeout=300)
    app.wait("the second verification job", lambda: app.finished(2), timeout=60)
    bot = app.bot_comments(2)
    assert [c["id"] for c in bot] == [comment["id"]]
    assert second[:7] in str(bot[0]["body"])
    assert len(_check_runs(app, second)) == 1
    # The second head's page links to the first head's.
    (second_run,) = _check_runs(app, second)
    second_page = _page(app, second_run["details_url"])
    assert f'">{head[:12]}</a> (success)' in second_page
    # The person's comment is untouched.
    now = [c for c in app.github.comments(REPO, 2) if c["id"] == human["id"]]
    assert now == [human]


def test_a_fork_pull_request_is_verified_through_refs_pull(app: AppHarness) -> None:
    app.wait("issue #1's reproduction", lambda: app.bot_comments(1), timeout=400)
    head = app.push_fork("stranger/durations", FIX, "Fix from a fork")
    assert (
        app.deliver(
            "pull_request", app.open_pull(4, head, "Closes #1", fork="stranger/durations")
        ).status_code
        == 202
    )
    run = app.wait("the fork's check run", lambda: _completed(app, head), timeout=300)
    app.wait("the fork's verification job", lambda: app.finished(4), timeout=60)
    assert run["conclusion"] == "success", app.logs()
    body = str(app.bot_comments(4)[0]["body"])
    assert "This pull request changes no test file." in body


def test_a_pull_request_without_reproduced_issues_gets_a_neutral_check_only(
    app: AppHarness,
) -> None:
    head = app.push({"NOTES.md": "notes\n"}, "Notes", "notes")
    assert (
        app.deliver("pull_request", app.open_pull(5, head, "Fixes #98, see #1")).status_code == 202
    )
    jobs = app.wait("the job", lambda: app.finished(5), timeout=120)
    assert [j.state for j in jobs] == ["done"]
    assert app.github.comments(REPO, 5) == []
    (run,) = _check_runs(app, head)
    assert (run["status"], run["conclusion"]) == ("completed", "neutral")
    output = run["output"]
    assert isinstance(output, dict) and output["title"] == "No reproducing test for #98"
    assert "Issue #98: no verdict" in _page(app, run["details_url"])


def test_a_fix_for_an_issue_never_reproduced_gets_a_test_drafted_knowing_the_change(
    app: AppHarness,
) -> None:
    # The issue exists, but its delivery never came: no reproduction is stored for it.
    app.open_issue(6, ISSUE_TITLE, ISSUE_BODY)
    head = app.push({"NOTES.md": "fix\n"}, "Parse several units", "fix-6", patch=FIX)
    assert app.deliver("pull_request", app.open_pull(7, head, "Fixes #6")).status_code == 202
    run = app.wait("the completed check run", lambda: _completed(app, head), timeout=400)
    app.wait("the verification job", lambda: app.finished(7), timeout=60)
    assert run["conclusion"] == "success", (run, app.logs())
    (comment,) = app.bot_comments(7)
    body = str(comment["body"])
    assert "### Issue #6: ✅ Verified" in body
    assert "This issue had no reproducing test, so Reprobot drafted one from its text" in body
    assert "<details><summary>The drafted test</summary>" in body and "+++ b/tests/" in body
    assert app.github.issue_labels(REPO, 7) == ["fix-verified"]
    # Nothing is stored for the issue itself: the test was offered, not adopted.
    assert app.bot_comments(6) == []


def test_a_rate_limited_comment_waits_for_retry_after_then_succeeds(app: AppHarness) -> None:
    app.github.fail_secondary_rate_limit(
        "POST", r"/repos/example/durations/issues/3/comments$", retry_after_s=2, status=429
    )
    data = app.open_issue(3, ISSUE_TITLE, ISSUE_BODY)
    assert app.deliver("issues", data).status_code == 202
    app.wait("the comment after the rate limit", lambda: app.bot_comments(3), timeout=300)
    app.wait("issue #3's job", lambda: app.finished(3), timeout=60)
    posts = [
        c for c in app.github.calls if c.method == "POST" and c.path.endswith("/issues/3/comments")
    ]
    assert [c.status for c in posts] == [429, 201]
    assert posts[1].started - posts[0].finished >= 2.0
    assert len(app.bot_comments(3)) == 1


def test_commands_rerun_only_for_collaborators_and_labels_removed_by_people_stay_removed(
    app: AppHarness,
) -> None:
    app.wait("issue #3's comment", lambda: app.bot_comments(3), timeout=400)
    app.wait("issue #3's job", lambda: app.finished(3), timeout=120)
    app.github.remove_label(REPO, 3, "reproduced")
    before = app.bot_comments(3)

    def handled(delivery: str) -> bool:
        return any(j.delivery_id == delivery and j.state == "done" for j in app.jobs(3))

    stranger = webhooks.issue_comment(
        REPO, INSTALLATION, 3, "/reprobot reproduce", user="drive-by", association="NONE"
    )
    assert app.deliver("issue_comment", stranger, "cmd-stranger").status_code == 202
    app.wait("the refused command", lambda: handled("cmd-stranger"))
    assert app.bot_comments(3) == before
    owner = webhooks.issue_comment(REPO, INSTALLATION, 3, "/reprobot reproduce")
    assert app.deliver("issue_comment", owner, "cmd-owner").status_code == 202
    app.wait("the rerun", lambda: handled("cmd-owner"), timeout=300)
    after = app.bot_comments(3)
    assert [c["id"] for c in after] == [c["id"] for c in before]
    assert (
        after[0]["updated_at"] != before[0]["updated_at"] or after[0]["body"] == before[0]["body"]
    )
    # The person removed the label; the rerun does not put it back.
    assert "reproduced" not in app.github.issue_labels(REPO, 3)


def test_a_worker_killed_mid_job_is_replaced_and_the_job_still_comments_once(
    tmp_path: Path, example_repo: Path, example_env: EnvImage
) -> None:
    # A long lease and a quick heartbeat: the job must come back when the heartbeat stops,
    # long before the lease would have run out.
    harness = AppHarness(
        tmp_path,
        example_repo,
        REPROBOT_JOB_LEASE_S="600",
        REPROBOT_JOB_HEARTBEAT_S="1",
        REPROBOT_REAPER_INTERVAL_S="0.5",
    )
    try:
        harness.serve(workers=0)
        # The first call for the issue's comments hangs for 15 s (then fails once, which the App
        # retries), so the job cannot finish before the kill below however fast drafting is.
        harness.github.fail_server_error("*", r"/issues/9/comments$", delay_s=15)
        first = harness.worker()
        assert (
            harness.deliver("issues", harness.open_issue(9, ISSUE_TITLE, ISSUE_BODY)).status_code
            == 202
        )
        harness.wait(
            "the first worker to be inside the job",
            lambda: harness.github.tokens and any(j.state == "running" for j in harness.jobs(9)),
            timeout=120,
        )
        time.sleep(1.0)
        harness.kill(first)
        killed_at = time.monotonic()
        harness.worker()
        jobs = harness.wait("the job to finish again", lambda: harness.finished(9), timeout=400)
        assert time.monotonic() - killed_at < 600  # well within the dead worker's lease
        assert [(j.state, j.attempts) for j in jobs] == [("done", 2)], harness.logs()
        assert len(harness.bot_comments(9)) == 1
        assert harness.github.issue_labels(REPO, 9) == ["reproduced"]
    finally:
        harness.close()


def test_a_check_run_never_stays_in_progress_when_the_comment_cannot_be_written(
    tmp_path: Path, example_repo: Path, example_env: EnvImage
) -> None:
    # An App of its own: the job below fails on purpose, which the shared one's waits refuse.
    app = AppHarness(tmp_path, example_repo)
    try:
        app.serve(workers=1)
        assert app.deliver("issues", app.open_issue(1, ISSUE_TITLE, ISSUE_BODY)).status_code == 202
        app.wait("issue #1's reproduction", lambda: app.bot_comments(1), timeout=400)
        # The tests run, then every attempt to write the comment is refused.
        app.github.fail_next("POST", r"/issues/2/comments$", 422, times=10)
        head = app.push({"NOTES.md": "two\n"}, "Parse several units", "fix-2", patch=FIX)
        assert app.deliver("pull_request", app.open_pull(2, head, "Fixes #1")).status_code == 202
        # Not ``app.wait``, which gives up at a failed job: this one is meant to fail.
        jobs = wait_for("the job to end", lambda: app.finished(2), timeout=600)
        assert jobs and jobs[-1].state == "failed", app.logs()
        runs = _check_runs(app, head)
        # One check run, ended neutral, saying why: not left spinning.
        assert len(runs) == 1, runs
        assert {r["status"] for r in runs} == {"completed"}, runs
        for run in runs:
            assert run["conclusion"] == "neutral"
            output = run["output"]
            assert isinstance(output, dict) and output["title"] == "Reprobot could not finish"
        assert app.bot_comments(2) == []
    finally:
        app.close()


# A crash the issue shows, and nothing else: the test fails with the issue's exception, and only
# one reading of the issue reproduces it (confidence 4 of 5).
CRASH_ONLY = (
    '```python\nfrom durations import parse_duration\nparse_duration("1h30m")\n```\n\n'
    '```\nTraceback (most recent call last):\n  File "<stdin>", line 2, in <module>\n'
    "ValueError: invalid literal for int() with base 10: '1h30'\n```\n"
)


def test_a_reproduction_below_the_labels_confidence_is_commented_as_probable_and_not_labelled(
    tmp_path: Path, example_repo: Path, example_env: EnvImage
) -> None:
    app = AppHarness(tmp_path, example_repo, REPROBOT_LABEL_MIN_CONFIDENCE="5")
    try:
        app.serve(workers=1)
        issue = app.open_issue(3, "parse_duration fails on 1h30m", CRASH_ONLY)
        assert app.deliver("issues", issue).status_code == 202
        (comment,) = app.wait("the reproduction comment", lambda: app.bot_comments(3), timeout=400)
        assert "### 🔁 Probably reproduced at" in comment["body"]
        assert "no other reading reproduced it" in comment["body"]
        app.wait("the job to end", lambda: app.finished(3), timeout=60)
        assert app.github.issue_labels(REPO, 3) == []
    finally:
        app.close()


def test_check_run_names_the_app_and_links_its_page(app: AppHarness) -> None:
    runs = app.github.check_runs(REPO)
    assert runs and all(r["app"]["id"] == APP_ID for r in runs)
    done = [r for r in runs if r["status"] == "completed"]
    assert done and all(str(r["details_url"]).startswith(f"{app.url}/pages/") for r in done)


@pytest.mark.browser
def test_the_report_pages_in_a_real_browser(
    app: AppHarness, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The App's pages for a real reproduction and a real verdict, loaded by Chromium at a
    desktop's and a phone's width; the screenshots are kept as CI artefacts."""
    (issue_comment,) = app.wait("issue #1's reproduction", lambda: app.bot_comments(1), timeout=400)
    head = app.push({"NOTES.md": "browser\n"}, "Parse several units", "fix-browser", patch=FIX)
    assert app.deliver("pull_request", app.open_pull(11, head, "Fixes #1")).status_code == 202
    run = app.wait("the completed check run", lambda: _completed(app, head), timeout=300)
    assert run["conclusion"] == "success", (run, app.logs())
    link = _LINK.search(str(issue_comment["body"]))
    assert link
    browser = Chromium(tmp_path_factory.mktemp("chromium"))
    try:
        for url, name in ((run["details_url"], "verdict"), (link["url"], "reproduction")):
            for width, height, mobile, device in (
                (1280, 900, False, "desktop"),
                (390, 844, True, "phone"),
            ):
                tab = browser.tab()
                load = tab.load(str(url), width, height, mobile=mobile)
                tab.screenshot(ARTIFACTS / f"{name}-{device}.png")
                assert (load.problems, load.dialogs) == ([], [])
                assert load.requests == [url], load.requests  # nothing from anywhere else
                assert tab.evaluate("document.documentElement.scrollWidth") <= width
                if name == "verdict":
                    assert "Issue #1: ✅ Verified" in load.text
                    rows = tab.evaluate(
                        "[...document.querySelectorAll('table.tests tr')].map(r => r.innerText)"
                    )
                    assert any("::test_" in r and "fail → pass" in r for r in rows), rows
                    assert tab.evaluate("document.querySelectorAll('td.mark.run').length") > 0
                    assert "executable changed lines run" in load.text
                else:
                    assert "Reproduced at" in load.text and "ValueError" in load.text
    finally:
        browser.close()
