"""Writing to the owner's CalDAV calendar: bookings, moves and cancellations, each written once.

    writer = Writer.open(conn)                                        # the stored connection
    writer.create(tool_use_id, title, start, end, ["you", "priya"])   # -> Written
    writer.move(tool_use_id, event_id, new_start, minutes, etag)      # -> Written (changes.py)
    writer.cancel(tool_use_id, event_id, etag)                        # -> Written (changes.py)

Nothing here reads busy time: the conflict checks read the store (caldav/remote.py), synced from the
server first, and again after each write, which names an overlap that appeared meanwhile.

Writing exactly once. A booking's UID is a hash of its tool_use id and its resource `<uid>.ics`; it is
written with one plain PUT carrying `If-None-Match: *` (not the caldav library's `no_overwrite`, which
looks the UID up and then writes: a race). A resumed round finds the resource (or gets 412) and answers
with the event as the server has it, `already_made`. Moves and cancellations are a PUT with
`If-Match: <etag>`, and carry the call's id in X-SCHEDULER-AGENT-CALL, so a resumed round sees its own
change, and someone else's change since the read is never overwritten ("the event changed on the
server; here is what it is now"). Failures the model can act on are ToolError; the server being
unusable is CalDAVError (a CalendarError), which the tools turn into "The calendar cannot be used: ...".

Test hooks (agent/faults.py): pause and reach `caldav_before_put` (checked, about to write a booking)
and `caldav_before_change` (read with its ETag, about to write a move or cancellation); reach
`after_caldav_put` (the booking is on the server, its answer not yet given).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import UTC, datetime

from sqlalchemy import Connection as Db

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.calendar.caldav.changes import EventChanges, changed_on_server, describe
from scheduler_agent.calendar.caldav.connect import (
    CONNECT_HINT,
    REQUEST_DEADLINE_SECONDS,
    CalDAVError,
    Connection,
    check_status,
    contacts,
    load_connection,
    password_for,
)
from scheduler_agent.calendar.caldav.ics import Attendee, booking_ics, booking_uid
from scheduler_agent.calendar.caldav.server import Server, local_id
from scheduler_agent.calendar.caldav.types import BusyInterval, Fetched, RemoteEvent, Written
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.slots import format_window
from scheduler_agent.calendar.types import OWNER_KEY, CalendarError, Person

__all__ = [
    "BusyInterval",
    "RemoteEvent",
    "Writer",
    "Written",
    "changed_on_server",
    "describe",
    "written_text",
]

ICS_HEADERS = {"Content-Type": "text/calendar; charset=utf-8"}


class Writer:
    """The writes to the owner's CalDAV calendar; see the module's docstring."""

    def __init__(
        self,
        conn: Db,
        connection: Connection,
        password: str,
        deadline_seconds: float = REQUEST_DEADLINE_SECONDS,
        now: Callable[[], datetime] = lambda: datetime.now(UTC),
    ) -> None:
        self.conn = conn
        self.connection = connection
        self.server = Server(conn, connection, password, deadline_seconds)
        self.now = now

    @classmethod
    def open(cls, conn: Db, deadline_seconds: float = REQUEST_DEADLINE_SECONDS) -> Writer:
        connection = load_connection(conn)
        if connection is None:
            raise CalendarError(f"no calendar server is connected: {CONNECT_HINT}")
        return cls(conn, connection, password_for(connection), deadline_seconds)

    def invitation_note(self, attendees: Sequence[str]) -> str:
        """For the approval text of a booking with `attendees` (keys): who the calendar server will e-mail."""
        people = people_for(self.conn, [key for key in attendees if key != OWNER_KEY])
        invited = [f"{p.name} <{self._email(p)}>" for p in people if self._email(p)]
        if not self.connection.invites or not invited:
            return "No invitations will be sent" + (" (--no-invites)." if not self.connection.invites else ".")
        return f"The calendar server will e-mail invitations to {', '.join(invited)}."

    # --- create -------------------------------------------------------------------------------

    def create(
        self,
        tool_use_id: str,
        title: str,
        start: datetime,
        end: datetime,
        attendees: Sequence[str],
        deadline: Deadline | None = None,
    ) -> Written:
        """Book on the owner's calendar, exactly once per `tool_use_id`."""
        owner = get_owner(self.conn)
        uid = booking_uid(tool_use_id)
        href = self.server.resource_url(f"{uid}.ics")
        existing = self.server.fetch(href, "looking for this call's booking")
        if existing is not None:  # a resumed round: the write happened, its answer was lost
            return self.made(existing, tool_use_id)
        keys = [OWNER_KEY, *[key for key in dict.fromkeys(attendees) if key != OWNER_KEY]]
        people = people_for(self.conn, keys)
        with_email = [p for p in people if self._email(p) is not None]
        body = booking_ics(
            uid=uid,
            tool_use_id=tool_use_id,
            title=title,
            start=start,
            end=end,
            tz=owner.tz,
            organizer=Attendee(owner.name, self.organizer_email()),
            attendees=[Attendee(p.name, str(self._email(p))) for p in with_email],
            invites=self.connection.invites,
            stamp=self.now(),
        )
        faults.pause("caldav_before_put")
        faults.reach("caldav_before_put")
        if deadline is not None:
            deadline.check("create_event")  # the last moment nothing has been written
        status = self.put(href, body, {"If-None-Match": "*"}, "writing the booking", tool_use_id)
        if status in (412, 409):  # another process of this same call got there first (or a no-uid-conflict)
            fetched = self.server.fetch(href, "reading the booking back")
            if fetched is None:
                raise CalDAVError(f"the server refused the booking ({status}) and does not have it: try again")
            return self.made(fetched, tool_use_id)
        faults.reach("after_caldav_put")
        fetched = self.server.fetch(href, "reading the booking back")
        if fetched is None:
            raise CalDAVError(f"the server accepted the booking at {href} but does not show it: look at your calendar")
        remote = self.server.remote_of(fetched)
        local_id(self.conn, href, uid, tool_use_id)
        not_invited = tuple(p.key for p in people if self._email(p) is None and p.key != OWNER_KEY)
        return Written(remote, False, (), not_invited, self.connection.invites)

    def made(self, fetched: Fetched, tool_use_id: str) -> Written:
        local_id(self.conn, fetched.href, fetched.occurrence.uid, tool_use_id)
        return Written(self.server.remote_of(fetched), already_made=True, invites=self.connection.invites)

    def put(self, href: str, body: str, condition: dict[str, str], doing: str, tool_use_id: str) -> int:
        """One PUT; its status when 2xx or 412/409. A lost answer is settled by reading the resource."""
        import niquests

        try:
            with self.server.errors(href, doing):
                response = self.server.client.request(href, "PUT", body, {**ICS_HEADERS, **condition})
        except CalDAVError as failure:
            cause = failure.__context__
            if not isinstance(cause, niquests.exceptions.RequestException | TimeoutError):
                raise
            if _never_sent(cause):
                raise CalDAVError(f"{failure}; nothing was written (the connection was refused)") from None
            try:  # the request went out and its answer did not come back: is the write there?
                fetched = self.server.fetch(href, "checking whether the write arrived")
            except CalDAVError:
                raise CalDAVError(
                    f"{failure}; whether it was written is not known (the server did not answer again): "
                    "look at your calendar before trying again"
                ) from None
            if fetched is not None and fetched.occurrence.last_call == tool_use_id:
                return 412  # it arrived: treat as already made
            raise CalDAVError(f"{failure}; nothing was written") from None
        status = int(response.status)
        if status in (412, 409):
            return status
        check_status(href, status, doing)
        return status

    # --- move and cancel (changes.py) -------------------------------------------------------

    def move(
        self, tool_use_id: str, event_id: int, new_start: datetime, minutes: int, etag: str | None = None
    ) -> Written:
        """Move a single event the owner organises to [new_start, +minutes), with If-Match."""
        return EventChanges(self).move(tool_use_id, event_id, new_start, minutes, etag)

    def cancel(self, tool_use_id: str, event_id: int, etag: str | None = None) -> Written:
        """Cancel (STATUS:CANCELLED, never a DELETE) a single event the owner organises, with If-Match."""
        return EventChanges(self).cancel(tool_use_id, event_id, etag)

    # --- shared -------------------------------------------------------------------------------

    def _email(self, person: Person) -> str | None:
        return self.organizer_email() if person.key == OWNER_KEY else contacts(self.conn)[person.key].email

    def organizer_email(self) -> str:
        return self.connection.email or f"{self.connection.username}@{self.connection.host}"


def written_text(written: Written, tz: str, verb: str = "Booked") -> str:
    """The result text for the model: what the server now has, and what to know about it."""
    event = written.event.event
    text = f"{verb} {event.title!r} on {format_window((event.start, event.end), tz)} ({tz}). Event id: {event.id}."
    if written.already_made:
        text = f"The booking was made: {text} Do not book it again."
    if written.invites and not written.already_made:
        text += " The calendar server sends the invitations."
    if written.not_invited:
        text += f" No e-mail address for {', '.join(written.not_invited)}: not invited."
    if written.clashes:
        text += (
            f" While it was being written, {describe(written.clashes, tz)} appeared in the same time; the booking"
            " is kept. Tell the user about the clash."
        )
    return text


def people_for(conn: Db, keys: Sequence[str]) -> list[Person]:
    everyone = {p.key: p for p in [get_owner(conn), *list_people(conn)]}
    unknown = [key for key in keys if key not in everyone]
    if unknown:
        raise CalendarError(f"unknown person key(s): {', '.join(unknown)}; add them with `calendar add-person`")
    return [everyone[key] for key in keys]


def _never_sent(cause: BaseException) -> bool:
    """Whether the request failed before it reached a server (the connection was refused)."""
    text = f"{cause} {cause.__cause__ or ''} {cause.__context__ or ''}".lower()
    return isinstance(cause, ConnectionRefusedError) or "refused" in text or "errno 111" in text
