"""m043_far_spans: a second span of materialised occurrences per series, for a window far ahead.

A series is now materialised near the time it is written (about a year ahead, not eleven), and a search that
reaches past that extends it, or, further ahead, materialises a span of its own around the window searched
(`calendar/series.py`, `reach`). `far_from`/`far_until` are that span (NULL: none). A series stored by an
earlier version keeps its span as the near one."""

from scheduler_agent.storage.migrations.ddl import run

revision = "m043"
down_revision = "m042"


def upgrade() -> None:
    run("ALTER TABLE event_series ADD COLUMN far_from {text}")
    run("ALTER TABLE event_series ADD COLUMN far_until {text}")
