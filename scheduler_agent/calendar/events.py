"""Events in SQLite: add, cancel, and the events of a person in a range (repeating ones expanded)."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable
from datetime import UTC, datetime

from scheduler_agent.calendar.recurrence import check_rule, occurrences
from scheduler_agent.calendar.types import (
    OWNER_KEY,
    UTC_FORMAT,
    CalendarError,
    Event,
    EventRecord,
    Recurrence,
    check_tz,
    from_utc_text,
    to_utc_text,
)
from scheduler_agent.storage.db import transaction


def add_event(
    conn: sqlite3.Connection,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Iterable[str],
    event_id: int | None = None,
    *,
    tz: str | None = None,
    all_day: bool = False,
    recurrence: Recurrence | None = None,
) -> Event:
    """Insert an event (with `event_id` when a fixture gives one); no checks of availability here.

    `tz` is the zone its times were given in; an event that repeats (`recurrence`) needs one, since
    its rule repeats in that zone's wall-clock time. `start`/`end` are then its first occurrence.
    """
    keys = _attendee_order(attendees)
    title = " ".join(title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    if not keys:
        raise CalendarError("an event needs at least one attendee: give person keys, e.g. ['you', 'priya']")
    start_text, end_text = to_utc_text(start), to_utc_text(end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({end.isoformat()}) before it starts ({start.isoformat()})")
    repeat = recurrence or Recurrence()
    if tz is not None:
        check_tz(tz)
    if repeat:
        if tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(repeat, start, tz)
    with transaction(conn):
        placeholders = ", ".join("?" for _ in keys)
        known = {row[0] for row in conn.execute(f"SELECT key FROM people WHERE key IN ({placeholders})", keys)}
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise CalendarError(
                f"unknown attendee key(s): {', '.join(unknown)}; add them with `calendar add-person` first"
            )
        cursor = conn.execute(
            "INSERT INTO events (id, title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (event_id, title, start_text, end_text, tz, int(all_day), *recurrence_columns(repeat)),
        )
        event_id = cursor.lastrowid
        assert event_id is not None
        conn.executemany(
            "INSERT INTO event_attendees (event_id, person_key) VALUES (?, ?)",
            [(event_id, key) for key in keys],
        )
    return Event(event_id, title, from_utc_text(start_text), from_utc_text(end_text), keys, bool(repeat))


def cancel_event(conn: sqlite3.Connection, event_id: int) -> Event:
    """Delete an event and return it as it was; its attendees go with it.

    A bookings record of the call that made it stays, with its event_id set to NULL: a
    resumed round still answers with it instead of booking again.
    """
    with transaction(conn):
        event = get_event(conn, event_id)
        if event is None:
            newest = conn.execute("SELECT max(id) FROM events").fetchone()[0]
            hint = "the calendar has no events" if newest is None else f"ids go up to {newest}"
            raise CalendarError(
                f"there is no event with id {event_id} ({hint}): "
                "`scheduler-agent calendar show --week YYYY-MM-DD` lists events with their ids (#N)"
            )
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
    return event


def _attendee_order(keys: Iterable[str]) -> tuple[str, ...]:
    unique = set(keys)
    return tuple(sorted(unique, key=lambda key: (key != OWNER_KEY, key)))


_EVENT_COLUMNS = "e.id, e.title, e.start_utc, e.end_utc, e.tz, e.all_day, e.rrule, e.rdates, e.exdates, e.created_at"
_REPEATS = "(e.rrule IS NOT NULL OR e.rdates <> '')"


def events_for(conn: sqlite3.Connection, person_key: str, start_utc: datetime, end_utc: datetime) -> list[Event]:
    """`person_key`'s events that overlap [start_utc, end_utc), by start time.

    A repeating event gives each of its occurrences in the range, with that occurrence's times.
    """
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(all_a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id AND a.person_key = ? "
        "JOIN event_attendees all_a ON all_a.event_id = e.id "
        f"WHERE (e.start_utc < ? AND e.end_utc > ?) OR {_REPEATS} "
        "GROUP BY e.id ORDER BY e.start_utc, e.id",
        (person_key, to_utc_text(end_utc), to_utc_text(start_utc)),
    )
    events: list[Event] = []
    for row in rows:
        record = _record(row)
        if not record.recurrence:
            events.append(record.event)
            continue
        assert record.tz is not None
        first = record.event
        events += [
            Event(first.id, first.title, begins, ends, first.attendees, recurring=True)
            for begins, ends in occurrences((first.start, first.end), record.tz, record.recurrence, start_utc, end_utc)
        ]
    return sorted(events, key=lambda event: (event.start, event.id))


def get_event(conn: sqlite3.Connection, event_id: int) -> Event | None:
    """The event with that id (its first occurrence, when it repeats)."""
    record = get_record(conn, event_id)
    return None if record is None else record.event


def get_record(conn: sqlite3.Connection, event_id: int) -> EventRecord | None:
    row = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id WHERE e.id = ? GROUP BY e.id",
        (event_id,),
    ).fetchone()
    return None if row is None else _record(row)


def event_records(conn: sqlite3.Connection, person_key: str | None = None) -> list[EventRecord]:
    """Every event as stored (repeating ones once), `person_key`'s only when given; by id."""
    where, args = "", []
    if person_key is not None:
        where, args = "WHERE e.id IN (SELECT event_id FROM event_attendees WHERE person_key = ?)", [person_key]
    rows = conn.execute(
        f"SELECT {_EVENT_COLUMNS}, group_concat(a.person_key, ' ') AS keys "
        f"FROM events e JOIN event_attendees a ON a.event_id = e.id {where} GROUP BY e.id ORDER BY e.id",
        args,
    )
    return [_record(row) for row in rows]


def _record(row: sqlite3.Row) -> EventRecord:
    recurrence = Recurrence(row["rrule"], _utc_list(row["rdates"]), _utc_list(row["exdates"]))
    event = Event(
        id=row["id"],
        title=row["title"],
        start=from_utc_text(row["start_utc"]),
        end=from_utc_text(row["end_utc"]),
        attendees=_attendee_order(row["keys"].split()),
        recurring=bool(recurrence),
    )
    created = datetime.strptime(row["created_at"], UTC_FORMAT).replace(tzinfo=UTC)
    return EventRecord(event, row["tz"], bool(row["all_day"]), recurrence, created)


def _utc_list(text: str) -> tuple[datetime, ...]:
    return tuple(from_utc_text(part) for part in text.split())


def recurrence_columns(recurrence: Recurrence) -> tuple[str | None, str, str]:
    """The (rrule, rdates, exdates) columns for `recurrence`."""
    return (
        recurrence.rule,
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.rdates})),
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.exdates})),
    )
