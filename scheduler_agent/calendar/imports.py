"""Importing events from a file or a feed: keyed by UID, person and origin, so a re-import never doubles.

An event `calendar export` wrote carries its key in this calendar (`event_key`: its id, the second it was
made and the calendar's token (m039), in a local event's UID and in every event's X-SCHEDULER-AGENT-EVENT):
importing or subscribing to that file here finds the event already there and adds nothing. In another
calendar the key names nothing, and the event is imported as any other.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime

from sqlalchemy import Connection, bindparam, text

from scheduler_agent.calendar.events import DELETE_EVENTS, add_events, checked_row, recurrence_columns
from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.series import components_of, store_recurrence, store_series
from scheduler_agent.calendar.types import CalendarError, ImportCounts, ImportedEvent, Recurrence, to_utc_text
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

HERE = "X-SCHEDULER-AGENT-EVENT"  # the property `calendar export` writes an event's key in
_EVENT_KEY = re.compile(r"event-([0-9]+)-[0-9]{8}T[0-9]{6}Z-[0-9a-f]+")


def calendar_token(conn: Connection) -> str:
    """The random token naming this calendar (m039)."""
    token: str = conn.execute(text("SELECT token FROM calendar_identity")).scalar_one()
    return token


def event_key(event_id: int, created: datetime, token: str) -> str:
    """Event `event_id`'s key in calendar `token`, made at `created`: `event-12-20260824T090000Z-1f2e3d4c`.

    The id alone could name another event one day (SQLite gives a deleted last id again); with the second
    it was made, it cannot."""
    return f"event-{event_id}-{created.astimezone(UTC):%Y%m%dT%H%M%SZ}-{token}"


def key_in(text: str) -> str:
    """The event key at the start of `text` (a UID such as `event-12-20260824T090000Z@...`), else ''."""
    found = _EVENT_KEY.match(text)
    return found.group() if found is not None else ""


def _id_of(key: str) -> int:
    return int(key.split("-")[1])


def _here(conn: Connection, events: Sequence[ImportedEvent]) -> set[str]:
    """The keys given by `events` that name an event of this calendar (an id made at that second)."""
    wanted = {item.here for item in events if item.here}
    if not wanted:  # every file but an export of a calendar here
        return set()
    token = calendar_token(conn)
    wanted = {key for key in wanted if key.endswith(f"-{token}")}
    ids = sorted({_id_of(key) for key in wanted})
    found: set[str] = set()
    for start in range(0, len(ids), 500):  # under any database's limit of parameters
        chunk = ids[start : start + 500]
        rows = conn.execute(_CREATED_AT, {"ids": chunk})
        found.update(
            f"event-{event_id}-{created.replace('-', '').replace(':', '')}-{token}" for event_id, created in rows
        )
    return wanted & found


_CREATED_AT = text("SELECT id, created_at FROM events WHERE id IN :ids").bindparams(bindparam("ids", expanding=True))


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
    (same id) or left alone when nothing changed, never added twice. One whose key (`here`) names an event
    of this calendar, exported from it, is already there: it is left alone and not added. `cancelled` are
    keys the file now marks cancelled: events imported under them are removed. `origin` is '' for a file,
    'feed:N' for a feed; `replace_all` (a feed's new copy) removes every event of that origin the new copy lacks.
    What this person and origin hold is read once, and the new events are written in a batch
    (`add_events`: a few `executemany` calls, not a round of statements per event).
    """
    counts = {"new": 0, "updated": 0, "unchanged": 0, "removed": 0}
    kept: set[int] = set()
    with transaction(conn):
        known = _sources(conn, person_key, origin)
        here = _here(conn, events)
        fresh: dict[SourceKey, ImportedEvent] = {}  # new ones, in file order; a key given twice: the last copy
        gone: set[int] = set()
        for item in events:
            key = (item.uid, _recurrence_id_text(item.recurrence_id))
            event_id = known.get(key)
            if item.here in here and event_id in (None, _id_of(item.here)):  # exported from here: it is here
                if event_id is not None:
                    kept.add(event_id)
                counts["unchanged"] += 1
                continue
            if event_id is None:
                if key in fresh:
                    counts["unchanged" if fresh[key] == item else "updated"] += 1
                fresh[key] = item
            else:
                kept.add(event_id)
                counts["updated" if _update_imported(conn, event_id, item) else "unchanged"] += 1
            if item.components is not None:  # its overrides are in the series now, not events of their own
                gone.update(known.pop(other) for other in [k for k in known if k[0] == item.uid and k[1]])
        conn.execute(DELETE_EVENTS, {"ids": sorted(gone)})
        added = _add_new(conn, person_key, origin, list(fresh.items()))
        known.update(zip(fresh, added, strict=True))
        kept.update(added)
        counts["new"] = len(fresh)
        for uid, recurrence_id in cancelled:
            event_id = known.get((uid, _recurrence_id_text(recurrence_id)))
            if event_id is not None and event_id not in gone:
                conn.execute(text("DELETE FROM events WHERE id = :event_id"), {"event_id": event_id})
                counts["removed"] += 1
        if replace_all:
            stale = [
                event_id
                for (event_id,) in conn.execute(
                    text("SELECT event_id FROM event_sources WHERE person_key = :person_key AND origin = :origin"),
                    {"person_key": person_key, "origin": origin},
                )
                if event_id not in kept
            ]
            conn.execute(DELETE_EVENTS, {"ids": list(stale)})
            counts["removed"] += len(stale)
    return ImportCounts(**counts)


SourceKey = tuple[str, str]  # (UID, RECURRENCE-ID as UTC text or '')


def _sources(conn: Connection, person_key: str, origin: str) -> dict[SourceKey, int]:
    rows = conn.execute(
        text(
            "SELECT uid, recurrence_id, event_id FROM event_sources WHERE person_key = :person_key AND origin = :origin"
        ),
        {"person_key": person_key, "origin": origin},
    )
    return {(uid, recurrence_id): event_id for uid, recurrence_id, event_id in rows}


def _add_new(
    conn: Connection, person_key: str, origin: str, fresh: Sequence[tuple[SourceKey, ImportedEvent]]
) -> list[int]:
    """Insert the events imported for the first time, and where each came from; their ids."""
    rows = [
        checked_row(
            item.title,
            item.start,
            item.end,
            tz=item.tz,
            all_day=item.all_day,
            recurrence=item.recurrence,
            components=item.components,
        )
        for _, item in fresh
    ]
    ids = add_events(conn, person_key, rows, [(item.recurrence, item.components) for _, item in fresh])
    if ids:
        _INSERT_SOURCES.many(
            conn,
            [
                {"event_id": event_id, "person_key": person_key, "origin": origin, "uid": uid, "recurrence_id": rid}
                for event_id, ((uid, rid), _) in zip(ids, fresh, strict=True)
            ],
        )
    return ids


_INSERT_SOURCES = Statement(
    "INSERT INTO event_sources (event_id, person_key, origin, uid, recurrence_id) "
    "VALUES (:event_id, :person_key, :origin, :uid, :recurrence_id)"
)


def _recurrence_id_text(moment: datetime | None) -> str:
    return "" if moment is None else to_utc_text(moment)


_COLUMNS = ("title", "start_utc", "end_utc", "tz", "all_day", "rrule", "rdates", "exdates")


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
        text("SELECT title, start_utc, end_utc, tz, all_day, rrule, rdates, exdates FROM events WHERE id = :event_id"),
        {"event_id": event_id},
    ).one()
    same_series = item.components is None or components_of(conn, event_id) == item.components
    if tuple(row) == wanted and same_series:
        return False
    conn.execute(
        text(
            "UPDATE events SET title = :title, start_utc = :start_utc, end_utc = :end_utc, tz = :tz, "
            "all_day = :all_day, rrule = :rrule, rdates = :rdates, exdates = :exdates WHERE id = :id"
        ),
        {**dict(zip(_COLUMNS, wanted, strict=True)), "id": event_id},
    )
    if item.components is not None:
        store_series(conn, event_id, *item.components)
    elif repeat:
        assert item.tz is not None
        store_recurrence(conn, event_id, item.tz, repeat, title)
    else:
        conn.execute(text("DELETE FROM event_series WHERE event_id = :event_id"), {"event_id": event_id})
        conn.execute(text("DELETE FROM occurrences WHERE event_id = :event_id"), {"event_id": event_id})
    return True
