"""m017_caldav_connections: the owner's CalDAV connection, and the local ids of the events read from or written
to a server.

The password is never stored: `password_source` says where it is read from each time. `caldav_events` gives
each remote resource (its href) a local integer id, the id the model sees; `tool_use_id` is set on the one a
booking wrote.
"""

from scheduler_agent.storage.migrations.ddl import run, serial_id

revision = "m017"
down_revision = "m015"


def upgrade() -> None:
    run(
        """
        CREATE TABLE caldav_connections (
            person_key {text} PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            url {text} NOT NULL CHECK (url <> ''),
            username {text} NOT NULL CHECK (username <> ''),
            calendar_url {text} NOT NULL CHECK (calendar_url <> ''),
            calendar_name {text} NOT NULL DEFAULT '',
            password_source {text} NOT NULL CHECK (password_source <> ''),
            email {text},                     -- the owner's address, the ORGANIZER of what is booked
            invites {int} NOT NULL DEFAULT 1 CHECK (invites IN (0, 1)),
            created_at {text} NOT NULL DEFAULT {now}
        )
        """,
        """
        CREATE TABLE caldav_events (
            {id},
            href {text} NOT NULL UNIQUE CHECK (href <> ''),  -- the resource's full URL
            uid {text} NOT NULL,
            tool_use_id {text} UNIQUE         -- the create_event call that wrote it, if one did
        )
        """,
    )
    serial_id("caldav_events")
