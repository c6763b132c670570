"""Events in the store: add, cancel, and the records as stored. The busy time of a range is read by `busy.py`."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy import Connection, Row, bindparam, text

from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.series import store_recurrence, store_series
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
from scheduler_agent.storage.dialect import lock_events, per_dialect
from scheduler_agent.storage.statement import Statement


def add_event(
    conn: Connection,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Iterable[str],
    event_id: int | None = None,
    *,
    tz: str | None = None,
    all_day: bool = False,
    recurrence: Recurrence | None = None,
    components: tuple[str, str, str] | None = None,
) -> Event:
    """Insert an event (with `event_id` when a fixture gives one); no checks of availability here.

    `tz` is the zone its times were given in; an event that repeats (`recurrence`) needs one, since
    its rule repeats in that zone's wall-clock time. `start`/`end` are then its first occurrence.
    `components` (an imported series: its VCALENDAR text, the zones of its floating times and of its
    dates) is what the library expands; without it one is written from `recurrence`.
    """
    keys = _attendee_order(attendees)
    row = checked_row(title, start, end, tz=tz, all_day=all_day, recurrence=recurrence, components=components)
    with transaction(conn):
        _check_attendees(conn, keys)
        event_id = conn.execute(_INSERT_EVENT, {"id": event_id, **_row_args(row)}).scalar_one()
        conn.execute(
            text("INSERT INTO event_attendees (event_id, person_key) VALUES (:event_id, :key)"),
            [{"event_id": event_id, "key": key} for key in keys],
        )
        _store_repeat(conn, event_id, row, recurrence, components)
    return Event(event_id, row[0], from_utc_text(row[1]), from_utc_text(row[2]), keys, bool(recurrence))


def _row_args(row: EventRow) -> dict[str, object]:
    return dict(zip(_ROW_NAMES, row, strict=True))


_NO_REPEAT = Recurrence()  # frozen: one instance serves every event that does not repeat

# What one events row holds, in the order of _INSERT_COLUMNS after the id.
EventRow = tuple[str, str, str, str | None, int, str | None, str, str]
_ROW_NAMES = ("title", "start_utc", "end_utc", "tz", "all_day", "rrule", "rdates", "exdates")
_INSERT_COLUMNS = f"id, {', '.join(_ROW_NAMES)}"
_INSERT_VALUES = ", ".join(f":{name}" for name in ("id", *_ROW_NAMES))
_INSERT_EVENT = text(f"INSERT INTO events ({_INSERT_COLUMNS}) VALUES ({_INSERT_VALUES}) RETURNING id")
_INSERT_EVENTS = Statement(f"INSERT INTO events ({_INSERT_COLUMNS}, created_at) VALUES ({_INSERT_VALUES}, :created_at)")
_NEXT_ID = Statement("SELECT coalesce(max(id), 0) + 1 FROM events")
_ATTEND_BATCH = Statement(
    "INSERT INTO event_attendees (event_id, person_key) SELECT id, :person_key FROM events "
    "WHERE id >= :first AND id < :after"
)


def checked_row(
    title: str,
    start: datetime,
    end: datetime,
    *,
    tz: str | None = None,
    all_day: bool = False,
    recurrence: Recurrence | None = None,
    components: tuple[str, str, str] | None = None,
) -> EventRow:
    """The events row for an event (title, UTC times, zone, rule columns), or CalendarError saying what is wrong."""
    title = " ".join(title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    start_text, end_text = to_utc_text(start), to_utc_text(end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({end.isoformat()}) before it starts ({start.isoformat()})")
    repeat = recurrence or _NO_REPEAT
    if tz is not None:
        tz = check_tz(tz)
    if repeat and components is None:
        if tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(repeat, start, tz)
    return (title, start_text, end_text, tz, int(all_day), *recurrence_columns(repeat))


def add_events(
    conn: Connection,
    person_key: str,
    rows: Sequence[EventRow],
    series: Sequence[tuple[Recurrence, tuple[str, str, str] | None]],
) -> list[int]:
    """Insert many events of one attendee at once (rows from `checked_row`), in one transaction; their ids.

    Two `executemany` calls instead of a round of statements per event: `calendar import` and feeds write
    through here. `series[i]` is row i's recurrence and components, as `add_event` takes them. The ids are
    given here, after the highest one, under the write lock the transaction holds.
    """
    with transaction(conn):
        _check_attendees(conn, (person_key,))
        lock_events(conn)  # no insert in between: the ids stay free
        first = _NEXT_ID.scalar(conn)
        ids = list(range(first, first + len(rows)))
        created = to_utc_text(datetime.now(UTC))  # once for the batch: the column's default is worked out per row
        if not rows:
            return ids
        _INSERT_EVENTS.many(  # on the driver: SQLAlchemy's executemany binds each row through its compiler
            conn,
            [
                {"id": event_id, **_row_args(row), "created_at": created}
                for event_id, row in zip(ids, rows, strict=True)
            ],
        )
        # the rows just written, from the database's side: no row of parameters made or bound for each
        _ATTEND_BATCH.run(conn, {"person_key": person_key, "first": first, "after": first + len(rows)})
        for event_id, row, (recurrence, components) in zip(ids, rows, series, strict=True):
            _store_repeat(conn, event_id, row, recurrence, components)
    return ids


def _check_attendees(conn: Connection, keys: Sequence[str]) -> None:
    if not keys:
        raise CalendarError("an event needs at least one attendee: give person keys, e.g. ['you', 'priya']")
    known = set(conn.execute(_KNOWN_KEYS, {"keys": list(keys)}).scalars())
    unknown = [key for key in keys if key not in known]
    if unknown:
        raise CalendarError(f"unknown attendee key(s): {', '.join(unknown)}; add them with `calendar add-person` first")


def _store_repeat(
    conn: Connection,
    event_id: int,
    row: EventRow,
    recurrence: Recurrence | None,
    components: tuple[str, str, str] | None,
) -> None:
    if components is not None:
        store_series(conn, event_id, *components)
    elif recurrence:
        assert row[3] is not None  # checked_row required the zone
        store_recurrence(conn, event_id, row[3], recurrence, row[0])


def cancel_event(conn: Connection, event_id: int) -> Event:
    """Delete an event and return it as it was; its attendees go with it.

    A bookings record of the call that made it stays, with its event_id set to NULL: a
    resumed round still answers with it instead of booking again.
    """
    with transaction(conn):
        event = get_event(conn, event_id)
        if event is None:
            newest = conn.execute(text("SELECT max(id) FROM events")).scalar_one()
            hint = "the calendar has no events" if newest is None else f"ids go up to {newest}"
            raise CalendarError(
                f"there is no event with id {event_id} ({hint}): "
                "`scheduler-agent calendar show --week YYYY-MM-DD` lists events with their ids (#N)"
            )
        conn.execute(text("DELETE FROM events WHERE id = :event_id"), {"event_id": event_id})
    return event


def _attendee_order(keys: Iterable[str]) -> tuple[str, ...]:
    unique = set(keys)
    return tuple(sorted(unique, key=lambda key: (key != OWNER_KEY, key)))


@lru_cache(maxsize=1024)
def stored_attendees(keys: str) -> tuple[str, ...]:
    """`_attendee_order` of a row's space-separated keys: a calendar has few distinct sets, each read many times."""
    return _attendee_order(keys.split())


EVENT_COLUMNS = "e.id, e.title, e.start_utc, e.end_utc, e.tz, e.all_day, e.rrule, e.rdates, e.exdates, e.created_at"


def get_event(conn: Connection, event_id: int) -> Event | None:
    """The event with that id (its first occurrence, when it repeats)."""
    record = get_record(conn, event_id)
    return None if record is None else record.event


def get_record(conn: Connection, event_id: int) -> EventRecord | None:
    row = conn.execute(_RECORD[conn.dialect.name], {"event_id": event_id}).fetchone()
    return None if row is None else _record(row)


_RECORDS = (
    f"SELECT {EVENT_COLUMNS}, {{{{aggregate_strings}}}}(a.person_key, ' ') AS keys "
    "FROM events e JOIN event_attendees a ON a.event_id = e.id {where} GROUP BY e.id"
)
_RECORD = per_dialect(_RECORDS.format(where="WHERE e.id = :event_id"))
_ALL_RECORDS = per_dialect(_RECORDS.format(where="") + " ORDER BY e.id")
_RECORDS_OF = per_dialect(
    _RECORDS.format(where="WHERE e.id IN (SELECT event_id FROM event_attendees WHERE person_key = :person)")
    + " ORDER BY e.id"
)
DELETE_EVENTS = text("DELETE FROM events WHERE id IN :ids").bindparams(bindparam("ids", expanding=True))
_KNOWN_KEYS = text("SELECT key FROM people WHERE key IN :keys").bindparams(bindparam("keys", expanding=True))


def event_records(conn: Connection, person_key: str | None = None) -> list[EventRecord]:
    """Every event as stored (repeating ones once), `person_key`'s only when given; by id."""
    if person_key is None:
        rows = conn.execute(_ALL_RECORDS[conn.dialect.name])
    else:
        rows = conn.execute(_RECORDS_OF[conn.dialect.name], {"person": person_key})
    return [_record(row) for row in rows]


def _record(row: Row[Any]) -> EventRecord:
    recurrence = Recurrence(row.rrule, _utc_list(row.rdates), _utc_list(row.exdates))
    event = Event(
        id=row.id,
        title=row.title,
        start=from_utc_text(row.start_utc),
        end=from_utc_text(row.end_utc),
        attendees=stored_attendees(row._mapping["keys"]),
        recurring=bool(recurrence),
    )
    created = datetime.strptime(row.created_at, UTC_FORMAT).replace(tzinfo=UTC)
    return EventRecord(event, row.tz, bool(row.all_day), recurrence, created)


def _utc_list(text: str) -> tuple[datetime, ...]:
    return tuple(from_utc_text(part) for part in text.split())


def recurrence_columns(recurrence: Recurrence) -> tuple[str | None, str, str]:
    """The (rrule, rdates, exdates) columns for `recurrence`."""
    if not recurrence.rdates and not recurrence.exdates:  # most events: no dates to sort and join
        return (recurrence.rule, "", "")
    return (
        recurrence.rule,
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.rdates})),
        " ".join(sorted({to_utc_text(moment) for moment in recurrence.exdates})),
    )
