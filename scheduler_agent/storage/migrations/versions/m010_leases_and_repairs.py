"""m010_leases_and_repairs: who runs each conversation (one lease per conversation id, storage/lease.py), and
each `conversations repair`: what it changed, with the whole list as it was before."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m010"
down_revision = "m008"


def upgrade() -> None:
    run(
        """
        CREATE TABLE leases (
            conversation_id {int} PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
            holder_host {text} NOT NULL,
            holder_pid {int} NOT NULL,
            since {text} NOT NULL,     -- ISO UTC: when this holder claimed it
            expires {text} NOT NULL    -- ISO UTC: it lapses then unless renewed
        )
        """,
        """
        CREATE TABLE repairs (
            conversation_id {int} NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq {int} NOT NULL,
            changes {text} NOT NULL,   -- JSON: one sentence per change
            before {text} NOT NULL,    -- JSON: the whole list before the repair
            repaired_at {text} NOT NULL DEFAULT {now},
            PRIMARY KEY (conversation_id, seq)
        )
        """,
    )
