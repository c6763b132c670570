"""m019_entry_sizes_and_checked: what a resume needs to send its first request without reading the whole list
twice more: each entry's size in bytes as encoded in a request (NULL for entries stored before: measured when
first needed), and how many leading entries passed the grammar check (0 for conversations stored before)."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m019"
down_revision = "m018"


def upgrade() -> None:
    run(
        "ALTER TABLE entries ADD COLUMN size {int} CHECK (size IS NULL OR size > 0)",
        "ALTER TABLE conversations ADD COLUMN checked {int} NOT NULL DEFAULT 0 CHECK (checked >= 0)",
    )
