"""Events in SQLite: add, cancel, and the events of a person in a range (repeating ones expanded)."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from typing import Any, NamedTuple

from sqlalchemy import Connection, Row, TextClause, bindparam, text

from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.series import COVERED, live_occurrences, reach, store_recurrence, store_series
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
def _stored_attendees(keys: str) -> tuple[str, ...]:
    """`_attendee_order` of a row's space-separated keys: a calendar has few distinct sets, each read many times."""
    return _attendee_order(keys.split())


_EVENT_COLUMNS = "e.id, e.title, e.start_utc, e.end_utc, e.tz, e.all_day, e.rrule, e.rdates, e.exdates, e.created_at"
_REPEATS = "(e.rrule IS NOT NULL OR e.rdates <> '')"
_ATTENDS = "EXISTS (SELECT 1 FROM event_attendees a WHERE a.event_id = e.id AND a.person_key = :person)"
_KEYS = "(SELECT {aggregate_strings}(k.person_key, ' ') FROM event_attendees k WHERE k.event_id = e.id)"
_COVERED = COVERED  # one of the series' materialised spans holds the window (calendar/series.py)


# Single events by an indexed range on start_utc (bounded below by the longest event), and the materialised
# occurrences of series whose spans cover the window, the same way: neither scans the table.
def _indexed(covered: bool) -> str:
    """The events and occurrences that overlap the window, read from the index. `covered`: only the occurrences of
    series whose spans cover the window (`COVERED`); without it, every occurrence (when `reach` found every series
    covering the window, as it usually does, so no series' row is read)."""
    series = " JOIN event_series s ON s.event_id = o.event_id" if covered else ""
    spans = f"AND {_COVERED} " if covered else ""
    return (
        f"SELECT e.id, e.title, e.start_utc, e.end_utc, 0 AS recurring, {_KEYS} AS keys FROM events e "
        "WHERE e.start_utc < :end AND e.start_utc >= :event_lower AND e.end_utc > :start "
        f"AND e.rrule IS NULL AND e.rdates = '' AND {_ATTENDS} "
        "UNION ALL "
        f"SELECT e.id, o.title, o.start_utc, o.end_utc, 1 AS recurring, {_KEYS} AS keys "
        f"FROM occurrences o{series} JOIN events e ON e.id = o.event_id "
        "WHERE o.start_utc < :end AND o.start_utc >= :occurrence_lower AND o.end_utc > :start "
        f"{spans}AND {_ATTENDS}"
    )


_INDEXED = _indexed(covered=True)
# Series no span covers (through the partial index on repeating events): expanded here.
_LIVE = (
    f"SELECT {_EVENT_COLUMNS}, s.components, s.zone, s.day_zone, {_KEYS} AS keys "
    f"FROM events e LEFT JOIN event_series s ON s.event_id = e.id WHERE {_REPEATS} AND e.start_utc < :end "
    f"AND NOT coalesce({_COVERED}, FALSE) AND {_ATTENDS}"
)


# The longest single event and the longest occurrence, in days: each read from the end of m035's index on
# that very expression, so it is a lookup, and it follows every write.
_LENGTH = "julianday(end_utc) - julianday(start_utc)"
_LONGEST = Statement(
    f"SELECT (SELECT max({_LENGTH}) FROM events WHERE rrule IS NULL AND rdates = ''), "
    f"(SELECT max({_LENGTH}) FROM occurrences)"
)


def _statements(template: str) -> dict[str, Statement]:
    """`per_dialect`'s statements, as `Statement`s: run on the driver (a tool call's reads, storage/statement.py)."""
    return {name: Statement(clause.text) for name, clause in per_dialect(template).items()}


_INDEXED_BY_DIALECT = _statements(_INDEXED)
_EVERY_SERIES_COVERED = _indexed(covered=False)
_EVERY_SERIES_COVERED_BY_DIALECT = _statements(_EVERY_SERIES_COVERED)
_LIVE_BY_DIALECT = per_dialect(_LIVE)


def _window(conn: Connection, start_utc: datetime, end_utc: datetime) -> dict[str, str]:
    """The query parameters of the window [start_utc, end_utc), with the lower bounds of a start that can
    still reach into it (the longest event's and occurrence's length before it, and a second more)."""
    event, occurrence = _LONGEST.first(conn)
    return {
        "start": to_utc_text(start_utc),
        "end": to_utc_text(end_utc),
        "event_lower": to_utc_text(start_utc - timedelta(days=event or 0, seconds=1)),
        "occurrence_lower": to_utc_text(start_utc - timedelta(days=occurrence or 0, seconds=1)),
    }


def events_for(conn: Connection, person_key: str, start_utc: datetime, end_utc: datetime) -> list[Event]:
    """`person_key`'s events that overlap [start_utc, end_utc), by start time: the busy time the agent sees.

    A repeating event gives each of its occurrences in the range, with that occurrence's times and
    title. `calendar show` and the event list read through here; the free-slot search and the conflict
    check through `busy_for`, which gives the same times.
    """
    args = {"person": person_key, **_window(conn, start_utc, end_utc)}
    live = reach(conn, args)  # what the spans lack is materialised first, once
    if live:
        args = {"person": person_key, **_window(conn, start_utc, end_utc)}
    indexed = _INDEXED_BY_DIALECT if live else _EVERY_SERIES_COVERED_BY_DIALECT
    events = [
        Event(event_id, title, from_utc_text(start), from_utc_text(end), _stored_attendees(keys), bool(recurring))
        for event_id, title, start, end, recurring, keys in indexed[conn.dialect.name].rows(conn, args)
    ]
    for row in conn.execute(_LIVE_BY_DIALECT[conn.dialect.name], args) if live else ():
        attendees = _stored_attendees(row._mapping["keys"])
        events += [
            Event(row.id, occurrence.title, occurrence.start, occurrence.end, attendees, recurring=True)
            for occurrence in live_occurrences(row, start_utc, end_utc)
        ]
    return sorted(events, key=lambda event: (event.start, event.id))


BusyTime = tuple[int, datetime, datetime]  # an event's id, and the start and end of the event or occurrence


class _BusyQueries(NamedTuple):
    every_series_covered: Statement  # when no repeating event lacks a span over the window (`reach` said so)
    indexed: Statement  # `_INDEXED` for busy time: what the spans cover, read from the index
    live: TextClause  # `_LIVE` for busy time: the series no span covers, expanded here


@lru_cache(maxsize=64)
def _busy_queries(count: int, dialect: str) -> _BusyQueries:
    """`_INDEXED` and `_LIVE` for any of `count` people (:p0, :p1, ...), without the titles busy time does
    not need; compiled once for each count and database.

    The indexed half gives a row per event and person asked for, attendees joined after the index range
    (CROSS JOIN keeps that order in SQLite; PostgreSQL plans it itself): no correlated subquery per row. On
    SQLite the attendee is looked up by the event alone (`+a.person_key`: an event has one or a few, one probe
    in the primary key's index instead of one for each person asked for). An occurrence's attendees are
    looked up before its series, so the series' row is read only for the occurrences of people asked for;
    and not at all when every series covers the window, as it usually does once `reach` has run."""
    anyone = f"a.person_key IN ({', '.join(f':p{index}' for index in range(count))})"
    attendee = f"+{anyone}" if dialect == "sqlite" else anyone
    singles = (
        "SELECT e.id, e.start_utc, e.end_utc, a.person_key FROM events e CROSS JOIN event_attendees a "
        "WHERE e.start_utc < :end AND e.start_utc >= :event_lower AND e.end_utc > :start "
        f"AND e.rrule IS NULL AND e.rdates = '' AND a.event_id = e.id AND {attendee} "
        "UNION ALL "
    )
    occurrences = (
        "SELECT o.event_id, o.start_utc, o.end_utc, a.person_key FROM occurrences o CROSS JOIN event_attendees a "
        "WHERE o.start_utc < :end AND o.start_utc >= :occurrence_lower AND o.end_utc > :start "
        f"AND a.event_id = o.event_id AND {attendee}"
    )
    covered = (
        "SELECT o.event_id, o.start_utc, o.end_utc, a.person_key "
        "FROM occurrences o CROSS JOIN event_attendees a CROSS JOIN event_series s "
        "WHERE o.start_utc < :end AND o.start_utc >= :occurrence_lower AND o.end_utc > :start "
        f"AND a.event_id = o.event_id AND {attendee} AND s.event_id = o.event_id AND {_COVERED}"
    )
    live = _LIVE.replace(_ATTENDS, _ATTENDS.replace("a.person_key = :person", anyone))
    return _BusyQueries(Statement(singles + occurrences), Statement(singles + covered), per_dialect(live)[dialect])


def busy_for(
    conn: Connection, keys: Sequence[str], start_utc: datetime, end_utc: datetime
) -> dict[str, list[BusyTime]]:
    """Each of `keys`' busy time overlapping [start_utc, end_utc): the id, start and end of each event of
    `events_for(conn, key, start_utc, end_utc)`, in its order.

    One read for all of them: the window's index range is walked once, not once a person (the free-slot
    search asks for everyone in the meeting at once), and a series none of them covers is expanded once.
    """
    wanted = list(dict.fromkeys(keys))
    found: dict[str, list[BusyTime]] = {key: [] for key in wanted}
    if not wanted:
        return found
    queries = _busy_queries(len(wanted), conn.dialect.name)
    people = {f"p{index}": key for index, key in enumerate(wanted)}
    args = {**_window(conn, start_utc, end_utc), **people}
    expand_live = reach(conn, args)  # what the spans lack is materialised first, once
    if expand_live:
        args = {**_window(conn, start_utc, end_utc), **people}
    indexed = queries.indexed if expand_live else queries.every_series_covered
    parse = from_utc_text
    for event_id, start, end, key in indexed.rows(conn, args):
        found[key].append((event_id, parse(start), parse(end)))
    for row in conn.execute(queries.live, args) if expand_live else ():
        occurrences = [(row.id, o.start, o.end) for o in live_occurrences(row, start_utc, end_utc)]
        for key in _stored_attendees(row._mapping["keys"]):
            if key in found:
                found[key] += occurrences
    by_start = itemgetter(1, 0)
    for times in found.values():
        times.sort(key=by_start)
    return found


def get_event(conn: Connection, event_id: int) -> Event | None:
    """The event with that id (its first occurrence, when it repeats)."""
    record = get_record(conn, event_id)
    return None if record is None else record.event


def get_record(conn: Connection, event_id: int) -> EventRecord | None:
    row = conn.execute(_RECORD[conn.dialect.name], {"event_id": event_id}).fetchone()
    return None if row is None else _record(row)


_RECORDS = (
    f"SELECT {_EVENT_COLUMNS}, {{{{aggregate_strings}}}}(a.person_key, ' ') AS keys "
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
        attendees=_stored_attendees(row._mapping["keys"]),
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
