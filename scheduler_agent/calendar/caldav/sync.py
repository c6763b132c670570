"""Syncing the owner's CalDAV calendar into the store: WebDAV sync (RFC 6578) through the `caldav` library.

    changes = sync(conn, connection, password)      # -> Changes: what is new, changed, gone
    changes.lines(tz)                               # for `calendar sync`

`Calendar.get_objects_by_sync_token(token)` answers with what changed since `token` (hrefs and ETags;
with a fresh token, one small REPORT when nothing did), or, on a server without sync tokens (or when the
token expired), with every resource and a `fake-` token of the library's: then what the store has and the
server no longer has is gone. Resources whose ETag changed are read with one calendar-multiget per 200.
Each is read as the calendar file reader reads a file (`ics.read_ics`: repeats, all-day, time zones) and
stored as the owner's imported busy time (origin `caldav`, keyed by UID: ids stay), its ATTENDEEs whose
e-mail address is a person's added as that person; cancelled and transparent events take no time. All of
it is written in one transaction, with the new token and the time: a sync that fails half-way stores
nothing. A booking made before m041 is the same href, so it is linked, not added twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection as Db

from scheduler_agent.calendar.caldav import replica
from scheduler_agent.calendar.caldav.connect import (
    REQUEST_DEADLINE_SECONDS,
    Connection,
    contacts,
    open_client,
    server_errors,
)
from scheduler_agent.calendar.caldav.ics import read_occurrence
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.slots import format_window
from scheduler_agent.calendar.types import OWNER_KEY, ImportedEvent, to_utc_text
from scheduler_agent.storage.db import transaction

MULTIGET = 200  # resources read per calendar-multiget


@dataclass(frozen=True)
class Change:
    kind: str  # 'new', 'changed', 'removed'
    title: str
    start: datetime
    end: datetime


@dataclass
class Changes:
    changes: list[Change] = field(default_factory=list)
    full: bool = False  # every resource was listed (first sync, expired token, or a server without tokens)
    with_token: bool = True  # False: the server gave no sync token (the library's fallback)

    def lines(self, tz: str) -> list[str]:
        mark = {"new": "+", "changed": "~", "removed": "-"}
        return [
            f"{mark[c.kind]} {c.title!r} {format_window((c.start, c.end), tz)} ({c.kind})"
            for c in sorted(self.changes, key=lambda c: (c.start, c.title))
        ]


@dataclass(frozen=True)
class _Read:
    """One resource as the server holds it now."""

    href: str
    etag: str | None
    text: str


def sync(
    conn: Db,
    connection: Connection,
    password: str,
    *,
    now: datetime | None = None,
    deadline_seconds: float = REQUEST_DEADLINE_SECONDS,
    client: Any = None,
) -> Changes:
    """Sync the server's calendar into the store; CalDAVError (one line) when the server cannot be used."""
    from caldav.collection import Calendar
    from caldav.elements import dav

    moment = now or datetime.now(UTC)
    state = replica.sync_state(conn)
    token = None if state is None else state.token
    if client is None:
        client = open_client(connection.url, connection.username, password, deadline_seconds)
    url = connection.calendar_url
    calendar: Any = Calendar(client=client, url=url)  # a sync client: its answers are not coroutines
    with server_errors(url, "syncing your calendar", deadline_seconds):
        found: Any = calendar.get_objects_by_sync_token(token, load_objects=False)
        new_token = None if found.sync_token is None else str(found.sync_token)
        fake = new_token is not None and new_token.startswith("fake-")
        full = token is None or (fake and new_token != token) or (not fake and str(token).startswith("fake-"))
        deleted = {str(u) for u in found.deleted_urls}
        known = replica.resources(conn)
        listed: dict[str, tuple[str | None, str | None]] = {}
        for item in found:
            href = str(item.url)
            if href in deleted:
                continue
            etag = item.props.get(dav.GetEtag.tag)
            data = getattr(item, "_data", None)
            listed[href] = (None if etag is None else str(etag), None if data is None else str(item.data))
        if full:
            deleted |= {href for href in known if href not in listed and known[href].event_id is not None}
        wanted = [h for h, (etag, _) in listed.items() if h not in known or etag is None or known[h].etag != etag
                  or (known[h].event_id is None and known[h].etag is None)]  # fmt: skip
        texts = {h: str(listed[h][1]) for h in wanted if listed[h][1] is not None}
        missing = [h for h in wanted if h not in texts]
        for start in range(0, len(missing), MULTIGET):
            for item in calendar.multiget([calendar.url.join(h) for h in missing[start : start + MULTIGET]]):
                texts[str(item.url)] = str(item.data)
    reads = [_Read(h, listed[h][0], texts[h]) for h in wanted if h in texts]
    changes = Changes(full=full, with_token=not fake)
    with transaction(conn):
        for href in sorted(deleted):
            if href in known:
                changes.changes += _remove(conn, known[href])
        changes.changes += store(conn, connection, reads, known)
        replica.record_sync(conn, new_token, moment)
    return changes


def store(conn: Db, connection: Connection, reads: Sequence[_Read], known: dict[str, replica.Resource]) -> list[Change]:
    """Store each resource read (inside the caller's transaction); what changed."""
    from scheduler_agent.calendar.ics.read import read_ics
    from scheduler_agent.calendar.imports import import_events

    owner = get_owner(conn)
    zone = ZoneInfo(owner.tz)
    by_email = {c.email.lower(): key for key, c in contacts(conn).items() if c.email and key != OWNER_KEY}
    found: list[ImportedEvent] = []
    dropped: list[tuple[str, datetime | None]] = []
    masters: list[tuple[_Read, Any]] = []
    changes: list[Change] = []
    for read in reads:
        import icalendar

        components = list(icalendar.Calendar.from_ical(read.text).walk("VEVENT"))
        if not components:
            continue
        master = read_occurrence(next((c for c in components if c.get("RECURRENCE-ID") is None), components[0]), zone)
        masters.append((read, master))
        parsed = read_ics(read.text, name=read.href, owner=owner, person=owner)
        kept = {_text(e.recurrence_id) for e in parsed.events}
        replica.delete_events(conn, [i for r, i in replica.events_of(conn, master.uid).items() if r not in kept])
        found += parsed.events
        dropped += parsed.dropped
        old = known.get(read.href)
        if master.busy:
            kind = "new" if old is None or old.event_id is None else "changed"
            changes.append(Change(kind, master.title, master.start, master.end))
        elif old is not None and old.event_id is not None:
            changes.append(Change("removed", master.title, master.start, master.end))
    import_events(conn, OWNER_KEY, found, dropped, origin=replica.ORIGIN)
    for read, master in masters:
        ids = replica.events_of(conn, master.uid)
        for event_id in ids.values():
            replica.add_attendees(conn, event_id, sorted({by_email[a] for a in master.attendees if a in by_email}))
        replica.link(
            conn,
            replica.Resource(read.href, master.uid, read.etag, ids.get(""), master.organizer, master.last_call),
        )
    return changes


def _text(moment: datetime | None) -> str:
    return "" if moment is None else to_utc_text(moment)


def _remove(conn: Db, resource: replica.Resource) -> list[Change]:
    ids = replica.events_of(conn, resource.uid)
    shown = replica.title_of(conn, ids[""]) if "" in ids else None
    replica.delete_events(conn, ids.values())
    replica.link(conn, replica.Resource(resource.href, resource.uid, None, None, resource.organizer, None))
    return [] if shown is None else [Change("removed", *shown)]
