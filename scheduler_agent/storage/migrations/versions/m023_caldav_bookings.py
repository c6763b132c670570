"""m023_caldav_bookings: each change a call makes on a CalDAV server, linked to the remote resource.

The row is written (and committed) before the PUT, with `written` 0, and set to 1 with the ETag once the
server has the change. A process killed in between leaves the row at 0: the resumed round reads the resource
and finds its own write there or makes it. The password is never here.
"""

from scheduler_agent.storage.migrations.ddl import run

revision = "m023"
down_revision = "m021"


def upgrade() -> None:
    run(
        """
        CREATE TABLE caldav_bookings (
            tool_use_id {text} PRIMARY KEY CHECK (tool_use_id <> ''),
            kind {text} NOT NULL CHECK (kind IN ('create_event', 'move_event', 'cancel_event')),
            href {text} NOT NULL CHECK (href <> ''),
            uid {text} NOT NULL,
            etag {text},                      -- the resource's ETag right after the write
            event_id {int} REFERENCES caldav_events (id),
            written {int} NOT NULL DEFAULT 0 CHECK (written IN (0, 1)),
            created_at {text} NOT NULL DEFAULT {now}
        )
        """,
    )
