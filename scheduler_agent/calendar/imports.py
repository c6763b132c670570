"""Importing events from a file: keyed by the file's UID and the person, so a re-import never doubles."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterable, Sequence
from datetime import datetime
from typing import Any

from scheduler_agent.calendar.events import add_event, recurrence_columns
from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.types import CalendarError, ImportCounts, ImportedEvent, Recurrence, to_utc_text
from scheduler_agent.storage.db import transaction


def import_events(
    conn: sqlite3.Connection,
    person_key: str,
    events: Sequence[ImportedEvent],
    cancelled: Iterable[tuple[str, datetime | None]] = (),
) -> ImportCounts:
    """Store `events` as busy time for `person_key`, all or nothing, in one transaction.

    An event is keyed by (person, UID, RECURRENCE-ID): one imported before is updated in place
    (same id) or left alone when nothing changed, never added twice. `cancelled` are (UID,
    RECURRENCE-ID) keys the file now marks cancelled: events imported under them are removed.
    """
    counts = {"new": 0, "updated": 0, "unchanged": 0, "removed": 0}
    with transaction(conn):
        for item in events:
            row = _source_row(conn, person_key, item.uid, item.recurrence_id)
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
                )
                conn.execute(
                    "INSERT INTO event_sources (event_id, person_key, uid, recurrence_id) VALUES (?, ?, ?, ?)",
                    (event.id, person_key, item.uid, _recurrence_id_text(item.recurrence_id)),
                )
                counts["new"] += 1
            elif _update_imported(conn, row["event_id"], item):
                counts["updated"] += 1
            else:
                counts["unchanged"] += 1
        for uid, recurrence_id in cancelled:
            row = _source_row(conn, person_key, uid, recurrence_id)
            if row is not None:
                conn.execute("DELETE FROM events WHERE id = ?", (row["event_id"],))
                counts["removed"] += 1
    return ImportCounts(**counts)


def _source_row(conn: sqlite3.Connection, person_key: str, uid: str, recurrence_id: datetime | None) -> Any:
    return conn.execute(
        "SELECT event_id FROM event_sources WHERE person_key = ? AND uid = ? AND recurrence_id = ?",
        (person_key, uid, _recurrence_id_text(recurrence_id)),
    ).fetchone()


def _recurrence_id_text(moment: datetime | None) -> str:
    return "" if moment is None else to_utc_text(moment)


def _update_imported(conn: sqlite3.Connection, event_id: int, item: ImportedEvent) -> bool:
    """Bring event `event_id` in line with `item`; False when it already was."""
    title = " ".join(item.title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    start_text, end_text = to_utc_text(item.start), to_utc_text(item.end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({item.end.isoformat()}) before it starts ({item.start.isoformat()})")
    if item.recurrence:
        if item.tz is None:
            raise CalendarError("a repeating event needs the time zone it repeats in, e.g. tz='Europe/London'")
        check_rule(item.recurrence, item.start, item.tz)
    repeat = item.recurrence or Recurrence()  # EXDATEs alone do not make an event repeat: as add_event stores it
    wanted = (title, start_text, end_text, item.tz, int(item.all_day), *recurrence_columns(repeat))
    row = conn.execute(
        "SELECT title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates FROM events WHERE id = ?",
        (event_id,),
    ).fetchone()
    if tuple(row) == wanted:
        return False
    conn.execute(
        "UPDATE events SET title = ?, start_utc = ?, end_utc = ?, tz = ?, all_day = ?, rrule = ?, rdates = ?, "
        "exdates = ? WHERE id = ?",
        (*wanted, event_id),
    )
    return True
