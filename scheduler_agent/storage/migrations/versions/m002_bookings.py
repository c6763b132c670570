"""m002_bookings: what each create_event call booked, keyed by its tool_use id, written with the event itself.

A resumed round finds the record and answers with it instead of booking again.
"""

from scheduler_agent.storage.migrations.ddl import run

revision = "m002"
down_revision = "m001"


def upgrade() -> None:
    run(
        """
        CREATE TABLE bookings (
            tool_use_id {text} PRIMARY KEY CHECK (tool_use_id <> ''),
            event_id {int} REFERENCES events (id) ON DELETE SET NULL,
            result {text} NOT NULL,  -- the tool_result text the call answered with
            created_at {text} NOT NULL DEFAULT {now}
        )
        """,
    )
