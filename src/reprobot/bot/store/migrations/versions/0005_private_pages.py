"""Pages of private repositories, shown only to signed-in readers of the repository, and the
sign-in sessions of those readers.

Revision ID: 0005
Revises: 0004
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | Sequence[str] | None = "0004"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    with op.batch_alter_table("pages") as batch:
        batch.add_column(
            sa.Column("private", sa.Boolean(), nullable=False, server_default=sa.false())
        )
    # Whether the repository of a page made before was private is not known: it may have
    # been, so those pages need a signed-in reader who can read the repository from now on.
    op.execute(sa.text("UPDATE pages SET private = :yes").bindparams(yes=True))
    op.create_table(
        "web_sessions",
        sa.Column("id_hash", sa.String(64), nullable=False),
        sa.Column("login", sa.String(255), nullable=False),
        sa.Column("user_token", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("expires_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id_hash", name="pk_web_sessions"),
    )
    op.create_index("ix_web_sessions_expires_at", "web_sessions", ["expires_at"])


def downgrade() -> None:
    op.drop_index("ix_web_sessions_expires_at", table_name="web_sessions")
    op.drop_table("web_sessions")
    with op.batch_alter_table("pages") as batch:
        batch.drop_column("private")
