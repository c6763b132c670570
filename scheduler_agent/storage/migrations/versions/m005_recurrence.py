"""m005_recurrence: repeating events, and where an imported event came from.

An event with an `rrule` or `rdates` repeats: `start_utc`/`end_utc` hold its first occurrence and the rule
is expanded in the wall-clock time of `tz`. `event_sources` keys an imported event by its iCalendar UID (and
RECURRENCE-ID) and the person it was imported for: importing the same file again updates, never duplicates.
"""

from scheduler_agent.storage.migrations.ddl import run

revision = "m005"
down_revision = "m004"


def upgrade() -> None:
    run(
        "ALTER TABLE events ADD COLUMN tz {text}",  # the IANA zone its times were given in; NULL: not known
        "ALTER TABLE events ADD COLUMN all_day {int} NOT NULL DEFAULT 0 CHECK (all_day IN (0, 1))",
        "ALTER TABLE events ADD COLUMN rrule {text}",  # an RFC 5545 RRULE value, UNTIL in UTC; NULL: no rule
        "ALTER TABLE events ADD COLUMN rdates {text} NOT NULL DEFAULT ''",  # extra starts, UTC, space-separated
        "ALTER TABLE events ADD COLUMN exdates {text} NOT NULL DEFAULT ''",  # starts left out, UTC, space-separated
        """
        CREATE TABLE event_sources (
            event_id {int} PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            person_key {text} NOT NULL REFERENCES people (key),
            uid {text} NOT NULL CHECK (uid <> ''),
            recurrence_id {text} NOT NULL DEFAULT '',  -- '' for a whole event, else the UTC start it replaces
            UNIQUE (person_key, uid, recurrence_id)
        )
        """,
    )
