"""The tools' `Calendar` (backend.py) on the owner's CalDAV calendar: `backend.open_calendar` chooses it.

    calendar = backend.open_calendar(conn)   # a RemoteCalendar when a connection is stored, else SqliteCalendar
    CalendarTools(conn, clock, calendar=calendar)

People, preferences and the owner stay in the local database; the owner's events are the server's;
the busy time of a person with a `--caldav` calendar is read from it (free-busy where the server allows
it), others' from the local calendar. The ids the model sees are local ids (`caldav_events`), and the
tools' texts are those of the local calendar: a change answers with the tool's own text.

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
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from datetime import datetime, time, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.agent import faults
from scheduler_agent.calendar.backend import Answer, Key, SqliteCalendar, StoredEvent
from scheduler_agent.calendar.bookings import Booking, booking_for
from scheduler_agent.calendar.caldav_backend import CalDAVCalendar, written_text
from scheduler_agent.calendar.caldav_changes import describe
from scheduler_agent.calendar.caldav_connect import REQUEST_DEADLINE_SECONDS, Connection, password_for
from scheduler_agent.calendar.caldav_ics import booking_uid
from scheduler_agent.calendar.caldav_read import href_of
from scheduler_agent.calendar.caldav_types import BusyInterval, Written
from scheduler_agent.calendar.prefs import Preference
from scheduler_agent.calendar.slots import Interval
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person, Recurrence
from scheduler_agent.storage import db
from scheduler_agent.storage.db import transaction

__all__ = ["RemoteCalendar"]

_MADE = {"create_event": "booking", "move_event": "move", "cancel_event": "cancellation"}
_VERB = {"create_event": "Booked", "move_event": "Moved", "cancel_event": "Cancelled"}
_AGAIN = {"create_event": "book it", "move_event": "move it", "cancel_event": "cancel it"}


class RemoteCalendar:
    """`Calendar` on a CalDAVCalendar; see the module's docstring."""

    @classmethod
    def open(
        cls,
        conn: db.Connection,
        connection: Connection,
        invites: bool | None = None,
        deadline_seconds: float = REQUEST_DEADLINE_SECONDS,
    ) -> RemoteCalendar:
        """On `connection`; `invites` False (`--no-invites`) asks the server to send none, whatever the
        connection says. The password is read now, so a missing one is said before the model is asked."""
        if invites is False:
            connection = dataclasses.replace(connection, invites=False)
        return cls(CalDAVCalendar(conn, connection, password_for(connection), deadline_seconds))

    def __init__(self, remote: CalDAVCalendar) -> None:
        self.remote = remote
        self.conn = remote.conn
        self.local = SqliteCalendar(remote.conn)
        self._etags: dict[int, str | None] = {}  # the ETag each event had when the tools last read it
        self._scheduling: bool | None = None

    # --- what stays local ---------------------------------------------------------------------

    def atomic(self) -> AbstractContextManager[object]:
        return nullcontext()  # CalDAV has no transactions; If-None-Match / If-Match guard each write

    def owner(self) -> Person:
        return self.local.owner()

    def people(self) -> list[Person]:
        return self.local.people()

    def match(self, text: str) -> list[Person]:
        return self.local.match(text)

    def preferences(self) -> list[Preference]:
        return self.local.preferences()

    def staleness(self, keys: Sequence[str], now: datetime) -> str:
        return self.local.staleness(keys, now)

    # --- reading ------------------------------------------------------------------------------

    def busy(
        self, keys: Sequence[str], start: datetime, end: datetime, *, excluding: Event | None = None
    ) -> dict[str, list[Interval]]:
        found: dict[str, list[Interval]] = {key: [] for key in keys}
        for interval in self._busy(keys, start, end):
            skip = None if excluding is None else (excluding.id, excluding.start)
            if interval.href is not None and (interval.event_id, interval.start) == skip:
                continue
            found[interval.person].append((interval.start, interval.end))
        return found

    def events(self, keys: Sequence[str], start: datetime, end: datetime) -> list[Event]:
        unique: dict[tuple[int, datetime, str], Event] = {}
        if OWNER_KEY in keys:
            for remote in self.remote.events(start, end):
                if remote.busy:
                    unique[(remote.event.id, remote.event.start, "")] = remote.event
        for interval in self._busy([key for key in keys if key != OWNER_KEY], start, end):
            if interval.href is not None and any(k[0] == interval.event_id for k in unique):
                continue  # an event of the owner's calendar they attend: already there
            event = Event(interval.event_id or 0, interval.title, interval.start, interval.end, (interval.person,))
            unique.setdefault((event.id, event.start, interval.person if not event.id else ""), event)
        return sorted(unique.values(), key=lambda event: (event.start, event.id))

    def _busy(self, keys: Sequence[str], start: datetime, end: datetime) -> list[BusyInterval]:
        """Busy time overlapping [start, end), asked for the whole days around it: free-busy answers are
        cut at the range asked, so a busy hour reads the same whatever part of it a check looks at."""
        zone = ZoneInfo(self.owner().tz)
        first = datetime.combine(start.astimezone(zone).date(), time(0), zone)
        last = datetime.combine(end.astimezone(zone).date() + timedelta(days=1), time(0), zone)
        return [b for b in self.remote.busy(keys, first, last) if b.start < end and b.end > start]

    def event(self, event_id: int) -> StoredEvent | None:
        href = href_of(self.conn, event_id)
        if href is None:  # not the server's: an event of the local calendar (someone's imported busy time)
            return self.local.event(event_id)
        fetched = self.remote.reader.fetch(href, "reading the event")
        if fetched is None:
            return None
        remote = self.remote.reader.remote_of(fetched)
        self._etags[event_id] = fetched.etag
        row = self.conn.execute("SELECT tool_use_id FROM caldav_events WHERE id = ?", (event_id,)).fetchone()
        booked = remote.last_call is not None or (row is not None and row[0] is not None)
        theirs = remote.organizer is not None and remote.organizer != self.remote.organizer_email().lower()
        return StoredEvent(remote.event, self.owner().tz, Recurrence(), imported=theirs, booked_by_agent=booked)

    def recorded(self, tool_use_id: str) -> Booking | None:
        found = booking_for(self.conn, tool_use_id)
        link = self.conn.execute("SELECT * FROM caldav_bookings WHERE tool_use_id = ?", (tool_use_id,)).fetchone()
        if found is not None:
            if found.event_id is None and link is not None and found.kind != "cancel_event":
                return dataclasses.replace(found, event_id=link["event_id"])
            return found
        if link is None:
            return None
        fetched = self.remote.reader.fetch(link["href"], "looking for this call's change")  # a resumed round
        if fetched is None or fetched.occurrence.last_call != tool_use_id:
            return None  # never written: the call runs again
        written = self.remote.made(fetched, tool_use_id)
        kind = str(link["kind"])
        text = written_text(dataclasses.replace(written, invites=False), self.owner().tz, _VERB[kind])
        if kind != "create_event":
            text = f"The {_MADE[kind]} was made: {text} Do not {_AGAIN[kind]} again."
        return record(self.conn, Key(tool_use_id, kind, ""), written, text, recovered=True)

    def invitations(self, attendees: Sequence[str]) -> str:
        """For the approval text: who the server will e-mail (servers with CalDAV scheduling, RFC 6638)."""
        if not self.remote.connection.invites:
            return "No invitations will be sent (--no-invites, or the connection's setting)."
        if self._scheduling is None:
            with self.remote.reader.errors(self.remote.connection.calendar_url, "asking what the server supports"):
                self._scheduling = bool(self.remote.reader.client.supports_scheduling())
        if not self._scheduling:
            return "Your calendar server does not send invitations (no CalDAV scheduling): tell the attendees."
        return self.remote.invitation_note(attendees)

    # --- changes ------------------------------------------------------------------------------

    def create(
        self, title: str, start: datetime, end: datetime, attendees: Sequence[str], key: Key | None, answer: Answer
    ) -> str:
        call = key.tool_use_id if key is not None else f"cli-{uuid.uuid4().hex}"
        uid = booking_uid(call)
        intend(self.conn, key, self.remote.reader.resource_url(f"{uid}.ics"), uid)
        written = self.remote.create(call, title, start, end, [k for k in attendees if k != OWNER_KEY])
        if written.already_made:  # another process of this same call wrote it first
            text = written_text(dataclasses.replace(written, invites=False), self.owner().tz)
        else:
            text = answer(written.event.event) + clashes_text(written, self.owner().tz)
        return record(self.conn, key, written, text).result

    def move(
        self, stored: StoredEvent, occurrence: Event, start: datetime, end: datetime, key: Key | None, answer: Answer
    ) -> str:
        call = call_of(self.conn, key, stored)
        minutes = int((end - start).total_seconds() // 60)
        written = self.remote.move(call, stored.event.id, start, minutes, etag=self._etags.get(stored.event.id))
        return record(
            self.conn, key, written, answer(written.event.event) + clashes_text(written, self.owner().tz)
        ).result

    def cancel(self, stored: StoredEvent, occurrence: Event, key: Key | None, answer: Answer) -> str:
        call = call_of(self.conn, key, stored)
        written = self.remote.cancel(call, stored.event.id, etag=self._etags.get(stored.event.id))
        return record(self.conn, key, written, answer(occurrence)).result


def intend(conn: db.Connection, key: Key | None, href: str, uid: str) -> None:
    """The row that says call `key` is about to write `href`, committed before the PUT."""
    if key is None:
        return
    with transaction(conn):
        conn.execute(
            "INSERT INTO caldav_bookings (tool_use_id, kind, href, uid) VALUES (?, ?, ?, ?) "
            "ON CONFLICT (tool_use_id) DO NOTHING",
            (key.tool_use_id, key.kind, href, uid),
        )


def record(conn: db.Connection, key: Key | None, written: Written, text: str, recovered: bool = False) -> Booking:
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
            "UPDATE caldav_bookings SET etag = ?, event_id = ?, written = 1 WHERE tool_use_id = ?",
            (remote.etag, remote.event.id, key.tool_use_id),
        )
        conn.execute(
            "INSERT INTO bookings (tool_use_id, event_id, result, kind, input_hash) VALUES (?, NULL, ?, ?, ?) "
            "ON CONFLICT (tool_use_id) DO NOTHING",
            (key.tool_use_id, text, kind, "" if recovered else key.input_hash),
        )
    found = booking_for(conn, key.tool_use_id)
    assert found is not None
    return dataclasses.replace(found, event_id=event_id)


def call_of(conn: db.Connection, key: Key | None, stored: StoredEvent) -> str:
    """The id a move or cancellation of `stored` writes under, its link row committed first."""
    href = href_of(conn, stored.event.id)
    row = conn.execute("SELECT uid FROM caldav_events WHERE id = ?", (stored.event.id,)).fetchone()
    if href is not None and row is not None:
        intend(conn, key, href, str(row[0]))
    return key.tool_use_id if key is not None else f"cli-{uuid.uuid4().hex}"


def clashes_text(written: Written, tz: str) -> str:
    if not written.clashes:
        return ""
    return (
        f" While it was being written, {describe(written.clashes, tz)} appeared in the same time on the calendar"
        " server; the booking is kept. Tell the user about the clash."
    )
