"""m015_bookings_kind_and_input: every side effect is recorded by its tool_use id, not only bookings: which tool
made it and a hash of the call's input, so a reused id with another input is refused instead of answered
wrongly. Rows written before keep kind 'create_event' and an empty hash (not checked)."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m015"
down_revision = "m014"


def upgrade() -> None:
    run(
        "ALTER TABLE bookings ADD COLUMN kind {text} NOT NULL DEFAULT 'create_event' "
        "CHECK (kind IN ('create_event', 'move_event', 'cancel_event'))",
        "ALTER TABLE bookings ADD COLUMN input_hash {text} NOT NULL DEFAULT ''",  # sha256 of the canonical JSON input
    )
