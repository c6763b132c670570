"""m001_calendar: people (the owner is the row keyed 'you'), events in UTC, and who attends what.

On PostgreSQL it first makes `sa_fill_id`, the trigger function that gives a serial `id` SQLite's
`INTEGER PRIMARY KEY` behaviour (ddl.serial_id).
"""

from scheduler_agent.storage.migrations.ddl import postgresql, run, serial_id

revision = "m001"
down_revision: str | None = None

FILL_ID_FUNCTION = """
CREATE OR REPLACE FUNCTION sa_fill_id() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    seq text := pg_get_serial_sequence(quote_ident(TG_TABLE_SCHEMA) || '.' || quote_ident(TG_TABLE_NAME), 'id');
BEGIN
    -- SQLite's INTEGER PRIMARY KEY: NULL takes the next id; an explicit id moves the sequence past it
    IF NEW.id IS NULL THEN
        NEW.id := nextval(seq);
    ELSIF NEW.id > coalesce(pg_sequence_last_value(seq::regclass), 0) THEN
        PERFORM setval(seq, NEW.id);
    END IF;
    RETURN NEW;
END $$
"""


def upgrade() -> None:
    if postgresql():
        run(FILL_ID_FUNCTION.replace("{", "{{").replace("}", "}}"))
    run(
        """
        CREATE TABLE people (
            key {text} PRIMARY KEY CHECK (key <> '' AND key = lower(key)),
            name {text} NOT NULL CHECK (name <> ''),
            tz {text} NOT NULL,
            work_start {text} NOT NULL,  -- 'HH:MM', local time in tz
            work_end {text} NOT NULL CHECK (work_start < work_end)
        )
        """,
        """
        CREATE TABLE events (
            {id},
            title {text} NOT NULL CHECK (title <> ''),
            start_utc {text} NOT NULL,  -- 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order
            end_utc {text} NOT NULL CHECK (start_utc < end_utc),
            created_at {text} NOT NULL DEFAULT {now}
        )
        """,
        "CREATE INDEX events_by_time ON events (start_utc, end_utc)",
        """
        CREATE TABLE event_attendees (
            event_id {int} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key {text} NOT NULL REFERENCES people (key),
            PRIMARY KEY (event_id, person_key)
        )
        """,
        "CREATE INDEX event_attendees_by_person ON event_attendees (person_key, event_id)",
    )
    serial_id("events")
