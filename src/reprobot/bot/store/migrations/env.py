"""Alembic environment for the App's store: online only, on the connection that
``engine.migrate`` passes.

``engine.migrate`` opens the transaction; running inside it is what makes concurrent starts safe.
"""

from __future__ import annotations

from alembic import context
from sqlalchemy import Connection

from reprobot.bot.store.models import Base


def run_migrations_online() -> None:
    """Run pending revisions on ``config.attributes["connection"]`` within its transaction."""
    connection = context.config.attributes.get("connection")
    if not isinstance(connection, Connection):
        raise RuntimeError(
            "reprobot migrations run through reprobot.bot.store.engine.migrate, "
            "which passes a connection"
        )
    context.configure(
        connection=connection,
        target_metadata=Base.metadata,
        # SQLite cannot ALTER most things in place; batch mode copies the table instead.
        render_as_batch=connection.dialect.name == "sqlite",
        transactional_ddl=True,
    )
    with context.begin_transaction():
        context.run_migrations()


if context.is_offline_mode():
    raise RuntimeError("reprobot migrations do not support offline (SQL script) mode")
run_migrations_online()
