"""The tools' `Calendar` (backend.py) on the owner's CalDAV calendar: `opening.open_calendar` chooses it.

    calendar = open_calendar(conn)   # a RemoteCalendar when a connection is stored, else SqliteCalendar
    CalendarTools(conn, clock, calendar=calendar)

It reads the store, as the local calendar does, and nothing else: the server's calendar is synced into it
(sync.py), first when the last sync is older than 5 s (fresh.py), and so is the busy time of a person with
a `--caldav` calendar of their own (people.py); when the server cannot be reached, the store is read and
`staleness` gives the model the line saying so. The ids the model sees are the store's. Changes are
written to the server (writes.py: `If-None-Match: *` for a booking, `If-Match` with the replica's ETag for
a move or cancellation), then the replica is synced from the server and read again: an overlap that
appeared while writing is named (the booking is kept). A change refused because the event changed on
the server syncs too.

Exactly once across a crash: before each PUT a row of `caldav_bookings` (m023) names the call and the
resource, and is committed; after the write it gets the ETag, and the call's `bookings` row its result.
A resumed round whose call has the first row but not the second reads the resource: when its
X-SCHEDULER-AGENT-CALL is the call's id, the change was made, and the round answers "The booking was
made: ..." (the record is written then); else the call runs again, and `If-None-Match: *` still keeps
a second booking off the server. Nothing holds the local write lock while the server is asked.
"""

from __future__ import annotations

import dataclasses
import uuid
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime

from sqlalchemy import Connection as Db
from sqlalchemy import text as sql

from scheduler_agent.agent import faults
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import Answer, Key, SqliteCalendar, StoredEvent
from scheduler_agent.calendar.bookings import Booking, booking_for
from scheduler_agent.calendar.caldav import fresh, people, replica
from scheduler_agent.calendar.caldav.changes import describe
from scheduler_agent.calendar.caldav.connect import REQUEST_DEADLINE_SECONDS, Connection, password_for
from scheduler_agent.calendar.caldav.ics import booking_uid
from scheduler_agent.calendar.caldav.types import BusyInterval, Written
from scheduler_agent.calendar.caldav.writes import Writer, written_text
from scheduler_agent.calendar.slots import Interval
from scheduler_agent.calendar.types import OWNER_KEY, Event
from scheduler_agent.storage.db import transaction

__all__ = ["RemoteCalendar"]

_MADE = {"create_event": "booking", "move_event": "move", "cancel_event": "cancellation"}
_VERB = {"create_event": "Booked", "move_event": "Moved", "cancel_event": "Cancelled"}
_AGAIN = {"create_event": "book it", "move_event": "move it", "cancel_event": "cancel it"}


class RemoteCalendar(SqliteCalendar):
    """`Calendar` on the replica of the owner's CalDAV calendar; see the module's docstring."""

    @classmethod
    def open(
        cls,
        conn: Db,
        connection: Connection,
        invites: bool | None = None,
        deadline_seconds: float = REQUEST_DEADLINE_SECONDS,
    ) -> RemoteCalendar:
        """On `connection`; `invites` False (`--no-invites`) asks the server to send none, whatever the
        connection says. The password is read now, so a missing one is said before the model is asked."""
        if invites is False:
            connection = dataclasses.replace(connection, invites=False)
        return cls(Writer(conn, connection, password_for(connection), deadline_seconds))

    def __init__(self, remote: Writer) -> None:
        super().__init__(remote.conn)
        self.remote = remote
        self.note = ""  # the line saying the server could not be reached, from the last read
        self.people_note = ""  # the same for the people's shared calendars
        self.read: people.Read = {}  # which days of each person's shared calendar were read when

    def refresh(self, *, force: bool = False) -> str:
        """Sync the replica when due; the line for the model when the server cannot be reached."""
        self.note = fresh.refresh(self.conn, self.remote.connection, password=self.remote.server.password, force=force)
        return self.note

    def refresh_people(self, keys: Sequence[str], start: datetime, end: datetime, *, force: bool = False) -> str:
        """Sync the busy time of those of `keys` with a shared calendar of their own (people.py)."""
        self.people_note = people.refresh_people(self.remote.server, keys, start, end, self.read, force=force)
        return self.people_note

    # --- reading: the store ---------------------------------------------------------------------

    def atomic(self) -> AbstractContextManager[object]:
        return nullcontext()  # CalDAV has no transactions; If-None-Match / If-Match guard each write

    def staleness(self, keys: Sequence[str], now: datetime) -> str:
        return "\n".join(filter(None, [super().staleness(keys, now), self.server_line()]))

    def server_line(self) -> str:
        return " ".join(
            filter(
                None,
                [
                    self.note and f"Your calendar server: {self.note}; busy time is as of then.",
                    self.people_note and f"Shared calendars: {self.people_note}; their busy time is as of then.",
                ],
            )
        )

    def busy(
        self, keys: Sequence[str], start: datetime, end: datetime, *, excluding: Event | None = None
    ) -> dict[str, list[Interval]]:
        self.refresh()
        self.refresh_people(keys, start, end)
        return super().busy(keys, start, end, excluding=excluding)

    def events(self, keys: Sequence[str], start: datetime, end: datetime) -> list[Event]:
        self.refresh()
        self.refresh_people(keys, start, end)
        return super().events(keys, start, end)

    def event(self, event_id: int) -> StoredEvent | None:
        resource = replica.resource_of(self.conn, event_id)
        if resource is None:  # not the server's: an event of the local calendar
            return super().event(event_id)
        stored = None if resource.event_id is None else super().event(resource.event_id)
        if stored is None:
            return None
        mine = self.remote.organizer_email().lower()
        theirs = resource.organizer is not None and resource.organizer != mine and resource.tool_use_id is None
        return dataclasses.replace(stored, imported=theirs, booked_by_agent=resource.tool_use_id is not None)

    def recorded(self, tool_use_id: str) -> Booking | None:
        found = booking_for(self.conn, tool_use_id)
        link = self.conn.execute(
            sql("SELECT * FROM caldav_bookings WHERE tool_use_id = :tool_use_id"), {"tool_use_id": tool_use_id}
        ).fetchone()
        if found is not None:
            if found.event_id is None and link is not None and found.kind != "cancel_event":
                return dataclasses.replace(found, event_id=stored_id(self.conn, str(link.href)))
            return found
        if link is None:
            return None
        fetched = self.remote.server.fetch(link.href, "looking for this call's change")  # a resumed round
        if fetched is None or fetched.occurrence.last_call != tool_use_id:
            return None  # never written: the call runs again
        written = self._synced(self.remote.made(fetched, tool_use_id))
        kind = str(link.kind)
        text = written_text(dataclasses.replace(written, invites=False), self.owner().tz, _VERB[kind])
        if kind != "create_event":
            text = f"The {_MADE[kind]} was made: {text} Do not {_AGAIN[kind]} again."
        return record(self.conn, Key(tool_use_id, kind, ""), written, text, recovered=True)

    def invitations(self, attendees: Sequence[str]) -> str:
        """For the approval text: who the server will e-mail (servers with CalDAV scheduling, RFC 6638).
        The server's answer on scheduling is asked once (at `connect`, or the first booking) and stored."""
        invites = self.remote.connection.invites
        answer = scheduling(self.conn, self.remote) if invites else None
        if not invites or not answer:
            return replica.invitations_text(invites, answer)
        return self.remote.invitation_note(attendees)

    # --- changes: the server, then the replica ----------------------------------------------------

    def create(
        self, title: str, start: datetime, end: datetime, attendees: Sequence[str], key: Key | None, answer: Answer
    ) -> str:
        call = key.tool_use_id if key is not None else f"cli-{uuid.uuid4().hex}"
        uid = booking_uid(call)
        intend(self.conn, key, self.remote.server.resource_url(f"{uid}.ics"), uid)
        written = self._synced(self.remote.create(call, title, start, end, [k for k in attendees if k != OWNER_KEY]))
        written = with_clashes(self, written, [OWNER_KEY, *attendees])
        if written.already_made:  # another process of this same call wrote it first
            text = written_text(dataclasses.replace(written, invites=False), self.owner().tz)
        else:
            text = answer(written.event.event) + clashes_text(written, self.owner().tz)
        return record(self.conn, key, written, text).result

    def move(
        self, stored: StoredEvent, occurrence: Event, start: datetime, end: datetime, key: Key | None, answer: Answer
    ) -> str:
        resource = resource_for(self.conn, stored)
        call = call_of(self.conn, key, resource)
        minutes = int((end - start).total_seconds() // 60)
        written = self._synced(
            self._changing(lambda: self.remote.move(call, resource.cid, start, minutes, resource.etag))
        )
        written = with_clashes(self, written, stored.event.attendees)
        return record(
            self.conn, key, written, answer(written.event.event) + clashes_text(written, self.owner().tz)
        ).result

    def cancel(self, stored: StoredEvent, occurrence: Event, key: Key | None, answer: Answer) -> str:
        resource = resource_for(self.conn, stored)
        call = call_of(self.conn, key, resource)
        written = self._synced(self._changing(lambda: self.remote.cancel(call, resource.cid, resource.etag)))
        return record(self.conn, key, written, answer(occurrence)).result

    def _changing(self, change: Callable[[], Written]) -> Written:
        """A move or cancellation; when the server says the event changed (412 or another ETag), the
        replica is synced before the model is told what the event is now."""
        try:
            return change()
        except ToolError:
            self.refresh(force=True)
            raise

    def _synced(self, written: Written) -> Written:
        """`written` with the store's id of its event, after the replica is synced from the server."""
        self.refresh(force=True)
        event_id = stored_id(self.conn, written.event.href)
        if event_id is None:
            return written
        remote = dataclasses.replace(written.event, event=dataclasses.replace(written.event.event, id=event_id))
        return dataclasses.replace(written, event=remote)


def with_clashes(calendar: RemoteCalendar, written: Written, keys: Sequence[str]) -> Written:
    """`written` with what overlaps it now in the store (synced after the write): an event put on the
    server meanwhile. A person's busy time of exactly its span, without the owner, is their copy of it."""
    if written.already_made:
        return written
    event = written.event.event
    calendar.refresh_people(keys, event.start, event.end, force=True)
    clashes = []
    for other in SqliteCalendar.events(calendar, list(dict.fromkeys(keys)), event.start, event.end):
        if other.id == event.id or not (other.start < event.end and other.end > event.start):
            continue
        if (other.start, other.end) == (event.start, event.end) and OWNER_KEY not in other.attendees:
            continue
        person = next((key for key in keys if key in other.attendees), other.attendees[0])
        clashes.append(BusyInterval(person, other.start, other.end, other.title, other.id))
    return dataclasses.replace(written, clashes=tuple(clashes))


def resource_for(conn: Db, stored: StoredEvent) -> replica.Resource:
    resource = replica.resource_of(conn, stored.event.id)
    if resource is None:
        raise ToolError(
            f"Event {stored.event.id} ({stored.event.title!r}) is in the local calendar, not on your calendar "
            "server: it cannot be changed from here. Tell the user."
        )
    return resource


def stored_id(conn: Db, href: str) -> int | None:
    found = replica.resources(conn).get(href)
    return None if found is None else found.event_id


def scheduling(conn: Db, remote: Writer) -> bool:
    """Whether the server does CalDAV scheduling: the stored answer, else asked once and stored."""
    state = replica.sync_state(conn)
    if state is not None and state.scheduling is not None:
        return state.scheduling
    with remote.server.errors(remote.connection.calendar_url, "asking what the server supports"):
        answer = bool(remote.server.client.supports_scheduling())
    with transaction(conn):
        replica.set_scheduling(conn, answer)
    return answer


def intend(conn: Db, key: Key | None, href: str, uid: str) -> None:
    """The row that says call `key` is about to write `href`, committed before the PUT."""
    if key is None:
        return
    with transaction(conn):
        conn.execute(
            sql(
                "INSERT INTO caldav_bookings (tool_use_id, kind, href, uid) VALUES (:tool_use_id, :kind, :href, :uid) "
                "ON CONFLICT (tool_use_id) DO NOTHING"
            ),
            {"tool_use_id": key.tool_use_id, "kind": key.kind, "href": href, "uid": uid},
        )


def record(conn: Db, key: Key | None, written: Written, text: str, recovered: bool = False) -> Booking:
    """The call's records after the write: the link gets the ETag and local id, `bookings` the result
    (kept as it is when another process of the same call recorded first)."""
    remote = written.event
    kind = key.kind if key is not None else "create_event"
    event_id = None if kind == "cancel_event" else remote.event.id
    if key is None:
        return Booking("", event_id, text, kind)
    faults.reach("after_caldav_write")
    with transaction(conn):
        conn.execute(
            sql(
                "UPDATE caldav_bookings SET etag = :etag, written = 1, "
                "event_id = (SELECT id FROM caldav_events WHERE href = :href) WHERE tool_use_id = :tool_use_id"
            ),
            {"etag": remote.etag, "href": remote.href, "tool_use_id": key.tool_use_id},
        )
        conn.execute(
            sql(
                "INSERT INTO bookings (tool_use_id, event_id, result, kind, input_hash) VALUES (:tool_use_id, "
                "NULL, :text, :kind, :p4) "
                "ON CONFLICT (tool_use_id) DO NOTHING"
            ),
            {"tool_use_id": key.tool_use_id, "text": text, "kind": kind, "p4": "" if recovered else key.input_hash},
        )
    found = booking_for(conn, key.tool_use_id)
    assert found is not None
    return dataclasses.replace(found, event_id=event_id)


def call_of(conn: Db, key: Key | None, resource: replica.Resource) -> str:
    """The id a move or cancellation of `resource` writes under, its link row committed first."""
    intend(conn, key, resource.href, resource.uid)
    return key.tool_use_id if key is not None else f"cli-{uuid.uuid4().hex}"


def clashes_text(written: Written, tz: str) -> str:
    if not written.clashes:
        return ""
    return (
        f" While it was being written, {describe(written.clashes, tz)} appeared in the same time on the calendar"
        " server; the booking is kept. Tell the user about the clash."
    )
