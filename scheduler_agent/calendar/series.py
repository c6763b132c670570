"""Repeating events in SQLite: their components, and their occurrences materialised over spans.

A series keeps its iCalendar components (`event_series`), so `recurring-ical-events` expands what the
file said. Expanding costs milliseconds per series per window (the library walks each rule from its
DTSTART), far too much for a free-slot search over a calendar of a hundred series; so a series' occurrences
are kept in the indexed `occurrences` table over spans, and a window inside a span is a range query.

When a series is written, its near span is materialised: a year back and `HORIZON_AHEAD` (about thirteen
months) ahead, so writing a series costs about a year of it, not the ten years a search may reach. A search
that reaches past the spans materialises what it needs first (`reach`), once, for every series, and keeps
it: a window just past the near span extends that span (to the window's end and `REACH_STEP` more); a window
further ahead (any week up to ten years ahead, `tools.inputs.SEARCH_YEARS`) gets a far span of its own
around it, which later searches nearby extend, and which moves when a search goes elsewhere. Each span holds
the occurrences that begin in it. A window outside every span (before the near one, or a series too dense
to materialise, or one from a database older than this table) is expanded when asked: the same function,
so both give the same busy time. The near span is made again each time the series is written (a
re-import, a feed refresh).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from sqlalchemy import Connection, Row, text

from scheduler_agent.calendar.recurrence import CalendarError, Occurrence, digest, expand, series_text
from scheduler_agent.calendar.types import Recurrence, from_utc_text, to_utc_text
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

HORIZON_BACK = timedelta(days=366)
HORIZON_AHEAD = timedelta(days=400)  # the near span's end when written: the coming year's searches, and a month
REACH_GAP = timedelta(days=92)  # a window that begins at most this far past a span's end extends that span
REACH_STEP = timedelta(days=92)  # a span reached past is materialised to the window's end and this much more
FAR_MARGIN = timedelta(days=31)  # a far span begins this long before the window it is made for
MATERIALISE_CAP = 20_000  # occurrences of one series in one span's piece; a denser one is expanded per window

# A window [:occurrence_lower, :end) is covered by a series' spans (`s`, its event_series row) when one holds
# it: every occurrence that can reach into the window begins in that span, and is in `occurrences`.
COVERED = (
    "((s.expanded_from <= :occurrence_lower AND s.expanded_until >= :end) "
    "OR (s.far_from <= :occurrence_lower AND s.far_until >= :end))"
)


def store_series(
    conn: Connection,
    event_id: int,
    components: str,
    zone: str,
    day_zone: str,
    now: datetime | None = None,
) -> None:
    """Keep `components` as event `event_id`'s series (replacing any) and materialise its near span."""
    version = digest(components, zone, day_zone)
    _DROP_ALL.run(conn, {"event_id": event_id})
    _KEEP.run(
        conn, {"event_id": event_id, "components": components, "version": version, "zone": zone, "day_zone": day_zone}
    )
    first = _first(conn, event_id)
    moment = now or datetime.now(UTC)
    # The whole span, even for a series that begins inside it: every window there is then read from the
    # index (an occurrence moved before the first one included), none expanded again because it begins
    # before the series does. The library walks a rule from its DTSTART either way, so it costs no more.
    span = (moment - HORIZON_BACK, moment + HORIZON_AHEAD)
    try:
        found = expand(components, zone, day_zone, *span, first=first, cap=MATERIALISE_CAP)
    except CalendarError:
        return  # too dense to keep: each window expands it (and says so if even that is too much)
    _INSERT.many(conn, _rows(event_id, found))
    _SPANNED.run(conn, {"expanded_from": to_utc_text(span[0]), "until": to_utc_text(span[1]), "id": event_id})


def _rows(event_id: int, found: list[Occurrence]) -> list[dict[str, Any]]:
    return [{"id": event_id, "start": to_utc_text(o.start), "end": to_utc_text(o.end), "title": o.title} for o in found]


# A series is written with every event a calendar import or a feed refresh brings: on the driver
# (storage/statement.py), its occurrences in one executemany.
_DROP_ALL = Statement("DELETE FROM occurrences WHERE event_id = :event_id")
_KEEP = Statement(
    "INSERT INTO event_series (event_id, components, version, zone, day_zone) VALUES (:event_id, "
    ":components, :version, :zone, :day_zone) "
    "ON CONFLICT (event_id) DO UPDATE SET components = excluded.components, version = excluded.version, "
    "zone = excluded.zone, day_zone = excluded.day_zone, expanded_from = NULL, expanded_until = NULL, "
    "far_from = NULL, far_until = NULL"
)
_SPANNED = Statement(
    "UPDATE event_series SET expanded_from = :expanded_from, expanded_until = :until WHERE event_id = :id"
)
_FIRST = Statement("SELECT start_utc, end_utc FROM events WHERE id = :event_id")


# --- reaching past the spans: a search materialises what it needs, once ----------------------------------

# The repeating events no span covers the window for: the rows `busy._LIVE` would expand, for anyone.
# Every search reads it (none, once the spans hold the window): run on the driver (storage/statement.py).
_UNCOVERED = Statement(
    "SELECT e.id, e.start_utc, e.end_utc, s.components, s.zone, s.day_zone, s.expanded_from, s.expanded_until, "
    "s.far_from, s.far_until FROM events e LEFT JOIN event_series s ON s.event_id = e.id "
    f"WHERE (e.rrule IS NOT NULL OR e.rdates <> '') AND e.start_utc < :end AND NOT coalesce({COVERED}, FALSE)",
    named=True,
)
# Claimed only if no one moved the spans since they were read (another process reaching the same window).
_CLAIM = Statement(
    "UPDATE event_series SET expanded_until = :until, far_from = :far_from, far_until = :far_until "
    "WHERE event_id = :id AND expanded_until = :old_until AND coalesce(far_from, '') = :old_far_from"
)
_DROP = Statement("DELETE FROM occurrences WHERE event_id = :id AND start_utc >= :from_utc AND start_utc < :until")
_INSERT = Statement("INSERT INTO occurrences (event_id, start_utc, end_utc, title) VALUES (:id, :start, :end, :title)")


def reach(conn: Connection, window: Mapping[str, str]) -> bool:
    """Materialise, for every series, what the window (`busy._window`'s parameters) needs beyond its spans.

    True when a repeating event is still left that the window must expand (one too dense to keep, a window
    before the near span, a database older than `event_series`): the caller then reads the live query, with
    the window's parameters read again (the longest occurrence may be longer now). False, the usual answer,
    when every series is read from the index.
    """
    rows = _UNCOVERED.rows(conn, window)
    if not rows:
        return False
    lower, end = from_utc_text(window["occurrence_lower"]), from_utc_text(window["end"])
    for row in rows:
        if row.expanded_until is not None:  # NULL: never materialised (too dense, or an old database)
            _extend(conn, row, lower, end)
    return True


def _extend(conn: Connection, row: Any, lower: datetime, end: datetime) -> None:
    """Extend or make the span that the window [lower, end) falls in, for the series of `row`."""
    near = (from_utc_text(row.expanded_from), from_utc_text(row.expanded_until))
    far = None if row.far_from is None else (from_utc_text(row.far_from), from_utc_text(row.far_until))
    if lower < near[0]:
        return  # before the near span (the past): expanded when asked
    until = end + REACH_STEP
    if lower <= near[1] + REACH_GAP:  # the near span, extended; a far span it runs into is dropped
        pieces, drop = [(near[1], until)], far if far is not None and far[0] < until else None
        spans = (until, None if drop else far)
    elif far is not None and far[0] <= lower <= far[1] + REACH_GAP:  # the far span, extended
        pieces, drop, spans = [(far[1], until)], None, (near[1], (far[0], until))
    else:  # a far span of its own, in place of any other
        begins = lower - FAR_MARGIN
        pieces, drop, spans = [(begins, until)], far, (near[1], (begins, until))
    first = (from_utc_text(row.start_utc), from_utc_text(row.end_utc))
    found: list[Occurrence] = []
    try:
        for begins, ends in pieces:
            occurrences = expand(row.components, row.zone, row.day_zone, begins, ends, first, MATERIALISE_CAP)
            found += [occurrence for occurrence in occurrences if occurrence.start >= begins]
    except CalendarError:
        return  # too dense to keep: each window expands it
    new_far = spans[1]
    claim = {
        "id": row.id,
        "until": to_utc_text(spans[0]),
        "far_from": None if new_far is None else to_utc_text(new_far[0]),
        "far_until": None if new_far is None else to_utc_text(new_far[1]),
        "old_until": row.expanded_until,
        "old_far_from": row.far_from or "",
    }
    with transaction(conn):
        if _CLAIM.run(conn, claim) != 1:
            return  # another search reached it first
        if drop is not None:
            _DROP.run(conn, {"id": row.id, "from_utc": to_utc_text(drop[0]), "until": to_utc_text(drop[1])})
        _INSERT.many(conn, _rows(row.id, found))


def store_recurrence(conn: Connection, event_id: int, tz: str, recurrence: Recurrence, title: str) -> None:
    """Keep an event made here (a rule, RDATEs, EXDATEs in `tz`) as a series, like an imported one."""
    first = _first(conn, event_id)
    store_series(conn, event_id, series_text(first, tz, recurrence, title), tz, tz)


def _first(conn: Connection, event_id: int) -> tuple[datetime, datetime]:
    row = _FIRST.first(conn, {"event_id": event_id})
    return from_utc_text(row[0]), from_utc_text(row[1])


def live_occurrences(row: Row[Any], start: datetime, end: datetime) -> list[Occurrence]:
    """Expand one repeating event's row (from `events_for`'s live query) over [start, end)."""
    first = (from_utc_text(row.start_utc), from_utc_text(row.end_utc))
    if row.components is not None:
        components, zone, day_zone = row.components, row.zone, row.day_zone
    else:  # a database from before m012: the columns say it all
        recurrence = Recurrence(row.rrule, _utc_list(row.rdates), _utc_list(row.exdates))
        zone = day_zone = row.tz or "UTC"
        components = series_text(first, zone, recurrence, row.title)
    try:
        return expand(components, zone, day_zone, start, end, first=first)
    except CalendarError as exc:
        raise CalendarError(
            f"the repeating event #{row.id} {row.title!r} cannot be shown: {exc}; "
            f"cancel it with `scheduler-agent calendar cancel {row.id}`, or import it again with a coarser rule"
        ) from None


def _utc_list(text: str) -> tuple[datetime, ...]:
    return tuple(from_utc_text(part) for part in text.split())


def components_of(conn: Connection, event_id: int) -> tuple[str, str, str] | None:
    """The stored (components, zone, day_zone) of a series imported from a file or feed, or None."""
    row = conn.execute(
        text("SELECT components, zone, day_zone FROM event_series WHERE event_id = :event_id"), {"event_id": event_id}
    ).fetchone()
    return None if row is None else (row[0], row[1], row[2])
