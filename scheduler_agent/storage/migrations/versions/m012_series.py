"""m012_series: repeating events as iCalendar components, their occurrences over a horizon, and fast busy-time
reads.

`event_series` keeps a repeating event's VCALENDAR text (its master, the overrides and the VTIMEZONEs they
use); `zone` and `day_zone` are the zones its floating times and its dates are read in. `occurrences` holds
what the series gives over [expanded_from, expanded_until). `length_bounds` kept the longest single event and
occurrence by triggers (m035 replaced them with indexes).
"""

from scheduler_agent.storage.migrations.ddl import postgresql, run

revision = "m012"
down_revision = "m010"

TABLES = (("events", "event"), ("occurrences", "occurrence"))


def upgrade() -> None:
    run(
        """
        CREATE TABLE event_series (
            event_id {int} PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            components {text} NOT NULL,        -- a VCALENDAR: master, overrides, the VTIMEZONEs they use
            version {text} NOT NULL,           -- a digest of components and zones: the parse cache's key
            zone {text} NOT NULL,              -- floating times are wall-clock time here
            day_zone {text} NOT NULL,          -- dates are whole days here
            expanded_from {text},              -- the span materialised in occurrences (UTC); NULL: none
            expanded_until {text}
        )
        """,
        """
        CREATE TABLE occurrences (
            event_id {int} NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            start_utc {text} NOT NULL,
            end_utc {text} NOT NULL CHECK (start_utc < end_utc),
            title {text} NOT NULL
        )
        """,
        "CREATE INDEX occurrences_by_time ON occurrences (start_utc, end_utc)",
        "CREATE INDEX occurrences_by_event ON occurrences (event_id)",
        "CREATE INDEX events_repeating ON events (start_utc) WHERE rrule IS NOT NULL OR rdates <> ''",
        "CREATE TABLE length_bounds (what {text} PRIMARY KEY, seconds {int} NOT NULL)",
    )
    if postgresql():
        _pg_length_bounds()
        return
    run(
        "INSERT INTO length_bounds (what, seconds) SELECT 'event', "
        "coalesce(max(CAST(round((julianday(end_utc) - julianday(start_utc)) * 86400) AS INTEGER)), 0) FROM events",
        "INSERT INTO length_bounds (what, seconds) VALUES ('occurrence', 0)",
        *(
            f"""
            CREATE TRIGGER {table}_length_{when.split()[0].lower()} AFTER {when} ON {table} BEGIN
                UPDATE length_bounds SET seconds = max(seconds, coalesce(
                    CAST(round((julianday(NEW.end_utc) - julianday(NEW.start_utc)) * 86400) AS INTEGER), 0))
                WHERE what = '{what}';
            END
            """
            for table, what in TABLES
            for when in ("INSERT", "UPDATE OF start_utc, end_utc")
        ),
    )


def _pg_length_bounds() -> None:
    """The bounds on PostgreSQL: no julianday() and no SQL trigger bodies there, so the lengths are epoch
    differences and one plpgsql function keeps both bounds."""
    seconds = (
        "CAST(round(extract(epoch FROM CAST({row}end_utc AS timestamptz) - CAST({row}start_utc AS timestamptz)))"
        " AS BIGINT)"
    )
    run(
        f"INSERT INTO length_bounds (what, seconds) SELECT 'event', coalesce(max({seconds.format(row='')}), 0) "
        "FROM events",
        "INSERT INTO length_bounds (what, seconds) VALUES ('occurrence', 0)",
        f"""
        CREATE FUNCTION length_bounds_keep() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            UPDATE length_bounds SET seconds = greatest(seconds, coalesce({seconds.format(row="NEW.")}, 0))
            WHERE what = TG_ARGV[0];
            RETURN NULL;
        END $$
        """,
        *(
            f"CREATE TRIGGER {table}_length AFTER INSERT OR UPDATE OF start_utc, end_utc ON {table} "
            f"FOR EACH ROW EXECUTE FUNCTION length_bounds_keep('{what}')"
            for table, what in TABLES
        ),
    )
