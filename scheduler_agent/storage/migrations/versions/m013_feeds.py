"""m013_feeds: subscribed iCalendar feeds, and where each imported event came from: a file ('') or a feed
('feed:N').

A feed's URL is a credential: it is stored here and nowhere else, and printed masked. `event_sources` is
rebuilt with an `origin` so a feed and a file may both hold the same UID for one person.
"""

from scheduler_agent.storage.migrations.ddl import run, serial_id

revision = "m013"
down_revision = "m012"


def upgrade() -> None:
    run(
        """
        CREATE TABLE feeds (
            {id},
            person_key {text} NOT NULL REFERENCES people (key),
            url {text} NOT NULL CHECK (url <> ''),
            refresh_seconds {int} NOT NULL DEFAULT 900 CHECK (refresh_seconds > 0),
            etag {text},
            last_modified {text},
            fetched_at {text},                 -- the last attempt (UTC)
            ok_at {text},                      -- the last attempt that gave a good copy (or 304)
            result {text} NOT NULL DEFAULT 'never fetched',
            created_at {text} NOT NULL DEFAULT {now},
            UNIQUE (person_key, url)
        )
        """,
        """
        CREATE TABLE event_sources_new (
            event_id {int} PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            person_key {text} NOT NULL REFERENCES people (key),
            origin {text} NOT NULL DEFAULT '',  -- '' for a file, 'feed:N' for feed N
            uid {text} NOT NULL CHECK (uid <> ''),
            recurrence_id {text} NOT NULL DEFAULT '',
            UNIQUE (person_key, origin, uid, recurrence_id)
        )
        """,
        "INSERT INTO event_sources_new (event_id, person_key, uid, recurrence_id) "
        "SELECT event_id, person_key, uid, recurrence_id FROM event_sources",
        "DROP TABLE event_sources",
        "ALTER TABLE event_sources_new RENAME TO event_sources",
        "CREATE INDEX event_sources_by_origin ON event_sources (origin)",
    )
    serial_id("feeds")
