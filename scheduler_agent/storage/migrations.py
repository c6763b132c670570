"""The database schema, as an ordered list of migrations.

Each migration is a function of a connection, registered in order with `@migration` and
applied once (see `db.migrate`). Never edit one that has shipped: append a new one.

The same list serves SQLite and PostgreSQL. The SQL is SQLite's; storage/pg.py translates what it
can (placeholders, serial ids, 64-bit integers, byte-order text, the created_at default), and where
a statement must differ the migration says `if dialect(conn) == "postgresql"` beside it.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler_agent.storage.dialect import Connection, dialect

Migration = Callable[[Connection], None]

MIGRATIONS: list[tuple[str, Migration]] = []


def migration(function: Migration) -> Migration:
    """Register `function` as the next migration, under its own name."""
    MIGRATIONS.append((function.__name__, function))
    return function


def _run(conn: Connection, *statements: str) -> None:
    # One statement per execute: `executescript` would commit the migration's transaction.
    for statement in statements:
        conn.execute(statement)


@migration
def m001_calendar(conn: Connection) -> None:
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
def m002_bookings(conn: Connection) -> None:
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
def m003_conversations(conn: Connection) -> None:
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
def m004_approvals(conn: Connection) -> None:
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
def m005_recurrence(conn: Connection) -> None:
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
def m006_conversation_stream(conn: Connection) -> None:
    """Whether the conversation's requests said "stream": true, so a resume sends the same body."""
    _run(conn, "ALTER TABLE conversations ADD COLUMN stream INTEGER NOT NULL DEFAULT 0")


@migration
def m007_replies(conn: Connection) -> None:
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
def m008_turn_stops(conn: Connection) -> None:
    """How the conversation's last turn ended when it did not end done: 'bound' (the iteration bound) or
    'model' (a model stop: max_tokens, refusal, ...). NULL when it ended done, or has not ended.

    `conversations list --state stopped` reads it: the list alone cannot tell a stop at the bound
    from a turn still waiting for the model.
    """
    _run(conn, "ALTER TABLE conversations ADD COLUMN last_stop TEXT CHECK (last_stop IN ('bound', 'model'))")


@migration
def m010_leases_and_repairs(conn: Connection) -> None:
    """Who runs each conversation: one lease per conversation id, with its holder and expiry (storage/lease.py).

    A second process that wants to run a conversation someone holds is refused (exit 8), not let in to
    re-run the round and fail on a duplicate entry. And each `conversations repair`: what it changed,
    with the whole list as it was before.
    """
    _run(
        conn,
        """
        CREATE TABLE leases (
            conversation_id INTEGER PRIMARY KEY REFERENCES conversations(id) ON DELETE CASCADE,
            holder_host TEXT NOT NULL,
            holder_pid INTEGER NOT NULL,
            since TEXT NOT NULL,     -- ISO UTC: when this holder claimed it
            expires TEXT NOT NULL    -- ISO UTC: it lapses then unless renewed
        )
        """,
        """
        CREATE TABLE repairs (
            conversation_id INTEGER NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            changes TEXT NOT NULL,   -- JSON: one sentence per change
            before TEXT NOT NULL,    -- JSON: the whole list before the repair
            repaired_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            PRIMARY KEY (conversation_id, seq)
        )
        """,
    )


@migration
def m012_series(conn: Connection) -> None:
    """Repeating events as iCalendar components, their occurrences over a horizon, and fast busy-time reads.

    `event_series` keeps a repeating event's VCALENDAR text (its master, the overrides with RECURRENCE-ID
    and the VTIMEZONEs they use) so `recurring-ical-events` expands exactly what the file said; `zone` and
    `day_zone` are the zones its floating times and its dates are read in. `occurrences` holds what the
    series gives over [expanded_from, expanded_until): a window inside that span is read from the index;
    any other window is expanded when asked. `length_bounds` keeps the longest single event and the longest
    occurrence (kept by triggers), so a range query can be bounded on both sides and use the index.
    """
    _run(
        conn,
        """
        CREATE TABLE event_series (
            event_id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            components TEXT NOT NULL,        -- a VCALENDAR: master, overrides, the VTIMEZONEs they use
            version TEXT NOT NULL,           -- a digest of components and zones: the parse cache's key
            zone TEXT NOT NULL,              -- floating times are wall-clock time here
            day_zone TEXT NOT NULL,          -- dates are whole days here
            expanded_from TEXT,              -- the span materialised in occurrences (UTC); NULL: none
            expanded_until TEXT
        )
        """,
        """
        CREATE TABLE occurrences (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            title TEXT NOT NULL
        )
        """,
        "CREATE INDEX occurrences_by_time ON occurrences (start_utc, end_utc)",
        "CREATE INDEX occurrences_by_event ON occurrences (event_id)",
        "CREATE INDEX events_repeating ON events (start_utc) WHERE rrule IS NOT NULL OR rdates <> ''",
        "CREATE TABLE length_bounds (what TEXT PRIMARY KEY, seconds INTEGER NOT NULL)",
    )
    if dialect(conn) == "postgresql":
        _pg_length_bounds(conn)
        return
    _run(
        conn,
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
            for table, what in (("events", "event"), ("occurrences", "occurrence"))
            for when in ("INSERT", "UPDATE OF start_utc, end_utc")
        ),
    )


def _pg_length_bounds(conn: Connection) -> None:
    """m012's bounds on PostgreSQL: no julianday() and no SQL trigger bodies there, so the lengths are
    epoch differences and one plpgsql function keeps both bounds."""
    seconds = (
        "CAST(round(extract(epoch FROM CAST({row}end_utc AS timestamptz) - CAST({row}start_utc AS timestamptz)))"
        " AS BIGINT)"
    )
    _run(
        conn,
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
            for table, what in (("events", "event"), ("occurrences", "occurrence"))
        ),
    )


@migration
def m013_feeds(conn: Connection) -> None:
    """Subscribed iCalendar feeds, and where each imported event came from: a file ('') or a feed ('feed:N').

    A feed's URL is a credential: it is stored here and nowhere else, and printed masked. `event_sources`
    is rebuilt with an `origin` so a feed and a file may both hold the same UID for one person.
    """
    _run(
        conn,
        """
        CREATE TABLE feeds (
            id INTEGER PRIMARY KEY,
            person_key TEXT NOT NULL REFERENCES people (key),
            url TEXT NOT NULL CHECK (url <> ''),
            refresh_seconds INTEGER NOT NULL DEFAULT 900 CHECK (refresh_seconds > 0),
            etag TEXT,
            last_modified TEXT,
            fetched_at TEXT,                 -- the last attempt (UTC)
            ok_at TEXT,                      -- the last attempt that gave a good copy (or 304)
            result TEXT NOT NULL DEFAULT 'never fetched',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now')),
            UNIQUE (person_key, url)
        )
        """,
        """
        CREATE TABLE event_sources_new (
            event_id INTEGER PRIMARY KEY REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key),
            origin TEXT NOT NULL DEFAULT '',  -- '' for a file, 'feed:N' for feed N
            uid TEXT NOT NULL CHECK (uid <> ''),
            recurrence_id TEXT NOT NULL DEFAULT '',
            UNIQUE (person_key, origin, uid, recurrence_id)
        )
        """,
        "INSERT INTO event_sources_new (event_id, person_key, uid, recurrence_id) "
        "SELECT event_id, person_key, uid, recurrence_id FROM event_sources",
        "DROP TABLE event_sources",
        "ALTER TABLE event_sources_new RENAME TO event_sources",
        "CREATE INDEX event_sources_by_origin ON event_sources (origin)",
    )


@migration
def m014_people_hours_and_preferences(conn: Connection) -> None:
    """People as they really work: hours per weekday, days off, a buffer around meetings, a lunch break;
    and the owner's standing preferences, which the system prompt carries into every request.

    `days` overrides `work_start`-`work_end` for some weekdays ('mon=10:00-16:00 fri=off'); an empty
    column keeps every weekday as it was. A preference is free text for the model; `rule` and `value`
    make it one the tools can check too ('not_before' '10:00', 'not_after' '16:00', 'no_days' 'fri',
    'max_per_day' '4'); `rule` '' is text only.
    """
    _run(
        conn,
        "ALTER TABLE people ADD COLUMN days TEXT NOT NULL DEFAULT ''",
        "ALTER TABLE people ADD COLUMN days_off TEXT NOT NULL DEFAULT ''",  # 'YYYY-MM-DD ...'
        "ALTER TABLE people ADD COLUMN buffer_minutes INTEGER NOT NULL DEFAULT 0 "
        "CHECK (buffer_minutes BETWEEN 0 AND 120)",
        "ALTER TABLE people ADD COLUMN lunch TEXT NOT NULL DEFAULT ''",  # 'HH:MM-HH:MM', or '' for none
        """
        CREATE TABLE preferences (
            id INTEGER PRIMARY KEY,
            text TEXT NOT NULL CHECK (text <> ''),
            rule TEXT NOT NULL DEFAULT '' CHECK (rule IN ('', 'not_before', 'not_after', 'no_days', 'max_per_day')),
            value TEXT NOT NULL DEFAULT '',
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
    )


@migration
def m015_bookings_kind_and_input(conn: Connection) -> None:
    """Every side effect is recorded by its tool_use id, not only bookings: the record says which tool made
    it (`create_event`, `move_event`, `cancel_event`) and a hash of the call's input, so a resumed round
    answers from the record and a reused id with another input is refused instead of answered wrongly.

    Rows written before keep kind 'create_event' and an empty hash (not checked).
    """
    _run(
        conn,
        "ALTER TABLE bookings ADD COLUMN kind TEXT NOT NULL DEFAULT 'create_event' "
        "CHECK (kind IN ('create_event', 'move_event', 'cancel_event'))",
        "ALTER TABLE bookings ADD COLUMN input_hash TEXT NOT NULL DEFAULT ''",  # sha256 of the canonical JSON input
    )


@migration
def m017_caldav_connections(conn: Connection) -> None:
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
def m018_people_contacts(conn: Connection) -> None:
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


@migration
def m019_entry_sizes_and_checked(conn: Connection) -> None:
    """What a resume needs to send its first request without reading the whole list twice more.

    `entries.size`: the entry's length in bytes as encoded in a request (`{"role":...,"content":...}`,
    compact UTF-8), written with the entry; NULL for entries stored before this migration (measured when
    first needed). `conversations.checked`: how many leading entries passed the grammar check with no
    finding, as last sent; 0 (check it all) for conversations stored before, and after a repair.
    """
    _run(
        conn,
        "ALTER TABLE entries ADD COLUMN size INTEGER CHECK (size IS NULL OR size > 0)",
        "ALTER TABLE conversations ADD COLUMN checked INTEGER NOT NULL DEFAULT 0 CHECK (checked >= 0)",
    )


@migration
def m021_busy_time_indexes(conn: Connection) -> None:
    """Indexes that answer `events_for`'s range reads from the index alone until a row is a match.

    Single events by time, only the ones that do not repeat (what the range read asks for), so SQLite
    checks the window and the attendee from the index and reads a table row only for the events it
    returns; and occurrences by time with their event, for the join to the series and the attendee.
    """
    _run(
        conn,
        "CREATE INDEX events_single_by_time ON events (start_utc, end_utc) WHERE rrule IS NULL AND rdates = ''",
        "CREATE INDEX occurrences_by_time_event ON occurrences (start_utc, end_utc, event_id)",
        "DROP INDEX occurrences_by_time",  # a prefix of the one above
    )


@migration
def m023_caldav_bookings(conn: Connection) -> None:
    """Each change a call makes on a CalDAV server, linked to the remote resource: the tool_use id, what it
    did, the resource (href, UID) and its ETag after the write, and its local id (`caldav_events`).

    The row is written (and committed) before the PUT, with `written` 0, and set to 1 with the ETag once
    the server has the change; the call's `bookings` row (its result text) follows. A process killed in
    between leaves the row at 0: the resumed round reads the resource, and finds its own write there (the
    event's X-SCHEDULER-AGENT-CALL) or makes it. The password is never here.
    """
    _run(
        conn,
        """
        CREATE TABLE caldav_bookings (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            kind TEXT NOT NULL CHECK (kind IN ('create_event', 'move_event', 'cancel_event')),
            href TEXT NOT NULL CHECK (href <> ''),
            uid TEXT NOT NULL,
            etag TEXT,                      -- the resource's ETag right after the write
            event_id INTEGER REFERENCES caldav_events (id),
            written INTEGER NOT NULL DEFAULT 0 CHECK (written IN (0, 1)),
            created_at TEXT NOT NULL DEFAULT (strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))
        )
        """,
    )


@migration
def m025_booked_time(conn: Connection) -> None:
    """The busy time the agent books: one row per attendee of each event a create_event or move_event made
    (calendar/bookings.py `book_time` keeps it; a cancelled event takes its rows with it).

    On PostgreSQL an exclusion constraint (btree_gist) makes a double booking of a person impossible
    whatever races: two overlapping rows for one person cannot both commit. Imported time and repeating
    series are not under it (imported calendars overlap routinely): the checks against them run under a
    per-person advisory lock (calendar/bookings.py `lock_people`). On SQLite, where BEGIN IMMEDIATE
    serialises every check with its write, the table is kept the same way, with no constraint.
    """
    rows = (
        "SELECT DISTINCT e.id, a.person_key, {start}, {end} FROM bookings b JOIN events e ON e.id = b.event_id "
        "JOIN event_attendees a ON a.event_id = e.id "
        "WHERE b.kind IN ('create_event', 'move_event') AND e.rrule IS NULL AND e.rdates = ''"
    )
    if dialect(conn) == "postgresql":  # timestamptz columns: tstzrange needs them, and text casts are not immutable
        _run(
            conn,
            "CREATE EXTENSION IF NOT EXISTS btree_gist",
            """
            CREATE TABLE booked_time (
                event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
                person_key TEXT NOT NULL REFERENCES people (key) ON DELETE CASCADE,
                start_utc TIMESTAMPTZ NOT NULL,
                end_utc TIMESTAMPTZ NOT NULL CHECK (start_utc < end_utc),
                PRIMARY KEY (event_id, person_key),
                CONSTRAINT booked_time_no_overlap
                    EXCLUDE USING gist (person_key WITH =, tstzrange(start_utc, end_utc) WITH &&)
            )
            """,
            "INSERT INTO booked_time (event_id, person_key, start_utc, end_utc) "
            + rows.format(start="CAST(e.start_utc AS TIMESTAMPTZ)", end="CAST(e.end_utc AS TIMESTAMPTZ)"),
        )
        return
    _run(
        conn,
        """
        CREATE TABLE booked_time (
            event_id INTEGER NOT NULL REFERENCES events (id) ON DELETE CASCADE,
            person_key TEXT NOT NULL REFERENCES people (key) ON DELETE CASCADE,
            start_utc TEXT NOT NULL,
            end_utc TEXT NOT NULL CHECK (start_utc < end_utc),
            PRIMARY KEY (event_id, person_key)
        )
        """,
        "CREATE INDEX booked_time_by_person ON booked_time (person_key, start_utc)",
        "INSERT INTO booked_time (event_id, person_key, start_utc, end_utc) "
        + rows.format(start="e.start_utc", end="e.end_utc"),
    )


@migration
def m030_work_queue(conn: Connection) -> None:
    """The turns handed to workers (`submit`): one row per conversation, what it waits for and how it ended.

    `text` is the submitted text while no worker has put it in the list yet (`base`: the list's length
    when it was submitted, so a worker tells "not begun" from "begun and interrupted"). Who runs a turn
    now is the conversation's lease (m010). Times are ISO UTC text written by the code, on any database.
    """
    _run(
        conn,
        """
        CREATE TABLE work_queue (
            conversation_id INTEGER PRIMARY KEY REFERENCES conversations (id) ON DELETE CASCADE,
            state TEXT NOT NULL CHECK (state IN ('queued', 'needs-approval', 'done', 'failed')),
            text TEXT,                          -- the submitted text, until a worker adds it to the list
            base INTEGER NOT NULL DEFAULT 0,    -- the list's length when it was submitted
            approved TEXT NOT NULL DEFAULT '[]',  -- JSON: the tools run without asking (`--yes`)
            submitted_at TEXT NOT NULL,
            claims INTEGER NOT NULL DEFAULT 0,  -- how many times a worker took it up
            claimed_at TEXT,                    -- when a worker first took it up
            finished_at TEXT,
            exit_code INTEGER,                  -- as `ask` would have exited
            answer TEXT NOT NULL DEFAULT '',    -- the model's last text
            statement TEXT NOT NULL DEFAULT ''  -- why it stopped, when not done, or the error
        )
        """,
        "CREATE INDEX work_queue_by_state ON work_queue (state, submitted_at)",
    )


@migration
def m031_pending_approvals(conn: Connection) -> None:
    """Side effects a worker could not ask anyone about: they wait, by tool_use id, for `approve`/`decline`
    (the answer itself goes to `approvals`, m004, as a person's answer at a terminal does)."""
    _run(
        conn,
        """
        CREATE TABLE pending_approvals (
            tool_use_id TEXT PRIMARY KEY CHECK (tool_use_id <> ''),
            conversation_id INTEGER NOT NULL REFERENCES conversations (id) ON DELETE CASCADE,
            name TEXT NOT NULL,      -- the tool
            summary TEXT NOT NULL,   -- what it will do, as a person at a terminal is shown it
            asked_at TEXT NOT NULL
        )
        """,
        "CREATE INDEX pending_approvals_by_conversation ON pending_approvals (conversation_id)",
    )


@migration
def m034_checked_rules(conn: Connection) -> None:
    """`conversations.checked_rules`: the digest of the grammar check's rules that made the `checked` mark
    (m019). A mark holds only for those rules: a list stored by a version whose check differs, or before
    this migration (NULL), is checked whole on its next request, once."""
    _run(conn, "ALTER TABLE conversations ADD COLUMN checked_rules TEXT")


@migration
def m035_length_indexes(conn: Connection) -> None:
    """The longest single event and occurrence read from an index on their length, not kept by triggers.

    m012's triggers ran an UPDATE of `length_bounds` for every row written: half the time of inserting
    10,000 events. An index on `julianday(end_utc) - julianday(start_utc)` costs a quarter of that, and
    `max()` of that expression is read from the end of the index; it also shrinks when a long event goes.
    PostgreSQL has no julianday(): the same function is made there, so one expression serves both.
    """
    if dialect(conn) == "postgresql":
        _run(
            conn,
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
        _run(
            conn,
            *(
                f"DROP TRIGGER {table}_length_{when}"
                for table in ("events", "occurrences")
                for when in ("insert", "update")
            ),
        )
    _run(
        conn,
        "DROP TABLE length_bounds",
        "CREATE INDEX events_single_by_length ON events ((julianday(end_utc) - julianday(start_utc))) "
        "WHERE rrule IS NULL AND rdates = ''",
        "CREATE INDEX occurrences_by_length ON occurrences ((julianday(end_utc) - julianday(start_utc)))",
    )


@migration
def m036_fewer_indexes_to_write(conn: Connection) -> None:
    """Two indexes every import wrote and no read needs any more.

    `events_by_time` (m001): the range reads use m021's index of single events and m012's of repeating
    ones, and the fixture check asks each of them; it cost 65 M instructions of an import of 10,000
    events. `event_sources_by_origin` (m013): a feed's events are found by person and origin, the prefix
    of the table's unique index.
    """
    _run(conn, "DROP INDEX events_by_time", "DROP INDEX event_sources_by_origin")


@migration
def m038_request_options(conn: Connection) -> None:
    """The request keys a person set with `-o/--option` for the turn in force (a JSON object, `{}` for none),
    kept with the rest of what the API sees besides the list (model, max_tokens, system, tools, stream), so that
    `resume` sends them again; a new turn writes its own, so they do not carry over to a later `-c` turn."""
    _run(conn, "ALTER TABLE conversations ADD COLUMN options TEXT NOT NULL DEFAULT '{}'")
