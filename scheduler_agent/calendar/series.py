"""Repeating events in SQLite: their components, and their occurrences materialised over a horizon.

A series keeps its iCalendar components (`event_series`), so `recurring-ical-events` expands what the
file said. Expanding costs milliseconds per series per window (the library walks each rule from its
DTSTART), far too much for a free-slot search over a calendar of a hundred series; so when a series is
written its occurrences over a horizon (a year back, eleven ahead of the time of writing) go into the
indexed `occurrences` table, and a window inside that span is a range query: any week find_free_slots
searches (up to ten years ahead, `tools.inputs.SEARCH_YEARS`), with a year to spare before the series is
written again. A window outside it (or a series
too dense to materialise, or one from a database older than this table) is expanded when asked: the same
function, so both give the same busy time. The horizon rolls on each time the series is written again
(a re-import, a feed refresh).
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from scheduler_agent.calendar.recurrence import CalendarError, Occurrence, digest, expand, series_text
from scheduler_agent.calendar.types import Recurrence, from_utc_text, to_utc_text
from scheduler_agent.storage.dialect import Connection, Row

HORIZON_BACK = timedelta(days=366)
HORIZON_AHEAD = timedelta(days=4018)  # eleven years: SEARCH_YEARS and one more
MATERIALISE_CAP = 20_000  # occurrences of one series over the horizon; a denser one is expanded per window


def store_series(
    conn: Connection,
    event_id: int,
    components: str,
    zone: str,
    day_zone: str,
    now: datetime | None = None,
) -> None:
    """Keep `components` as event `event_id`'s series (replacing any) and materialise its horizon."""
    version = digest(components, zone, day_zone)
    conn.execute("DELETE FROM occurrences WHERE event_id = ?", (event_id,))
    conn.execute(
        "INSERT INTO event_series (event_id, components, version, zone, day_zone) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (event_id) DO UPDATE SET components = excluded.components, version = excluded.version, "
        "zone = excluded.zone, day_zone = excluded.day_zone, expanded_from = NULL, expanded_until = NULL",
        (event_id, components, version, zone, day_zone),
    )
    first = _first(conn, event_id)
    moment = now or datetime.now(UTC)
    # The whole horizon, even for a series that begins inside it: every window there is then read from the
    # index (an occurrence moved before the first one included), none expanded again because it begins
    # before the series does. The library walks a rule from its DTSTART either way, so it costs no more.
    span = (moment - HORIZON_BACK, moment + HORIZON_AHEAD)
    try:
        found = expand(components, zone, day_zone, *span, first=first, cap=MATERIALISE_CAP)
    except CalendarError:
        return  # too dense to keep: each window expands it (and says so if even that is too much)
    conn.executemany(
        "INSERT INTO occurrences (event_id, start_utc, end_utc, title) VALUES (?, ?, ?, ?)",
        [(event_id, to_utc_text(o.start), to_utc_text(o.end), o.title) for o in found],
    )
    conn.execute(
        "UPDATE event_series SET expanded_from = ?, expanded_until = ? WHERE event_id = ?",
        (to_utc_text(span[0]), to_utc_text(span[1]), event_id),
    )


def store_recurrence(conn: Connection, event_id: int, tz: str, recurrence: Recurrence, title: str) -> None:
    """Keep an event made here (a rule, RDATEs, EXDATEs in `tz`) as a series, like an imported one."""
    first = _first(conn, event_id)
    store_series(conn, event_id, series_text(first, tz, recurrence, title), tz, tz)


def _first(conn: Connection, event_id: int) -> tuple[datetime, datetime]:
    row = conn.execute("SELECT start_utc, end_utc FROM events WHERE id = ?", (event_id,)).fetchone()
    return from_utc_text(row[0]), from_utc_text(row[1])


def live_occurrences(row: Row, start: datetime, end: datetime) -> list[Occurrence]:
    """Expand one repeating event's row (from `events_for`'s live query) over [start, end)."""
    first = (from_utc_text(row["start_utc"]), from_utc_text(row["end_utc"]))
    if row["components"] is not None:
        components, zone, day_zone = row["components"], row["zone"], row["day_zone"]
    else:  # a database from before m012: the columns say it all
        recurrence = Recurrence(row["rrule"], _utc_list(row["rdates"]), _utc_list(row["exdates"]))
        zone = day_zone = row["tz"] or "UTC"
        components = series_text(first, zone, recurrence, row["title"])
    try:
        return expand(components, zone, day_zone, start, end, first=first)
    except CalendarError as exc:
        raise CalendarError(
            f"the repeating event #{row['id']} {row['title']!r} cannot be shown: {exc}; "
            f"cancel it with `scheduler-agent calendar cancel {row['id']}`, or import it again with a coarser rule"
        ) from None


def _utc_list(text: str) -> tuple[datetime, ...]:
    return tuple(from_utc_text(part) for part in text.split())


def components_of(conn: Connection, event_id: int) -> tuple[str, str, str] | None:
    """The stored (components, zone, day_zone) of a series imported from a file or feed, or None."""
    row = conn.execute("SELECT components, zone, day_zone FROM event_series WHERE event_id = ?", (event_id,)).fetchone()
    return None if row is None else (row[0], row[1], row[2])
