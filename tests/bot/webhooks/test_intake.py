"""The webhook's intake: deliveries routed and recorded in batches by one thread, each delivery
answered with its own outcome or its own error, on both back-ends."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from pydantic import SecretStr
from sqlalchemy import Engine, text

from reprobot.bot.context import AppContext, build_context
from reprobot.bot.store.engine import StoreError
from reprobot.bot.store.jobs import Delivery, DeliveryOutcome
from reprobot.bot.store.ledger import Ledger
from reprobot.bot.webhooks.intake import Accepted, Intake
from reprobot.bot.webhooks.route_context import RouteContext
from reprobot.bot.webhooks.router import BadDelivery, Routed, route
from reprobot.settings import Settings
from tests.support import webhooks
from tests.support.github_server import make_app_key

REPO = "octo/widgets"
APP_ID = 4242


class CountingLedger(Ledger):
    """The real ledger, noting the size of every batch it is asked to record."""

    def __init__(self, engine: Engine) -> None:
        super().__init__(engine)
        self.batches: list[int] = []

    def record_deliveries(
        self, deliveries: Sequence[Delivery], enqueue: bool = False
    ) -> list[DeliveryOutcome]:
        self.batches.append(len(deliveries))
        return super().record_deliveries(deliveries, enqueue=enqueue)


class GatedRouter:
    """The real router, holding its first call until the test opens the gate: everything
    submitted meanwhile waits in the inbox and makes the next batch."""

    def __init__(self) -> None:
        self.gate = threading.Event()
        self.first = True

    def __call__(self, event: str, body: bytes, ctx: RouteContext) -> Routed:
        if self.first:
            self.first = False
            assert self.gate.wait(30)
        return route(event, body, ctx)


@pytest.fixture
def ctx(tmp_path: Path, backend: dict[str, str]) -> Iterator[AppContext]:
    key, _ = make_app_key()
    (tmp_path / "app.pem").write_text(key)
    settings = Settings(
        cache_dir=tmp_path / "cache",
        webhook_secret=SecretStr("intake"),
        app_id=APP_ID,
        private_key_path=tmp_path / "app.pem",
        github_api_url="http://127.0.0.1:9/api/v3",
        **backend,  # type: ignore[arg-type]
    )
    context = build_context(settings)
    yield context
    context.close()


def issue_body(number: int) -> bytes:
    return webhooks.encode(webhooks.issue_opened(REPO, 1, number, f"bug {number}", "boom"))


def make_intake(ctx: AppContext) -> tuple[Intake, CountingLedger, GatedRouter]:
    ledger = CountingLedger(ctx.engine)
    router = GatedRouter()
    route_ctx = RouteContext(app_id=APP_ID, ledger=ledger, records=ctx.records)
    return Intake(route_ctx, ledger, ctx.queue, max_batch=64, router=router), ledger, router


async def submit_all(
    intake: Intake, router: GatedRouter, items: list[tuple[str, str, bytes]]
) -> list[Accepted | BaseException]:
    """Submit the first item, then the rest while the first is held, then open the gate."""
    first = asyncio.ensure_future(intake.submit(*items[0]))
    while router.first:
        await asyncio.sleep(0.005)
    rest = [asyncio.ensure_future(intake.submit(*item)) for item in items[1:]]
    await asyncio.sleep(0.05)  # every submission is in the inbox before the gate opens
    router.gate.set()
    return list(await asyncio.gather(first, *rest, return_exceptions=True))


def test_deliveries_in_flight_are_recorded_as_one_batch(ctx: AppContext) -> None:
    intake, ledger, router = make_intake(ctx)
    items = [(f"d-{n}", "issues", issue_body(n)) for n in range(1, 41)]
    try:
        results = asyncio.run(submit_all(intake, router, items))
    finally:
        intake.close()

    # The held first one alone, then the other 39 together.
    assert ledger.batches == [1, 39]
    job_ids: set[int] = set()
    for result in results:
        assert not isinstance(result, BaseException)
        assert result.outcome.new and len(result.outcome.job_ids) == 1
        assert result.repo == REPO and result.action == "opened"
        job_ids.update(result.outcome.job_ids)
    assert len(job_ids) == 40
    with ctx.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM deliveries")).scalar_one() == 40
        queued = conn.execute(
            text("SELECT count(*) FROM jobs WHERE enqueued_at IS NOT NULL")
        ).scalar_one()
    assert queued == 40
    assert ctx.queue.ping() == 40


def test_a_repeated_id_within_a_batch_is_answered_as_a_duplicate(ctx: AppContext) -> None:
    intake, ledger, router = make_intake(ctx)
    items = [
        ("first", "issues", issue_body(1)),
        ("twice", "issues", issue_body(2)),
        ("twice", "issues", issue_body(2)),
    ]
    try:
        _, once, again = asyncio.run(submit_all(intake, router, items))
    finally:
        intake.close()

    assert ledger.batches == [1, 2]
    assert isinstance(once, Accepted) and isinstance(again, Accepted)
    assert once.outcome.new and not again.outcome.new
    assert once.outcome.job_ids == again.outcome.job_ids
    assert again.outcome.to_enqueue == ()


def refuse_delivery(engine: Engine, delivery_id: str) -> None:
    """A trigger that makes the store itself refuse one delivery id."""
    with engine.begin() as conn:
        if engine.dialect.name == "sqlite":
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON deliveries "
                f"WHEN NEW.delivery_id = '{delivery_id}' "
                "BEGIN SELECT RAISE(ABORT, 'refused by the store'); END"
            )
        else:
            conn.exec_driver_sql(
                "CREATE FUNCTION refuse() RETURNS trigger AS $$ BEGIN "
                f"IF NEW.delivery_id = '{delivery_id}' THEN "
                "RAISE EXCEPTION 'refused by the store'; END IF; RETURN NEW; END $$ "
                "LANGUAGE plpgsql"
            )
            conn.exec_driver_sql(
                "CREATE TRIGGER refuse BEFORE INSERT ON deliveries "
                "FOR EACH ROW EXECUTE FUNCTION refuse()"
            )


def test_failures_stay_with_their_own_delivery(ctx: AppContext) -> None:
    refuse_delivery(ctx.engine, "refused")
    intake, ledger, router = make_intake(ctx)
    items = [
        ("held", "issues", issue_body(1)),
        ("before", "issues", issue_body(2)),
        ("refused", "issues", issue_body(3)),
        ("malformed", "issues", b'{"action": "opened"}'),
        ("after", "issues", issue_body(4)),
    ]
    try:
        held, before, refused, malformed, after = asyncio.run(submit_all(intake, router, items))
    finally:
        intake.close()

    assert isinstance(malformed, BadDelivery)
    assert isinstance(refused, Exception) and "refused by the store" in str(refused)
    for accepted in (held, before, after):
        assert not isinstance(accepted, BaseException) and accepted.outcome.new
    # The batch of three routed deliveries failed as a whole, then each was recorded alone.
    assert ledger.batches == [1, 3, 1, 1, 1]
    with ctx.engine.connect() as conn:
        stored = conn.execute(text("SELECT delivery_id FROM deliveries")).scalars().all()
        jobs = conn.execute(text("SELECT count(*) FROM jobs")).scalar_one()
    assert sorted(stored) == ["after", "before", "held"]
    assert jobs == 3


def test_close_records_what_came_before_and_refuses_what_comes_after(ctx: AppContext) -> None:
    intake, _, router = make_intake(ctx)
    router.gate.set()

    async def scenario() -> None:
        pending = [
            asyncio.ensure_future(intake.submit(f"c-{n}", "issues", issue_body(n)))
            for n in range(1, 6)
        ]
        await asyncio.sleep(0)  # each is in the inbox
        await asyncio.to_thread(intake.close)
        results = await asyncio.gather(*pending)
        assert all(r.outcome.new for r in results)
        with pytest.raises(StoreError, match="shutting down"):
            await intake.submit("late", "issues", issue_body(9))

    asyncio.run(scenario())
    with ctx.engine.connect() as conn:
        assert conn.execute(text("SELECT count(*) FROM deliveries")).scalar_one() == 5
