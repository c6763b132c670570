"""m041_caldav_replica: the owner's CalDAV calendar is synced into the store (calendar/caldav/sync.py).

The connection keeps its WebDAV sync token (NULL: not synced yet, so the first use syncs everything), when
it last synced, the line of the last failed sync ('' when it worked), and the server's answer on
scheduling (NULL: not asked yet; a connection made before is asked once, on first use). Each resource
(`caldav_events`) keeps its ETag, the event it is in the store (`event_id`; NULL when the server no longer
has it) and its ORGANIZER. A database connected before has no events of the server in the store: its
first use syncs them, and a booking made before is found by its resource name (`href`), not added twice."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m041"
down_revision = "m039"


def upgrade() -> None:
    run(
        "ALTER TABLE caldav_connections ADD COLUMN sync_token {text}",
        "ALTER TABLE caldav_connections ADD COLUMN synced_at {text}",
        "ALTER TABLE caldav_connections ADD COLUMN sync_failed {text} NOT NULL DEFAULT ''",
        "ALTER TABLE caldav_connections ADD COLUMN scheduling {int} CHECK (scheduling IN (0, 1))",
        "ALTER TABLE caldav_events ADD COLUMN etag {text}",
        "ALTER TABLE caldav_events ADD COLUMN event_id {int} REFERENCES events (id) ON DELETE SET NULL",
        "ALTER TABLE caldav_events ADD COLUMN organizer {text}",
    )
