"""m036_fewer_indexes_to_write: two indexes every import wrote and no read needs any more: `events_by_time`
(m001; the range reads use m021's and m012's) and `event_sources_by_origin` (m013; a feed's events are found
by person and origin, the prefix of the table's unique index)."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m036"
down_revision = "m035"


def upgrade() -> None:
    run("DROP INDEX events_by_time", "DROP INDEX event_sources_by_origin")
