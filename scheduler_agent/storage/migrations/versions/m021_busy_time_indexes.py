"""m021_busy_time_indexes: indexes that answer `events_for`'s range reads from the index alone until a row is a
match: single events by time (only the ones that do not repeat), and occurrences by time with their event."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m021"
down_revision = "m019"


def upgrade() -> None:
    run(
        "CREATE INDEX events_single_by_time ON events (start_utc, end_utc) WHERE rrule IS NULL AND rdates = ''",
        "CREATE INDEX occurrences_by_time_event ON occurrences (start_utc, end_utc, event_id)",
        "DROP INDEX occurrences_by_time",  # a prefix of the one above
    )
