"""The initial store: deliveries, the job ledger, installations, reproductions, GitHub writes.

Revision ID: 0001
Revises:
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _ts(name: str, nullable: bool = False) -> sa.Column[object]:
    return sa.Column(name, sa.DateTime(timezone=True), nullable=nullable)


def upgrade() -> None:
    op.create_table(
        "deliveries",
        sa.Column("delivery_id", sa.String(64), nullable=False),
        sa.Column("event", sa.String(64), nullable=False),
        sa.Column("action", sa.String(64), nullable=True),
        sa.Column("repo", sa.String(255), nullable=True),
        _ts("received_at"),
        sa.Column("job_ids", sa.JSON(), nullable=False),
        sa.PrimaryKeyConstraint("delivery_id", name="pk_deliveries"),
    )
    op.create_table(
        "jobs",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(512), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("installation_id", sa.BigInteger(), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=True),
        sa.Column("state", sa.String(16), nullable=False),
        sa.Column("attempts", sa.Integer(), nullable=False),
        _ts("lease_until", nullable=True),
        sa.Column("worker", sa.String(255), nullable=True),
        sa.Column("delivery_id", sa.String(64), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("superseded_by", sa.Integer(), nullable=True),
        _ts("created_at"),
        _ts("updated_at"),
        _ts("enqueued_at", nullable=True),
        sa.PrimaryKeyConstraint("id", name="pk_jobs"),
        sa.UniqueConstraint("key", name="uq_jobs_key"),
        sa.CheckConstraint("kind IN ('reproduce', 'verify')", name="ck_jobs_kind"),
        sa.CheckConstraint(
            "state IN ('queued', 'running', 'done', 'failed', 'superseded')",
            name="ck_jobs_state",
        ),
    )
    op.create_index("ix_jobs_repo_kind_number", "jobs", ["repo", "kind", "number"])
    op.create_table(
        "installations",
        sa.Column("id", sa.BigInteger(), autoincrement=False, nullable=False),
        sa.Column("account", sa.String(255), nullable=False),
        sa.Column("repos", sa.JSON(), nullable=False),
        _ts("created_at"),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("id", name="pk_installations"),
    )
    op.create_table(
        "reproductions",
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("issue_number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("base_sha", sa.String(64), nullable=False),
        sa.Column("reproduced", sa.Boolean(), nullable=False),
        sa.Column("test_patch", sa.Text(), nullable=False),
        sa.Column("failing_tests", sa.JSON(), nullable=False),
        sa.Column("failure", sa.Text(), nullable=False),
        sa.Column("method", sa.Text(), nullable=False),
        sa.Column("candidates", sa.JSON(), nullable=False),
        _ts("created_at"),
        sa.PrimaryKeyConstraint("repo", "issue_number", name="pk_reproductions"),
    )
    op.create_table(
        "posted_comments",
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("kind", sa.String(32), nullable=False),
        sa.Column("comment_id", sa.BigInteger(), nullable=False),
        sa.PrimaryKeyConstraint("repo", "number", "kind", name="pk_posted_comments"),
    )
    op.create_table(
        "applied_labels",
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("number", sa.Integer(), autoincrement=False, nullable=False),
        sa.Column("name", sa.String(255), nullable=False),
        sa.Column("state", sa.String(16), nullable=False),
        _ts("updated_at"),
        sa.PrimaryKeyConstraint("repo", "number", "name", name="pk_applied_labels"),
        sa.CheckConstraint("state IN ('added', 'removed')", name="ck_applied_labels_state"),
    )


def downgrade() -> None:
    op.drop_table("applied_labels")
    op.drop_table("posted_comments")
    op.drop_table("reproductions")
    op.drop_table("installations")
    op.drop_index("ix_jobs_repo_kind_number", table_name="jobs")
    op.drop_table("jobs")
    op.drop_table("deliveries")
