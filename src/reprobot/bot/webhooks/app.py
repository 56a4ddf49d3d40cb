"""``reprobot serve``'s web application: the webhook endpoint, the report pages and the health
probes.

The webhook does as little as it safely can: check the signature, hand the delivery to the
intake (which records it with its jobs, in one transaction with whatever else arrived meanwhile,
and enqueues them), and answer 202. Everything slow happens in a worker.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from typing import Any

import anyio
import anyio.to_thread
import structlog
from fastapi import FastAPI, Request
from fastapi.concurrency import run_in_threadpool
from fastapi.responses import JSONResponse, Response
from githubkit.webhooks import verify
from sqlalchemy.exc import SQLAlchemyError
from starlette.types import ASGIApp, Receive, Scope, Send

from reprobot.bot.context import AppContext
from reprobot.bot.github.user_auth import GitHubUsers
from reprobot.bot.metrics import CONTENT_TYPE, CountingTransport
from reprobot.bot.pages.access import AccessCache, ReadAccess
from reprobot.bot.pages.links import page_key, page_links
from reprobot.bot.pages.route import add_page_route
from reprobot.bot.pages.signin import SignIn, add_signin_routes
from reprobot.bot.queue import QueueError
from reprobot.bot.store.engine import StoreError, ping
from reprobot.bot.store.sessions import WebSessions
from reprobot.bot.webhooks.intake import Intake
from reprobot.bot.webhooks.route_context import RouteContext
from reprobot.bot.webhooks.router import BadDelivery, acts_on
from reprobot.validation import DockerUnavailableError

log = structlog.get_logger(__name__)

# GitHub caps a delivery at 25 MB.
MAX_BODY = 25 * 1024 * 1024


def signature_ok(secret: str, body: bytes, signature: str | None) -> bool:
    """True when ``signature`` is the HMAC-SHA256 of ``body`` under ``secret``. SHA-1 signatures
    (``X-Hub-Signature``) are not accepted, whatever they say."""
    if not secret or not signature or not signature.startswith("sha256="):
        return False
    return bool(verify(secret, body, signature))


def _answer(code: int, **content: Any) -> JSONResponse:
    return JSONResponse(content, status_code=code)


class DirectRoute:
    """ASGI middleware that answers one path itself, before the application's routing."""

    def __init__(
        self,
        app: ASGIApp,
        path: str,
        method: str,
        endpoint: Callable[[Request], Awaitable[Response]],
    ) -> None:
        self._app = app
        self._path = path
        self._method = method
        self._endpoint = endpoint

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != self._path:
            await self._app(scope, receive, send)
            return
        if scope["method"] != self._method:
            response: Response = JSONResponse(
                {"error": "method not allowed"}, status_code=405, headers={"allow": self._method}
            )
        else:
            response = await self._endpoint(Request(scope, receive))
        await response(scope, receive, send)


def create_app(
    ctx: AppContext,
    on_startup: Callable[[], None] | None = None,
    on_shutdown: Callable[[], None] | None = None,
) -> FastAPI:
    """The FastAPI application over ``ctx``; ``on_startup``/``on_shutdown`` start and stop an
    embedded worker."""

    @asynccontextmanager
    async def lifespan(_: FastAPI) -> AsyncIterator[None]:
        if on_startup is not None:
            on_startup()
        try:
            yield
        finally:
            await anyio.to_thread.run_sync(intake.close)
            users.close()
            if on_shutdown is not None:
                on_shutdown()

    app = FastAPI(title="Reprobot", docs_url=None, redoc_url=None, lifespan=lifespan)
    secret = ctx.settings.webhook_secret.get_secret_value()
    route_ctx = RouteContext(app_id=ctx.github.app_id, ledger=ctx.ledger, records=ctx.records)
    intake = Intake(route_ctx, ctx.ledger, ctx.queue, max_batch=ctx.settings.webhook_batch)

    async def webhook(request: Request) -> JSONResponse:
        started = time.perf_counter()
        body = await request.body()
        # Only a signed delivery's event name is worth a label of its own.
        if len(body) > MAX_BODY:
            ctx.metrics.deliveries.labels("", "too large").inc()
            return _answer(413, error="delivery too large")
        if not signature_ok(secret, body, request.headers.get("x-hub-signature-256")):
            ctx.metrics.deliveries.labels("", "bad signature").inc()
            log.warning("webhook.bad_signature", delivery=request.headers.get("x-github-delivery"))
            return _answer(401, error="invalid or missing X-Hub-Signature-256")
        delivery = request.headers.get("x-github-delivery", "")
        event = request.headers.get("x-github-event", "")[:64]
        if not delivery or not event or len(delivery) > 200:
            ctx.metrics.deliveries.labels(event, "bad request").inc()
            return _answer(400, error="X-GitHub-Delivery and X-GitHub-Event are required")
        if event == "ping":
            ctx.metrics.deliveries.labels(event, "pong").inc()
            return _answer(200, pong=True)
        if not acts_on(event):
            # Signed, but about nothing Reprobot does (a star, a push): nothing to keep.
            ctx.metrics.deliveries.labels(event, "ignored").inc()
            note = f"{event} is not an event Reprobot acts on"
            return _answer(202, delivery=delivery, jobs=[], duplicate=False, note=note)
        with structlog.contextvars.bound_contextvars(delivery=delivery):
            try:
                accepted = await intake.submit(delivery, event, body)
            except BadDelivery as exc:
                ctx.metrics.deliveries.labels(event, "bad request").inc()
                log.warning("webhook.bad_delivery", github_event=event, error=str(exc))
                return _answer(400, error=str(exc))
            except (SQLAlchemyError, StoreError) as exc:
                ctx.metrics.deliveries.labels(event, "not stored").inc()
                # Nothing was recorded: a 5xx makes the delivery show as failed, and GitHub's
                # redelivery (or the maintainer's "Redeliver") brings it back.
                log.error("webhook.store_failed", github_event=event, error=str(exc))
                return _answer(503, error="the delivery could not be stored; redeliver it")
            outcome = accepted.outcome
            outcome_name = (
                "duplicate" if not outcome.new else ("jobs" if outcome.job_ids else "no job")
            )
            ctx.metrics.deliveries.labels(event, outcome_name).inc()
            log.debug(
                "webhook.accepted",
                github_event=event,
                action=accepted.action,
                repo=accepted.repo,
                jobs=list(outcome.job_ids),
                duplicate=not outcome.new,
                note=accepted.note,
                ms=round((time.perf_counter() - started) * 1000, 2),
            )
            return _answer(
                202,
                delivery=delivery,
                jobs=list(outcome.job_ids),
                duplicate=not outcome.new,
                note=accepted.note,
            )

    # Ahead of FastAPI's routing and dependency machinery, which cost the webhook (the one busy
    # route) about a fifth of its CPU; ServerErrorMiddleware still turns a crash into a 500.
    app.add_middleware(DirectRoute, path="/webhook", method="POST", endpoint=webhook)

    # Pages of private repositories: their readers sign in with GitHub, which says, as each
    # of them, whether they can read the repository.
    users = GitHubUsers.from_settings(ctx.settings, transport=CountingTransport(ctx.metrics))
    access = ReadAccess(users, AccessCache(ctx.settings.access_cache_s))
    signin = SignIn(
        users=users,
        sessions=WebSessions(ctx.engine),
        access=access,
        key=page_key(ctx.settings),
        public_url=ctx.settings.public_url,
    )
    add_page_route(app, ctx.pages, page_links(ctx.settings), signin)
    add_signin_routes(app, signin)

    @app.get("/metrics")
    async def metrics() -> Response:
        body = await run_in_threadpool(ctx.metrics.render)
        return Response(body, media_type=CONTENT_TYPE)

    @app.get("/healthz")
    async def healthz() -> JSONResponse:
        return _answer(200, status="ok")

    @app.get("/readyz")
    async def readyz() -> JSONResponse:
        def check() -> dict[str, str]:
            checks: dict[str, str] = {}
            try:
                ping(ctx.engine)
                checks["database"] = "ok"
            except StoreError as exc:
                checks["database"] = str(exc)
            try:
                ctx.queue.ping()
                checks["queue"] = "ok"
            except QueueError as exc:
                checks["queue"] = str(exc)
            try:
                ctx.docker.ping()
                checks["docker"] = "ok"
            except (DockerUnavailableError, OSError) as exc:
                checks["docker"] = str(exc)
            except Exception as exc:  # noqa: BLE001 - the Docker SDK raises requests' errors too
                checks["docker"] = f"not reachable: {exc}"
            return checks

        checks = await run_in_threadpool(check)
        ready = all(v == "ok" for v in checks.values())
        return _answer(200 if ready else 503, ready=ready, checks=checks)

    return app
