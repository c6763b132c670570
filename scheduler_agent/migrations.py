"""The database schema, as an ordered list of migrations.

Each migration is a function of a connection, registered in order with `@migration` and
applied once (see `db.migrate`). Never edit one that has shipped: append a new one.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]

MIGRATIONS: list[tuple[str, Migration]] = []


def migration(function: Migration) -> Migration:
    """Register `function` as the next migration, under its own name."""
    MIGRATIONS.append((function.__name__, function))
    return function


def _run(conn: sqlite3.Connection, *statements: str) -> None:
    # One statement per execute: `executescript` would commit the migration's transaction.
    for statement in statements:
        conn.execute(statement)


@migration
def m001_calendar(conn: sqlite3.Connection) -> None:
    """People (the owner is the row keyed 'you'), events in UTC, and who attends what."""
    _run(
        conn,
        """
        CREATE TABLE people (
            key TEXT PRIMARY KEY CHECK (key <> '' AND key = lower(key)),
            name TEXT NOT NULL CHECK (name <> ''),
            tz TEXT NOT NULL,
            work_start TEXT NOT NULL,  -- 'HH:MM', local time in tz
            work_end TEXT NOT NULL CHECK (work_start < work_end)
        )
        """,
        """
        CREATE TABLE events (
            id INTEGER PRIMARY KEY,
            title TEXT NOT NULL CHECK (title <> ''),
            start_utc TEXT NOT NULL,  -- 'YYYY-MM-DDTHH:MM:SSZ', so text order is time order
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
        "CREATE INDEX events_by_time ON events (start_utc, end_utc)",
        """
        CREATE TABLE event_attendees (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            PRIMARY KEY (event_id, person_key)
        )
        """,
        "CREATE INDEX event_attendees_by_person ON event_attendees (person_key, event_id)",
    )
