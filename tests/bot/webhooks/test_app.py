"""The webhook endpoint and the routing of real deliveries (no Docker, no GitHub): signatures,
durable recording, duplicates, supersession, commands and health probes."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import docker
import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr
from sqlalchemy import text

from reprobot.bot.context import AppContext, build_context
from reprobot.bot.errors import AppConfigError
from reprobot.bot.render.pull import CHECK_NAME
from reprobot.bot.webhooks.app import create_app, signature_ok
from reprobot.bot.webhooks.router import BadDelivery, parse
from reprobot.settings import Settings
from tests.support import webhooks
from tests.support.github_server import make_app_key

SECRET = "It's a Secret to Everybody"
REPO = "octo/widgets"
APP_ID = 4242


@pytest.fixture
def app_settings(tmp_path: Path, backend: dict[str, str]) -> Settings:
    key, _ = make_app_key()
    key_path = tmp_path / "app.pem"
    key_path.write_text(key)
    return Settings(
        cache_dir=tmp_path / "cache",
        webhook_secret=SecretStr(SECRET),
        app_id=APP_ID,
        private_key_path=key_path,
        github_api_url="http://127.0.0.1:9/api/v3",
        **backend,  # type: ignore[arg-type]
    )


@pytest.fixture
def ctx(app_settings: Settings) -> Iterator[AppContext]:
    context = build_context(app_settings)
    yield context
    context.close()


@pytest.fixture
def client(ctx: AppContext) -> Iterator[TestClient]:
    with TestClient(create_app(ctx)) as test_client:
        yield test_client


def post(
    client: TestClient, event: str, data: dict[str, object], delivery: str | None = None
) -> tuple[int, Any]:
    body = webhooks.encode(data)
    resp = client.post(
        "/webhook", content=body, headers=webhooks.headers(SECRET, event, body, delivery)
    )
    return resp.status_code, resp.json()


def deliveries(ctx: AppContext) -> list[str]:
    with ctx.engine.connect() as conn:
        return [row[0] for row in conn.execute(text("SELECT delivery_id FROM deliveries"))]


def test_signature_rules() -> None:
    body = b'{"zen": "Design for failure."}'
    good = webhooks.headers("s", "ping", body)["x-hub-signature-256"]
    assert signature_ok("s", body, good)
    assert not signature_ok("s", body + b" ", good)
    assert not signature_ok("t", body, good)
    assert not signature_ok("s", body, None)
    assert not signature_ok("", body, good)
    # A SHA-1 signature is refused even when it is right.
    assert not signature_ok("s", body, webhooks.headers("s", "ping", body)["x-hub-signature"])


def test_an_opened_issue_is_recorded_enqueued_and_acknowledged(
    client: TestClient, ctx: AppContext
) -> None:
    status, answer = post(client, "issues", webhooks.issue_opened(REPO, 7, 12, "bug", "boom"))
    assert status == 202
    assert answer["duplicate"] is False
    (job_id,) = answer["jobs"]
    job = ctx.ledger.get(job_id)
    assert job is not None
    assert (job.kind, job.repo, job.number, job.installation_id, job.state) == (
        "reproduce",
        REPO,
        12,
        7,
        "queued",
    )
    assert job.enqueued_at is not None
    assert ctx.queue.ping() == 1


@pytest.mark.parametrize("variant", ["wrong", "missing", "sha1-only", "other-body"])
def test_unsigned_deliveries_get_401_and_nothing_is_stored(
    client: TestClient, ctx: AppContext, variant: str
) -> None:
    data = webhooks.issue_opened(REPO, 7, 12, "bug", "boom")
    body = webhooks.encode(data)
    headers = webhooks.headers(SECRET, "issues", body, "d-401")
    if variant == "wrong":
        headers["x-hub-signature-256"] = "sha256=" + "0" * 64
    elif variant == "missing":
        del headers["x-hub-signature-256"]
    elif variant == "sha1-only":
        del headers["x-hub-signature-256"]
        headers["x-hub-signature-256"] = headers["x-hub-signature"]
    else:
        headers = webhooks.headers(SECRET, "issues", body + b"\n", "d-401")
    resp = client.post("/webhook", content=body, headers=headers)
    assert resp.status_code == 401
    assert deliveries(ctx) == []
    assert ctx.ledger.jobs() == []
    assert ctx.queue.ping() == 0


def test_a_redelivery_maps_to_the_same_job(client: TestClient, ctx: AppContext) -> None:
    data = webhooks.issue_opened(REPO, 7, 12, "bug", "boom")
    first = post(client, "issues", data, "same-delivery")[1]
    second = post(client, "issues", data, "same-delivery")[1]
    third = post(client, "issues", data, "another-delivery")[1]
    assert second["duplicate"] is True
    assert first["jobs"] == second["jobs"] == third["jobs"]
    assert len(ctx.ledger.jobs()) == 1
    assert ctx.queue.ping() == 1


def test_githubs_redeliver_brings_back_a_job_that_failed(
    client: TestClient, ctx: AppContext
) -> None:
    data = webhooks.issue_opened(REPO, 7, 13, "bug", "boom")
    (job_id,) = post(client, "issues", data, "first-delivery")[1]["jobs"]
    assert ctx.queue.ping() == 1
    assert ctx.ledger.claim(job_id, "w1", 60) is not None
    assert ctx.ledger.finish(job_id, "w1", "failed", error="GitHub answered 502")
    # "Redeliver" in the App's settings sends the same delivery again.
    answer = post(client, "issues", data, "first-delivery")[1]
    assert (answer["duplicate"], answer["jobs"]) == (True, [job_id])
    job = ctx.ledger.get(job_id)
    assert job is not None and (job.state, job.attempts) == ("queued", 0)
    assert ctx.queue.ping() == 2  # enqueued again


def test_a_newer_head_supersedes_the_older_verification(
    client: TestClient, ctx: AppContext
) -> None:
    old = post(
        client,
        "pull_request",
        webhooks.pull_request("opened", REPO, 7, 5, "a" * 40, "b" * 40, "Fixes #1"),
    )[1]
    new = post(
        client,
        "pull_request",
        webhooks.pull_request("synchronize", REPO, 7, 5, "c" * 40, "b" * 40, "Fixes #1"),
    )[1]
    (old_id,), (new_id,) = old["jobs"], new["jobs"]
    old_job, new_job = ctx.ledger.get(old_id), ctx.ledger.get(new_id)
    assert old_job is not None and new_job is not None
    assert (old_job.state, old_job.superseded_by) == ("superseded", new_id)
    assert (new_job.state, new_job.head_sha) == ("queued", "c" * 40)


def test_deliveries_without_work(client: TestClient, ctx: AppContext) -> None:
    # No installation (a plain repository webhook), a closed pull request, an event Reprobot
    # does not act on, a comment without a command, a comment by a bot, another App's check.
    cases: list[tuple[str, dict[str, object]]] = [
        ("issues", webhooks.issue_opened(REPO, None, 1, "t", "b")),
        ("pull_request", webhooks.pull_request("closed", REPO, 7, 5, "a" * 40, "b" * 40, "")),
        ("push", {"ref": "refs/heads/main"}),
        ("issue_comment", webhooks.issue_comment(REPO, 7, 3, "thanks!")),
        (
            "issue_comment",
            webhooks.issue_comment(REPO, 7, 3, "/reprobot reproduce", user_type="Bot"),
        ),
        (
            "check_run",
            webhooks.check_run_rerequested(REPO, 7, APP_ID + 1, CHECK_NAME, "a" * 40, [5]),
        ),
        (
            "check_run",
            webhooks.check_run_rerequested(REPO, 7, APP_ID, "other check", "a" * 40, [5]),
        ),
    ]
    for event, data in cases:
        status, answer = post(client, event, data)
        assert (status, answer["jobs"]) == (202, []), (event, answer)
    assert ctx.ledger.jobs() == []
    # Every delivery of an event Reprobot acts on is kept; the push, which it never acts on,
    # is answered and forgotten.
    assert len(deliveries(ctx)) == len(cases) - 1
    status, answer = post(client, "star", {"action": "created", "starred_at": None})
    assert (status, answer["note"]) == (202, "star is not an event Reprobot acts on")
    assert len(deliveries(ctx)) == len(cases) - 1


def test_commands_and_reruns(client: TestClient, ctx: AppContext) -> None:
    first = post(client, "issues", webhooks.issue_opened(REPO, 7, 3, "bug", "boom"))[1]
    (job_id,) = first["jobs"]
    claimed = ctx.ledger.claim(job_id, "w", 60)
    assert claimed is not None
    ctx.ledger.finish(job_id, "w", "done")
    # A command asks again: the finished job is queued once more.
    rerun = post(
        client, "issue_comment", webhooks.issue_comment(REPO, 7, 3, "/reprobot reproduce")
    )[1]
    assert rerun["jobs"] == [job_id]
    job = ctx.ledger.get(job_id)
    assert job is not None and job.state == "queued"
    assert job.payload["requested_by"] == "maintainer"
    # /reprobot verify on a pull request makes a verification job; on an issue nothing.
    verify = post(
        client,
        "issue_comment",
        webhooks.issue_comment(REPO, 7, 8, "/reprobot verify", on_pull=True),
    )[1]
    (verify_id,) = verify["jobs"]
    verify_job = ctx.ledger.get(verify_id)
    assert verify_job is not None and verify_job.kind == "verify" and verify_job.number == 8
    assert (
        post(client, "issue_comment", webhooks.issue_comment(REPO, 7, 3, "/reprobot verify"))[1][
            "jobs"
        ]
        == []
    )
    # Re-run on Reprobot's own check.
    rerun_check = post(
        client,
        "check_run",
        webhooks.check_run_rerequested(REPO, 7, APP_ID, CHECK_NAME, "d" * 40, [8]),
    )[1]
    (check_job,) = rerun_check["jobs"]
    found = ctx.ledger.get(check_job)
    assert found is not None and (found.head_sha, found.number) == ("d" * 40, 8)


def test_a_rerun_of_a_forks_check_finds_its_pull_request(
    client: TestClient, ctx: AppContext
) -> None:
    # GitHub lists no pull requests on the check runs of forks' heads.
    opened = webhooks.pull_request("opened", REPO, 7, 6, "e" * 40, "b" * 40, "Fixes #1")
    post(client, "pull_request", opened)
    rerun = webhooks.check_run_rerequested(REPO, 7, APP_ID, CHECK_NAME, "e" * 40, [])
    (job_id,) = post(client, "check_run", rerun)[1]["jobs"]
    job = ctx.ledger.get(job_id)
    assert job is not None and (job.number, job.head_sha, job.state) == (6, "e" * 40, "queued")


def test_an_edit_of_the_body_asks_again(client: TestClient, ctx: AppContext) -> None:
    edited = webhooks.issue_edited(REPO, 7, 4, "bug", "new body", "old body")
    (job_id,) = post(client, "issues", edited)[1]["jobs"]
    job = ctx.ledger.get(job_id)
    assert job is not None and job.payload["trigger"] == "edited"
    title_only = webhooks.issue_edited(REPO, 7, 5, "bug", "body", "body")
    title_only["changes"] = {"title": {"from": "old"}}
    assert post(client, "issues", title_only)[1]["jobs"] == []


def test_installations_are_recorded_and_forgotten(client: TestClient, ctx: AppContext) -> None:
    created = webhooks.load("installation.created")
    assert post(client, "installation", created)[0] == 202
    inst_id = created["installation"]["id"]
    assert ctx.records.installation(inst_id) == ("Codertocat", ["Codertocat/Hello-World"])
    added = webhooks.load("installation_repositories.added")
    post(client, "installation_repositories", added)
    stored = ctx.records.installation(added["installation"]["id"])
    assert stored is not None
    assert {r["full_name"] for r in added["repositories_added"]} <= set(stored[1])
    deleted = webhooks.load("installation.deleted")
    deleted["installation"]["id"] = inst_id
    post(client, "installation", deleted)
    assert ctx.records.installation(inst_id) is None


def test_a_signed_but_malformed_delivery_gets_400(client: TestClient, ctx: AppContext) -> None:
    status, answer = post(client, "issues", {"action": "opened", "issue": {"title": "no number"}})
    assert status == 400
    assert "issue.number" in str(answer["error"])
    assert ctx.ledger.jobs() == []


def test_ping_and_health(client: TestClient) -> None:
    body = webhooks.encode(webhooks.load("ping.with-app_id"))
    resp = client.post("/webhook", content=body, headers=webhooks.headers(SECRET, "ping", body))
    assert resp.status_code == 200
    assert client.get("/healthz").json() == {"status": "ok"}


def test_readyz_names_what_is_down(ctx: AppContext, client: TestClient) -> None:
    ctx._docker = docker.DockerClient(base_url="tcp://127.0.0.1:9", version="1.41", timeout=2)
    resp = client.get("/readyz")
    assert resp.status_code == 503
    checks = resp.json()["checks"]
    assert checks["database"] == "ok" and checks["queue"] == "ok"
    assert checks["docker"] != "ok"


def test_a_failed_insert_answers_5xx_so_github_redelivers(
    client: TestClient, ctx: AppContext
) -> None:
    with ctx.engine.begin() as conn:
        conn.execute(text("ALTER TABLE deliveries RENAME TO deliveries_away"))
    data = webhooks.issue_opened(REPO, 7, 12, "bug", "boom")
    assert post(client, "issues", data, "redeliver-me")[0] == 503
    with ctx.engine.begin() as conn:
        conn.execute(text("ALTER TABLE deliveries_away RENAME TO deliveries"))
    status, answer = post(client, "issues", data, "redeliver-me")
    assert (status, answer["duplicate"]) == (202, False)
    assert len(ctx.ledger.jobs()) == 1


@pytest.mark.parametrize("path", webhooks.NAMES, ids=str)
def test_every_real_payload_parses(path: str) -> None:
    event = path.split(".", maxsplit=1)[0]
    body = (webhooks.PAYLOADS / f"{path}.json").read_bytes()
    parsed = parse(event, body)
    if event in ("ping",):
        assert parsed is None
    else:
        assert parsed is not None and parsed.action == json.loads(body)["action"]


def test_parse_names_the_missing_field() -> None:
    with pytest.raises(BadDelivery, match=r"pull_request\.head"):
        parse("pull_request", b'{"action": "opened", "number": 1, "pull_request": {"number": 1}}')


def test_the_app_refuses_to_start_without_a_secret(app_settings: Settings) -> None:
    with pytest.raises(AppConfigError, match="WEBHOOK_SECRET"):
        build_context(app_settings.model_copy(update={"webhook_secret": SecretStr("")}))


def test_metrics_count_deliveries_and_read_jobs_and_the_queue(
    client: TestClient, ctx: AppContext
) -> None:
    data = webhooks.issue_opened(REPO, 7, 21, "bug", "boom")
    post(client, "issues", data, "m-1")
    post(client, "issues", data, "m-1")  # a redelivery
    body = webhooks.encode(data)
    headers = webhooks.headers("wrong secret", "issues", body)
    assert client.post("/webhook", content=body, headers=headers).status_code == 401
    answer = client.get("/metrics")
    assert answer.status_code == 200
    assert answer.headers["content-type"].startswith("text/plain; version=0.0.4")
    text_ = answer.text
    assert 'reprobot_deliveries_total{event="issues",outcome="jobs"} 1.0' in text_
    assert 'reprobot_deliveries_total{event="issues",outcome="duplicate"} 1.0' in text_
    assert 'reprobot_deliveries_total{event="",outcome="bad signature"} 1.0' in text_
    assert 'reprobot_jobs{kind="reproduce",state="queued"} 1.0' in text_
    assert "reprobot_queue_depth 1.0" in text_
