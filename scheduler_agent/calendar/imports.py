"""Importing events from a file or a feed: keyed by UID, person and origin, so a re-import never doubles."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from scheduler_agent.calendar.events import add_event, recurrence_columns
from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.series import components_of, store_recurrence, store_series
from scheduler_agent.calendar.types import CalendarError, ImportCounts, ImportedEvent, Recurrence, to_utc_text
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.dialect import Connection


def import_events(
    conn: Connection,
    person_key: str,
    events: Sequence[ImportedEvent],
    cancelled: Iterable[tuple[str, datetime | None]] = (),
    *,
    origin: str = "",
    replace_all: bool = False,
) -> ImportCounts:
    """Store `events` as busy time for `person_key`, all or nothing, in one transaction.

    An event is keyed by (person, origin, UID, RECURRENCE-ID): one imported before is updated in place
    (same id) or left alone when nothing changed, never added twice. `cancelled` are keys the file now
    marks cancelled: events imported under them are removed. `origin` is '' for a file, 'feed:N' for a
    feed; `replace_all` (a feed's new copy) removes every event of that origin the new copy lacks.
    """
    counts = {"new": 0, "updated": 0, "unchanged": 0, "removed": 0}
    kept: set[int] = set()
    with transaction(conn):
        for item in events:
            row = _source_row(conn, person_key, origin, item.uid, item.recurrence_id)
            if row is None:
                event = add_event(
                    conn,
                    item.title,
                    item.start,
                    item.end,
                    [person_key],
                    tz=item.tz,
                    all_day=item.all_day,
                    recurrence=item.recurrence,
                    components=item.components,
                )
                conn.execute(
                    "INSERT INTO event_sources (event_id, person_key, origin, uid, recurrence_id) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (event.id, person_key, origin, item.uid, _recurrence_id_text(item.recurrence_id)),
                )
                kept.add(event.id)
                counts["new"] += 1
            else:
                kept.add(row["event_id"])
                counts["updated" if _update_imported(conn, row["event_id"], item) else "unchanged"] += 1
            if item.components is not None:  # its overrides are in the series now, not events of their own
                _remove(conn, person_key, origin, "uid = ? AND recurrence_id <> ''", item.uid)
        for uid, recurrence_id in cancelled:
            row = _source_row(conn, person_key, origin, uid, recurrence_id)
            if row is not None:
                conn.execute("DELETE FROM events WHERE id = ?", (row["event_id"],))
                counts["removed"] += 1
        if replace_all:
            stale = [
                event_id
                for (event_id,) in conn.execute(
                    "SELECT event_id FROM event_sources WHERE person_key = ? AND origin = ?", (person_key, origin)
                )
                if event_id not in kept
            ]
            conn.executemany("DELETE FROM events WHERE id = ?", [(event_id,) for event_id in stale])
            counts["removed"] += len(stale)
    return ImportCounts(**counts)


def _remove(conn: Connection, person_key: str, origin: str, where: str, *args: str) -> int:
    ids = [
        row[0]
        for row in conn.execute(
            f"SELECT event_id FROM event_sources WHERE person_key = ? AND origin = ? AND {where}",
            (person_key, origin, *args),
        )
    ]
    conn.executemany("DELETE FROM events WHERE id = ?", [(event_id,) for event_id in ids])
    return len(ids)


def _source_row(conn: Connection, person_key: str, origin: str, uid: str, recurrence_id: datetime | None) -> Any:
    return conn.execute(
        "SELECT event_id FROM event_sources WHERE person_key = ? AND origin = ? AND uid = ? AND recurrence_id = ?",
        (person_key, origin, uid, _recurrence_id_text(recurrence_id)),
    ).fetchone()


def _recurrence_id_text(moment: datetime | None) -> str:
    return "" if moment is None else to_utc_text(moment)


def _update_imported(conn: Connection, event_id: int, item: ImportedEvent) -> bool:
    """Bring event `event_id` in line with `item`; False when it already was."""
    title = " ".join(item.title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    start_text, end_text = to_utc_text(item.start), to_utc_text(item.end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({item.end.isoformat()}) before it starts ({item.start.isoformat()})")
    if item.recurrence and item.components is None:
        if item.tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(item.recurrence, item.start, item.tz)
    repeat = item.recurrence or Recurrence()  # EXDATEs alone do not make an event repeat: as add_event stores it
    wanted = (title, start_text, end_text, item.tz, int(item.all_day), *recurrence_columns(repeat))
    row = conn.execute(
        "SELECT title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    same_series = item.components is None or components_of(conn, event_id) == item.components
    if tuple(row) == wanted and same_series:
        return False
    conn.execute(
        "UPDATE events SET title = ?, start_utc = ?, end_utc = ?, tz = ?, all_day = ?, rrule = ?, rdates = ?, "
        "exdates = ? WHERE id = ?",
        (*wanted, event_id),
    )
    if item.components is not None:
        store_series(conn, event_id, *item.components)
    elif repeat:
        assert item.tz is not None
        store_recurrence(conn, event_id, item.tz, repeat, title)
    else:
        conn.execute("DELETE FROM event_series WHERE event_id = ?", (event_id,))
        conn.execute("DELETE FROM occurrences WHERE event_id = ?", (event_id,))
    return True
