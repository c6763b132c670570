"""m025_booked_time: the busy time the agent books, one row per attendee of each event a create_event or
move_event made (calendar/bookings.py `book_time` keeps it; a cancelled event takes its rows with it).

On PostgreSQL an exclusion constraint (btree_gist) makes a double booking of a person impossible whatever
races: two overlapping rows for one person cannot both commit. Imported time and repeating series are not
under it: the checks against them run under a per-person advisory lock (calendar/bookings.py `lock_people`).
On SQLite, where BEGIN IMMEDIATE serialises every check with its write, the table has no constraint.
"""

from scheduler_agent.storage.migrations.ddl import postgresql, run

revision = "m025"
down_revision = "m023"

ROWS = (
    "SELECT DISTINCT e.id, a.person_key, {start}, {end} FROM bookings b JOIN events e ON e.id = b.event_id "
    "JOIN event_attendees a ON a.event_id = e.id "
    "WHERE b.kind IN ('create_event', 'move_event') AND e.rrule IS NULL AND e.rdates = ''"
)


def upgrade() -> None:
    if postgresql():  # timestamptz columns: tstzrange needs them, and text casts are not immutable
        run(
            "CREATE EXTENSION IF NOT EXISTS btree_gist",
            """
            CREATE TABLE booked_time (
                event_id {int} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
                person_key {text} NOT NULL REFERENCES people (key) ON DELETE CASCADE,
                start_utc TIMESTAMPTZ NOT NULL,
                end_utc TIMESTAMPTZ NOT NULL CHECK (start_utc < end_utc),
                PRIMARY KEY (event_id, person_key),
                CONSTRAINT booked_time_no_overlap
                    EXCLUDE USING gist (person_key WITH =, tstzrange(start_utc, end_utc) WITH &&)
            )
            """,
            "INSERT INTO booked_time (event_id, person_key, start_utc, end_utc) "
            + ROWS.format(start="CAST(e.start_utc AS TIMESTAMPTZ)", end="CAST(e.end_utc AS TIMESTAMPTZ)"),
        )
        return
    run(
        """
        CREATE TABLE booked_time (
            event_id {int} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key {text} NOT NULL REFERENCES people (key) ON DELETE CASCADE,
            start_utc {text} NOT NULL,
            end_utc {text} NOT NULL CHECK (start_utc < end_utc),
            PRIMARY KEY (event_id, person_key)
        )
        """,
        "CREATE INDEX booked_time_by_person ON booked_time (person_key, start_utc)",
        "INSERT INTO booked_time (event_id, person_key, start_utc, end_utc) "
        + ROWS.format(start="e.start_utc", end="e.end_utc"),
    )
