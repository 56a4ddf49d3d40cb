"""What an event handler may consult while it works out the jobs a delivery asks for.

It lives apart from the router so that the router can import the handlers, and the handlers this
type, without a circle.
"""

from __future__ import annotations

from dataclasses import dataclass

from reprobot.bot.store.ledger import Ledger
from reprobot.bot.store.records import Records


@dataclass(frozen=True)
class RouteContext:
    """What routing may consult: the App's id, and the store for lookups and bookkeeping."""

    app_id: int | None
    ledger: Ledger
    records: Records
