"""m035_length_indexes: the longest single event and occurrence read from an index on their length, not kept
by triggers.

m012's triggers ran an UPDATE of `length_bounds` for every row written. An index on
`julianday(end_utc) - julianday(start_utc)` costs a quarter of that, and `max()` of that expression is read
from the end of the index. PostgreSQL has no julianday(): the same function is made there, so one
expression serves both.
"""

from scheduler_agent.storage.migrations.ddl import postgresql, run

revision = "m035"
down_revision = "m034"


def upgrade() -> None:
    if postgresql():
        run(
            "DROP TRIGGER events_length ON events",
            "DROP TRIGGER occurrences_length ON occurrences",
            "DROP FUNCTION length_bounds_keep()",
            # IMMUTABLE, as an index needs: the times stored are 'YYYY-MM-DDTHH:MM:SSZ', whose reading does
            # not depend on the session's time zone or date style.
            """
            CREATE FUNCTION julianday(moment TEXT) RETURNS DOUBLE PRECISION LANGUAGE sql IMMUTABLE PARALLEL SAFE
            AS $$ SELECT CAST(extract(epoch FROM CAST(moment AS timestamptz)) AS DOUBLE PRECISION) / 86400
                + 2440587.5 $$
            """,
        )
    else:
        run(
            *(
                f"DROP TRIGGER {table}_length_{when}"
                for table in ("events", "occurrences")
                for when in ("insert", "update")
            )
        )
    run(
        "DROP TABLE length_bounds",
        "CREATE INDEX events_single_by_length ON events ((julianday(end_utc) - julianday(start_utc))) "
        "WHERE rrule IS NULL AND rdates = ''",
        "CREATE INDEX occurrences_by_length ON occurrences ((julianday(end_utc) - julianday(start_utc)))",
    )
