"""Rate limits, retries and the pacing of mutations, against the local GitHub server.

The retry decisions are checked on exceptions githubkit raised for real answers of the server;
the waits and the serial mutations end to end through ``GitHubApp(...).client(token)`` and
``RepoAPI``, timed by the server's record of calls.
"""

from __future__ import annotations

import itertools
import re
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from datetime import timedelta
from pathlib import Path
from typing import Any, TypeVar

import pytest
from githubkit import GitHub, TokenAuthStrategy
from githubkit.exception import (
    GitHubException,
    PrimaryRateLimitExceeded,
    RequestFailed,
    RequestTimeout,
    SecondaryRateLimitExceeded,
)

from reprobot.bot.errors import GitHubError
from reprobot.bot.github.auth import REPRODUCE_PERMISSIONS, GitHubApp, InstallationToken
from reprobot.bot.github.limits import MutationThrottler, RetryPolicy
from reprobot.bot.github.repo_api import RepoAPI
from tests.support.github_server import (
    SECONDARY_RATE_LIMIT_MESSAGE,
    Call,
    GitHubServer,
    make_app_key,
)

# githubkit caches App JWTs process-wide by App id: an id of this module's own, for its key.
APP_ID = 5301
INSTALLATION = 31
REPO = "octo-org/widgets"
COMMENTS = r"/repos/octo-org/widgets/issues/1/comments$"
ISSUE = r"/repos/octo-org/widgets/issues/1$"
MARK = "<!-- reprobot:limits -->"
T = TypeVar("T")


@pytest.fixture(scope="module")
def app_key() -> tuple[str, bytes]:
    return make_app_key()


@pytest.fixture
def server(app_key: tuple[str, bytes], tmp_path: Path) -> Iterator[GitHubServer]:
    with GitHubServer(APP_ID, app_key[1], tmp_path / "git") as srv:
        srv.add_installation(INSTALLATION, "octo-org")
        srv.add_repo(REPO, INSTALLATION)
        srv.add_issue(REPO, 1, "area() is wrong", "area(2, 3) gives 5")
        yield srv


def make_app(
    server: GitHubServer,
    key: str,
    *,
    max_retries: int = 5,
    max_wait_s: float = 900.0,
    backoff_s: float = 0.05,
    pause_s: float = 0.05,
    max_reads: int = 10,
    timeout_s: float = 30.0,
) -> GitHubApp:
    return GitHubApp(
        APP_ID,
        key,
        server.api_url,
        retry=RetryPolicy(max_retries, max_wait_s, backoff_s),
        throttler=MutationThrottler(pause_s, max_reads),
        timeout_s=timeout_s,
    )


def repo_api(app: GitHubApp) -> RepoAPI:
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    return RepoAPI(app.client(token), REPO, app.app_id, retry_wait_s=0.01)


def api_calls(server: GitHubServer, path_regex: str = "", method: str = "") -> list[Call]:
    """The calls other than token requests, optionally only those matching."""
    return [
        c
        for c in server.calls
        if not c.path.endswith("/access_tokens")
        and (not method or c.method == method)
        and (not path_regex or re.search(path_regex, c.path))
    ]


def gaps(calls: list[Call]) -> list[float]:
    """For consecutive calls, the time from one answer to the next request's arrival."""
    return [b.started - a.finished for a, b in itertools.pairwise(calls)]


def overlapping(calls: list[Call]) -> bool:
    ordered = sorted(calls, key=lambda c: c.started)
    return any(b.started < a.finished for a, b in itertools.pairwise(ordered))


def most_at_once(calls: list[Call]) -> int:
    """The largest number of ``calls`` being answered at the same moment."""
    events = sorted([(c.started, 1) for c in calls] + [(c.finished, -1) for c in calls])
    current = peak = 0
    for _, step in events:
        current += step
        peak = max(peak, current)
    return peak


def run_threads(count: int, work: Callable[[int], T]) -> list[T]:
    """Run ``work(i)`` for ``i < count`` in threads released together; their results, in
    order (a thread's exception is raised here)."""
    barrier = threading.Barrier(count)

    def run(i: int) -> T:
        barrier.wait(timeout=30)
        return work(i)

    with ThreadPoolExecutor(max_workers=count) as pool:
        futures = [pool.submit(run, i) for i in range(count)]
        return [f.result(timeout=60) for f in futures]


# --- the retry decisions, on exceptions githubkit raised for real answers --------------------


@pytest.fixture
def token(server: GitHubServer, app_key: tuple[str, bytes]) -> InstallationToken:
    return make_app(server, app_key[0]).token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)


def raw_client(
    server: GitHubServer, token: InstallationToken, timeout: float = 30.0
) -> GitHub[Any]:
    """A githubkit client that does not retry, so each failure reaches the test."""
    return GitHub(
        TokenAuthStrategy(token.token),
        base_url=server.api_url,
        auto_retry=False,
        http_cache=False,
        timeout=timeout,
    )


def raised(fn: Callable[[], object]) -> GitHubException:
    with pytest.raises(GitHubException) as info:
        fn()
    return info.value


def comment_failure(gh: GitHub[Any]) -> GitHubException:
    return raised(lambda: gh.rest.issues.create_comment("octo-org", "widgets", 1, body="hi"))


def issue_failure(gh: GitHub[Any]) -> GitHubException:
    return raised(lambda: gh.rest.issues.get("octo-org", "widgets", 1))


@pytest.mark.parametrize("status", [429, 403])
def test_secondary_limit_waits_retry_after_and_at_least_the_backoff(
    server: GitHubServer, token: InstallationToken, status: int
) -> None:
    server.fail_secondary_rate_limit("POST", COMMENTS, retry_after_s=3, status=status)
    gh = raw_client(server, token)
    exc = comment_failure(gh)
    assert isinstance(exc, SecondaryRateLimitExceeded)
    policy = RetryPolicy(max_retries=5, max_wait_s=60, backoff_s=1.0)

    assert policy(exc, 0) == (True, timedelta(seconds=3))
    assert policy(exc, 1) == (True, timedelta(seconds=3))
    # The backoff (1, 2, 4, 8 s) overtakes retry-after from the third retry on.
    assert policy(exc, 2) == (True, timedelta(seconds=4))
    assert policy(exc, 3) == (True, timedelta(seconds=8))
    assert policy(exc, 5).do_retry is False
    # A backoff beyond the longest wait gives up instead of sleeping.
    assert RetryPolicy(max_retries=20, max_wait_s=60)(exc, 6).do_retry is False
    assert RetryPolicy(max_wait_s=2)(exc, 0).do_retry is False


def test_secondary_limit_without_its_headers_waits_a_minute(
    server: GitHubServer, token: InstallationToken
) -> None:
    # GitHub sometimes answers a secondary limit with neither retry-after nor remaining 0;
    # githubkit then raises a plain RequestFailed.
    body = {"message": SECONDARY_RATE_LIMIT_MESSAGE, "documentation_url": "x"}
    server.fail_next("POST", COMMENTS, 403, body=body)
    server.fail_next("GET", ISSUE, 429)
    gh = raw_client(server, token)
    forbidden = comment_failure(gh)
    too_many = issue_failure(gh)
    assert type(forbidden) is RequestFailed and type(too_many) is RequestFailed
    policy = RetryPolicy(max_retries=5, max_wait_s=900, backoff_s=1.0)

    assert policy(forbidden, 0) == (True, timedelta(seconds=60))
    assert policy(too_many, 0) == (True, timedelta(seconds=60))
    assert policy(forbidden, 4) == (True, timedelta(seconds=60))
    # Past a minute, the backoff decides.
    assert RetryPolicy(max_retries=10)(too_many, 7) == (True, timedelta(seconds=128))
    assert RetryPolicy(max_wait_s=30)(forbidden, 0).do_retry is False


def test_primary_limit_waits_for_the_reset_without_backoff(
    server: GitHubServer, token: InstallationToken
) -> None:
    server.fail_primary_rate_limit("GET", ISSUE, reset_in_s=30)
    gh = raw_client(server, token)
    exc = issue_failure(gh)
    assert isinstance(exc, PrimaryRateLimitExceeded)

    do_retry, wait = RetryPolicy(max_retries=10, max_wait_s=60, backoff_s=1.0)(exc, 6)
    assert do_retry and wait is not None
    # Until the reset, not the 64 s backoff of a seventh attempt.
    assert timedelta(seconds=28) < wait <= timedelta(seconds=31)
    assert RetryPolicy(max_wait_s=10)(exc, 0).do_retry is False
    assert RetryPolicy(max_retries=3)(exc, 3).do_retry is False


def test_a_reset_already_past_waits_one_second_of_clock_skew(
    server: GitHubServer, token: InstallationToken
) -> None:
    # githubkit sleeps 60 s when handed a zero delay.
    server.fail_primary_rate_limit("GET", ISSUE, reset_in_s=-5)
    gh = raw_client(server, token)
    exc = issue_failure(gh)
    assert isinstance(exc, PrimaryRateLimitExceeded) and exc.retry_after == timedelta()

    do_retry, wait = RetryPolicy()(exc, 0)
    assert do_retry and wait is not None
    assert wait == timedelta(seconds=1)


@pytest.mark.parametrize("status", [500, 502, 503])
def test_server_errors_back_off_exponentially(
    server: GitHubServer, token: InstallationToken, status: int
) -> None:
    server.fail_server_error("GET", ISSUE, status=status)
    gh = raw_client(server, token)
    exc = issue_failure(gh)
    policy = RetryPolicy(max_retries=4, backoff_s=0.5)

    assert [policy(exc, n) for n in range(5)] == [
        (True, timedelta(seconds=0.5)),
        (True, timedelta(seconds=1)),
        (True, timedelta(seconds=2)),
        (True, timedelta(seconds=4)),
        (False, None),
    ]


@pytest.mark.parametrize(
    ("status", "body"),
    [
        (404, None),
        (422, None),
        (401, None),
        (403, {"message": "Resource not accessible by integration"}),
    ],
)
def test_client_errors_are_not_retried(
    server: GitHubServer, token: InstallationToken, status: int, body: dict[str, str] | None
) -> None:
    server.fail_next("GET", ISSUE, status, body=body)
    gh = raw_client(server, token)
    exc = issue_failure(gh)
    assert isinstance(exc, RequestFailed) and exc.response.status_code == status
    assert RetryPolicy()(exc, 0).do_retry is False


def test_timeouts_are_retried_for_reads_only(
    server: GitHubServer, token: InstallationToken
) -> None:
    server.fail_server_error("GET", ISSUE, delay_s=0.4)
    server.fail_next("POST", COMMENTS, 201, body={"id": 1}, delay_s=0.4)
    gh = raw_client(server, token, timeout=0.1)
    read = issue_failure(gh)
    write = comment_failure(gh)
    assert isinstance(read, RequestTimeout) and isinstance(write, RequestTimeout)
    policy = RetryPolicy(backoff_s=0.25)

    assert policy(read, 1) == (True, timedelta(seconds=0.5))
    # A mutation that timed out may have happened: sending it again could post twice.
    assert policy(write, 0).do_retry is False


# --- end to end through GitHubApp and RepoAPI ---------------------------------------------------


@pytest.mark.parametrize("status", [429, 403])
def test_a_secondary_limit_is_waited_out_then_the_comment_is_posted(
    server: GitHubServer, app_key: tuple[str, bytes], status: int
) -> None:
    api = repo_api(make_app(server, app_key[0]))
    server.fail_secondary_rate_limit("POST", COMMENTS, retry_after_s=1, status=status)

    comment_id = api.upsert_comment(1, MARK, f"{MARK}\nReproduced.", None)

    posts = api_calls(server, COMMENTS, "POST")
    assert [c.status for c in posts] == [status, 201]
    assert gaps(posts)[0] >= 1.0
    assert [c["id"] for c in server.comments(REPO, 1)] == [comment_id]


def test_a_primary_limit_is_waited_out_until_its_reset(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0]))
    before = time.time()
    server.fail_primary_rate_limit("GET", r"/repos/octo-org/widgets$", reset_in_s=2)
    # The server sends int(now + 2): the reset is at least this second, over 1 s away.
    earliest_reset = int(before + 2)
    wall = time.time() - time.monotonic()

    info = api.repository()

    assert info.full_name == REPO
    limited, retried = api_calls(server, r"/repos/octo-org/widgets$")
    assert (limited.status, retried.status) == (403, 200)
    assert retried.started + wall >= earliest_reset - 0.01
    # At most two seconds to the reset, and one of allowance for clock skew.
    assert retried.started - limited.finished < 3.5


def test_a_primary_limit_beyond_the_longest_wait_fails_at_once(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0], max_wait_s=5))
    server.fail_primary_rate_limit("GET", r"/repos/octo-org/widgets$", reset_in_s=120)

    started = time.monotonic()
    with pytest.raises(GitHubError) as failed:
        api.repository()

    assert time.monotonic() - started < 1.0
    assert failed.value.status == 403 and failed.value.repo == REPO
    assert "API rate limit exceeded" in str(failed.value)
    assert [c.status for c in api_calls(server)] == [403]


def test_a_secondary_limit_beyond_the_longest_wait_fails_at_once(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0], max_wait_s=5))
    server.fail_secondary_rate_limit("POST", COMMENTS, retry_after_s=60, status=429)

    started = time.monotonic()
    with pytest.raises(GitHubError) as failed:
        api.upsert_comment(1, MARK, MARK, None)

    assert time.monotonic() - started < 1.0
    assert failed.value.status == 429
    assert server.comments(REPO, 1) == []


def test_server_errors_are_retried_with_growing_pauses(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0], backoff_s=0.1))
    server.fail_server_error("GET", ISSUE, times=2)

    issue = api.issue(1)

    assert issue.title == "area() is wrong"
    calls = api_calls(server, ISSUE)
    assert [c.status for c in calls] == [502, 502, 200]
    first, second = gaps(calls)
    assert first >= 0.1 and second >= 0.2
    assert first + second < 1.0


def test_retries_are_bounded(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    api = repo_api(make_app(server, app_key[0], max_retries=2, backoff_s=0.02))
    server.fail_server_error("GET", ISSUE, status=503, times=10)

    with pytest.raises(GitHubError) as failed:
        api.issue(1)

    assert failed.value.status == 503
    assert [c.status for c in api_calls(server, ISSUE)] == [503, 503, 503]


def test_a_timed_out_read_is_retried(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    api = repo_api(make_app(server, app_key[0], timeout_s=0.3))
    server.fail_server_error("GET", ISSUE, delay_s=0.8)

    assert api.issue(1).number == 1
    statuses = [c.status for c in api_calls(server, ISSUE)]
    assert statuses in ([200], [200, 502])  # the slow answer is recorded when its delay ends


def test_a_comment_whose_answer_timed_out_is_looked_for_before_it_is_posted_again(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0], timeout_s=0.3))
    # GitHub made the comment, but its answer came too late.
    server.fail_next("POST", COMMENTS, 201, body={"id": 1}, delay_s=0.6, after=True)
    comment_id = api.upsert_comment(1, MARK, MARK + " body", None)
    time.sleep(0.6)  # until the slow answer is recorded, and any second post would be
    assert len(api_calls(server, COMMENTS, "POST")) == 1
    (comment,) = server.comments(REPO, 1)
    assert comment["id"] == comment_id and comment["body"] == MARK + " body"


def test_a_comment_that_failed_with_a_5xx_after_it_was_made_is_not_made_twice(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0]))
    server.fail_next("POST", COMMENTS, 502, after=True)
    api.upsert_comment(1, MARK, MARK + " body", None)
    # githubkit did not resend the POST; Reprobot looked, found it, and edited it in place.
    assert len(api_calls(server, COMMENTS, "POST")) == 1
    assert [c["body"] for c in server.comments(REPO, 1)] == [MARK + " body"]


def test_a_comment_that_failed_with_a_5xx_before_it_was_made_is_posted_again(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0]))
    server.fail_next("POST", COMMENTS, 503)
    api.upsert_comment(1, MARK, MARK + " body", None)
    assert [c.status for c in api_calls(server, COMMENTS, "POST")] == [503, 201]
    assert [c["body"] for c in server.comments(REPO, 1)] == [MARK + " body"]


def test_a_read_of_an_object_the_event_named_is_tried_again_after_a_404(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    api = repo_api(make_app(server, app_key[0]))
    server.fail_next("GET", ISSUE, 404, times=2)
    assert api.issue(1).number == 1
    assert [c.status for c in api_calls(server, ISSUE)] == [404, 404, 200]
    # A third 404 in a row is the answer.
    server.fail_next("GET", ISSUE, 404, times=3)
    with pytest.raises(GitHubError) as failed:
        api.issue(1)
    assert failed.value.status == 404


# --- mutations one at a time ----------------------------------------------------------------


def test_concurrent_mutations_go_one_at_a_time_with_a_pause_between(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    pause = 0.1
    app = make_app(server, app_key[0], pause_s=pause)
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)

    def comment(i: int) -> int:
        # A client of its own per thread, as each job has; the App's throttler is shared.
        api = RepoAPI(app.client(token), REPO, APP_ID)
        marker = f"<!-- reprobot:thread-{i} -->"
        return api.upsert_comment(1, marker, f"{marker}\nfrom thread {i}", None)

    ids = run_threads(8, comment)

    posts = sorted(api_calls(server, COMMENTS, "POST"), key=lambda c: c.started)
    assert len(posts) == 8 and all(c.status == 201 for c in posts)
    assert not overlapping(posts)
    assert min(gaps(posts)) >= pause
    assert sorted(c["id"] for c in server.comments(REPO, 1)) == sorted(ids)
    assert {c["body"].splitlines()[1] for c in server.comments(REPO, 1)} == {
        f"from thread {i}" for i in range(8)
    }


def test_mutations_of_different_kinds_share_one_queue(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    pause = 0.1
    app = make_app(server, app_key[0], pause_s=pause)
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    api = RepoAPI(app.client(token), REPO, APP_ID)
    comment_id = api.upsert_comment(1, MARK, f"{MARK}\nfirst", None)

    def write(i: int) -> None:
        own = RepoAPI(app.client(token), REPO, APP_ID)
        if i % 3 == 0:
            own.add_label(1, f"label-{i}")
        elif i % 3 == 1:
            own.remove_label(1, f"label-{i - 1}")
        else:
            own.upsert_comment(1, MARK, f"{MARK}\nedit {i}", comment_id)

    run_threads(6, write)

    writes = sorted(
        (c for c in api_calls(server) if c.method in ("POST", "PATCH", "DELETE")),
        key=lambda c: c.started,
    )
    assert {c.method for c in writes} == {"POST", "PATCH", "DELETE"}
    assert not overlapping(writes)
    assert min(gaps(writes)) >= pause


def test_reads_run_concurrently(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    app = make_app(server, app_key[0], pause_s=0.2)
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    # Slow answers carrying the real issue, so that reads last long enough to meet.
    with GitHub(TokenAuthStrategy(token.token), base_url=server.api_url, http_cache=False) as gh:
        issue = gh.rest.issues.get("octo-org", "widgets", 1).json()
    server.fail_next("GET", ISSUE, 200, body=issue, times=4, delay_s=0.3)

    started = time.monotonic()
    titles = run_threads(4, lambda i: RepoAPI(app.client(token), REPO, APP_ID).issue(1).title)
    elapsed = time.monotonic() - started

    assert titles == ["area() is wrong"] * 4
    reads = api_calls(server, ISSUE)[-4:]
    assert most_at_once(reads) >= 2
    assert elapsed < 4 * 0.3


def test_reads_are_capped_at_max_reads(server: GitHubServer, app_key: tuple[str, bytes]) -> None:
    app = make_app(server, app_key[0], max_reads=2)
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    with GitHub(TokenAuthStrategy(token.token), base_url=server.api_url, http_cache=False) as gh:
        issue = gh.rest.issues.get("octo-org", "widgets", 1).json()
    server.fail_next("GET", ISSUE, 200, body=issue, times=6, delay_s=0.15)

    run_threads(6, lambda i: RepoAPI(app.client(token), REPO, APP_ID).issue(1))

    reads = api_calls(server, ISSUE)[-6:]
    assert most_at_once(reads) == 2


def test_a_slow_mutation_does_not_hold_up_reads(
    server: GitHubServer, app_key: tuple[str, bytes]
) -> None:
    app = make_app(server, app_key[0], pause_s=0.05)
    token = app.token(INSTALLATION, REPO, REPRODUCE_PERMISSIONS)
    server.fail_next("POST", r"/issues/1/labels$", 200, body={"slow": True}, delay_s=0.5)
    writer = RepoAPI(app.client(token), REPO, APP_ID)
    reader = RepoAPI(app.client(token), REPO, APP_ID)

    thread = threading.Thread(target=writer.add_label, args=(1, "slow"))
    thread.start()
    time.sleep(0.1)
    assert reader.issue(1).number == 1
    assert reader.repository().full_name == REPO
    thread.join()

    post = api_calls(server, r"/issues/1/labels$", "POST")[0]
    reads = [c for c in api_calls(server) if c.method == "GET"]
    assert len(reads) == 2
    assert all(post.started < c.started and c.finished < post.finished for c in reads)
