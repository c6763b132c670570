"""Busy time: the events of people in a range, repeating ones expanded, read from the indexes.

`events_for` gives one person's events with their titles (`calendar show`, the event list); `busy_for` gives
the busy times of several people at once (the free-slot search, the conflict check). Both read the same rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime, timedelta
from functools import lru_cache
from operator import itemgetter
from typing import NamedTuple

from sqlalchemy import Connection, TextClause

from scheduler_agent.calendar.events import EVENT_COLUMNS, stored_attendees
from scheduler_agent.calendar.series import COVERED, live_occurrences, reach
from scheduler_agent.calendar.types import Event, from_utc_text, to_utc_text
from scheduler_agent.storage.dialect import per_dialect
from scheduler_agent.storage.statement import Statement

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
    f"SELECT {EVENT_COLUMNS}, s.components, s.zone, s.day_zone, {_KEYS} AS keys "
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
        Event(event_id, title, from_utc_text(start), from_utc_text(end), stored_attendees(keys), bool(recurring))
        for event_id, title, start, end, recurring, keys in indexed[conn.dialect.name].rows(conn, args)
    ]
    for row in conn.execute(_LIVE_BY_DIALECT[conn.dialect.name], args) if live else ():
        attendees = stored_attendees(row._mapping["keys"])
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
        for key in stored_attendees(row._mapping["keys"]):
            if key in found:
                found[key] += occurrences
    by_start = itemgetter(1, 0)
    for times in found.values():
        times.sort(key=by_start)
    return found
