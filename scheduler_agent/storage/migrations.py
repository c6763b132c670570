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


@migration
def m002_bookings(conn: sqlite3.Connection) -> None:
    """What each create_event call booked, keyed by its tool_use id, written with the event itself.

    A resumed round finds the record and answers with it instead of booking again.
    """
    _run(
        conn,
        """
        CREATE TABLE bookings (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            event_id INTEGER REFERENCES events (id) ON DELETE SET NULL,
            result TEXT NOT NULL,  -- the tool_result text the call answered with
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
    )


@migration
def m003_conversations(conn: sqlite3.Connection) -> None:
    """Stored conversations: every entry of the list in order, as the JSON sent, and what else the API saw.

    The system prompt, tools, model and max_tokens are kept as they were sent, so a resume
    sends exactly what the first process would have. The three counters label interruptions
    where they are known.
    """
    _run(
        conn,
        """
        CREATE TABLE conversations (
            id INTEGER PRIMARY KEY,
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            model TEXT NOT NULL,
            max_tokens INTEGER NOT NULL,
            system TEXT NOT NULL,
            tools TEXT NOT NULL,            -- JSON, the definitions as sent
            started_on TEXT NOT NULL,       -- the clock's date (owner's zone) when it started
            clock_pin TEXT,                 -- the pinned instant (ISO, UTC) if the clock was pinned
            retries_exhausted INTEGER NOT NULL DEFAULT 0,
            tool_deadlines INTEGER NOT NULL DEFAULT 0,
            restarts INTEGER NOT NULL DEFAULT 0
        )
        """,
        """
        CREATE TABLE entries (
            conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            position INTEGER NOT NULL CHECK (position >= 0),
            role TEXT NOT NULL CHECK (role IN ('user', 'assistant')),
            content TEXT NOT NULL,          -- JSON, exactly as sent
            PRIMARY KEY (conversation_id, position)
        )
        """,
    )


@migration
def m004_approvals(conn: sqlite3.Connection) -> None:
    """The person's answer to each side-effecting call, keyed by its tool_use id: a resumed round never asks
    twice, and a refusal is answered with the same reason."""
    _run(
        conn,
        """
        CREATE TABLE approvals (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            approved INTEGER NOT NULL CHECK (approved IN (0, 1)),
            reason TEXT NOT NULL DEFAULT '',
            end_of_input INTEGER NOT NULL DEFAULT 0,  -- refused because standard input ended
            answered_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
    )


@migration
def m005_recurrence(conn: sqlite3.Connection) -> None:
    """Repeating events, and where an imported event came from.

    An event with an `rrule` or `rdates` repeats: `start_utc`/`end_utc` hold its first occurrence and
    the rule is expanded in the wall-clock time of `tz`, so a weekly 09:00 stays at 09:00 across a
    daylight-saving change. `event_sources` keys an imported event by its iCalendar UID (and
    RECURRENCE-ID) and the person it was imported for: importing the same file again updates, never
    duplicates.
    """
    _run(
        conn,
        "ALTER TABLE events ADD COLUMN tz TEXT",  # the IANA zone its times were given in; NULL: not known
        "ALTER TABLE events ADD COLUMN all_day INTEGER NOT NULL DEFAULT 0 CHECK (all_day IN (0, 1))",
        "ALTER TABLE events ADD COLUMN rrule TEXT",  # an RFC 5545 RRULE value, UNTIL in UTC; NULL: no rule
        "ALTER TABLE events ADD COLUMN rdates TEXT NOT NULL DEFAULT ''",  # extra starts, UTC, space-separated
        "ALTER TABLE events ADD COLUMN exdates TEXT NOT NULL DEFAULT ''",  # starts left out, UTC, space-separated
        """
        CREATE TABLE event_sources (
            event_id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            uid TEXT NOT NULL CHECK (uid <> ''),
            recurrence_id TEXT NOT NULL DEFAULT '',  -- '' for a whole event, else the UTC start it replaces
            UNIQUE (person_key, uid, recurrence_id)
        )
        """,
    )


@migration
def m006_conversation_stream(conn: sqlite3.Connection) -> None:
    """Whether the conversation's requests said "stream": true, so a resume sends the same body."""
    _run(conn, "ALTER TABLE conversations ADD COLUMN stream INTEGER NOT NULL DEFAULT 0")


@migration
def m007_replies(conn: sqlite3.Connection) -> None:
    """Each reply the API sent, beside the list and outside it: its usage, model, stop reason, request size.

    `appended` is 1 when the reply is the list's entry at `position` (its content is stored there once);
    a reply that was not appended (one that would poison the list) keeps its whole body in `body`.
    """
    _run(
        conn,
        """
        CREATE TABLE replies (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,               -- 1, 2, ... in the order the replies arrived
            position INTEGER NOT NULL,          -- the list's length when the request was sent
            iteration INTEGER NOT NULL,
            model TEXT NOT NULL DEFAULT '',
            stop_reason TEXT,
            usage TEXT NOT NULL DEFAULT '{}',   -- the API's usage object, as it came
            request_bytes INTEGER NOT NULL DEFAULT 0,
            appended INTEGER NOT NULL DEFAULT 1,
            body TEXT,                          -- the whole reply, only when it was not appended
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (conversation_id, seq)
        )
        """,
    )


@migration
def m017_caldav_connections(conn: sqlite3.Connection) -> None:
    """The owner's CalDAV connection, and the local ids of the events read from or written to a server.

    The password is never stored: `password_source` says where it is read from each time (`env:VAR`,
    `netrc`, `keyring` or `ask`). `invites` 0 writes SCHEDULE-AGENT=CLIENT, so the server sends no
    invitations. `caldav_events` gives each remote resource (its href) a local integer id, the id the
    model sees, as for every backend; `tool_use_id` is set on the one a booking wrote.
    """
    _run(
        conn,
        """
        CREATE TABLE caldav_connections (
            person_key TEXT PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            url TEXT NOT NULL CHECK (url <> ''),
            username TEXT NOT NULL CHECK (username <> ''),
            calendar_url TEXT NOT NULL CHECK (calendar_url <> ''),
            calendar_name TEXT NOT NULL DEFAULT '',
            password_source TEXT NOT NULL CHECK (password_source <> ''),
            email TEXT,                     -- the owner's address, the ORGANIZER of what is booked
            invites INTEGER NOT NULL DEFAULT 1 CHECK (invites IN (0, 1)),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
        """
        CREATE TABLE caldav_events (
            id INTEGER PRIMARY KEY,
            href TEXT NOT NULL UNIQUE CHECK (href <> ''),  -- the resource's full URL
            uid TEXT NOT NULL,
            tool_use_id TEXT UNIQUE         -- the create_event call that wrote it, if one did
        )
        """,
    )


@migration
def m018_people_contacts(conn: sqlite3.Connection) -> None:
    """People's e-mail addresses (ATTENDEE of what is booked) and the CalDAV calendar their busy time is
    read from (shared with the owner; read access is enough). A table of its own beside `people`, so
    the people rows keep their shape."""
    _run(
        conn,
        """
        CREATE TABLE person_contacts (
            person_key TEXT PRIMARY KEY REFERENCES people (key) ON DELETE CASCADE,
            email TEXT CHECK (email IS NULL OR email LIKE '%_@_%'),
            caldav_url TEXT CHECK (caldav_url IS NULL OR caldav_url LIKE 'http%://%')
        )
        """,
    )
