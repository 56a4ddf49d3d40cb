"""Report pages: the documents behind the links of check runs and comments.

Revision ID: 0003
Revises: 0002
"""

from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | Sequence[str] | None = "0002"
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "pages",
        sa.Column("id", sa.String(64), nullable=False),
        sa.Column("kind", sa.String(16), nullable=False),
        sa.Column("repo", sa.String(255), nullable=False),
        sa.Column("number", sa.Integer(), nullable=False),
        sa.Column("head_sha", sa.String(64), nullable=True),
        sa.Column("status", sa.String(32), nullable=False),
        sa.Column("document", sa.Text(), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.CheckConstraint("kind IN ('reproduction', 'verdict')", name="ck_pages_kind"),
        sa.PrimaryKeyConstraint("id", name="pk_pages"),
    )
    op.create_index("ix_pages_repo_number", "pages", ["repo", "number"])
    op.create_index("ix_pages_created_at", "pages", ["created_at"])


def downgrade() -> None:
    op.drop_index("ix_pages_created_at", table_name="pages")
    op.drop_index("ix_pages_repo_number", table_name="pages")
    op.drop_table("pages")
