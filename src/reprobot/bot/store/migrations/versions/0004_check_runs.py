"""The check run each verification job created, so that a retry reuses it and the reaper
completes one its job left behind.

Revision ID: 0004
Revises: 0003
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | Sequence[str] | None = "0003"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "check_runs",
        sa.Column("job_id", sa.Integer(), nullable=False),
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=False),
        sa.Column("check_run_id", sa.BigInteger(), nullable=False),
        sa.Column("completed", sa.Boolean(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("job_id", name="pk_check_runs"),
    )
    op.create_index("ix_check_runs_completed", "check_runs", ["completed"])


def downgrade() -> None:
    op.drop_index("ix_check_runs_completed", table_name="check_runs")
    op.drop_table("check_runs")
