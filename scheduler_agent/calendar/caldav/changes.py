"""Moving and cancelling an event on the CalDAV server: a PUT with `If-Match`, written once per call.

An event changed on the server since it was read is never overwritten: the PUT carries the ETag read,
and a 412 answers "the event changed on the server; here is what it is now". Each change carries its
call's id in X-SCHEDULER-AGENT-CALL, so a resumed round finds its own change already made. A
cancellation sets STATUS:CANCELLED (the event stays, and a scheduling server tells the attendees); it
never DELETEs on someone's calendar. Only single events the owner organises (or the agent booked) are
changed. The conflict check of a move reads the store (caldav/remote.py), as every reader of busy time does.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import Connection as Db

from scheduler_agent.agent import faults
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.caldav.connect import Connection
from scheduler_agent.calendar.caldav.ics import changed_ics
from scheduler_agent.calendar.caldav.server import Server, href_of
from scheduler_agent.calendar.caldav.types import BusyInterval, Fetched, RemoteEvent, Written
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.slots import format_window


class ChangingCalendar(Protocol):
    """What a change needs of the CalDAV calendar (writes.Writer), which imports this module."""

    conn: Db
    connection: Connection
    server: Server
    now: Callable[[], datetime]

    def made(self, fetched: Fetched, tool_use_id: str) -> Written: ...

    def put(self, href: str, body: str, condition: dict[str, str], doing: str, tool_use_id: str) -> int: ...

    def organizer_email(self) -> str: ...


class EventChanges:
    """Move and cancel, on one Writer (writes.py)."""

    def __init__(self, calendar: ChangingCalendar) -> None:
        self.calendar = calendar

    def move(self, tool_use_id: str, event_id: int, new_start: datetime, minutes: int, etag: str | None) -> Written:
        owner = get_owner(self.calendar.conn)
        fetched = self._editable(event_id, "move")
        if fetched.occurrence.last_call == tool_use_id:
            return self.calendar.made(fetched, tool_use_id)
        self._same_version(fetched, etag)
        new_end = new_start + timedelta(minutes=minutes)
        body = changed_ics(
            fetched.text, tool_use_id=tool_use_id, stamp=self.calendar.now(), tz=owner.tz, start=new_start, end=new_end
        )
        return self._write_change(fetched, body, tool_use_id, "moving the event")

    def cancel(self, tool_use_id: str, event_id: int, etag: str | None) -> Written:
        owner = get_owner(self.calendar.conn)
        fetched = self._editable(event_id, "cancel")
        if fetched.occurrence.last_call == tool_use_id:
            return self.calendar.made(fetched, tool_use_id)
        self._same_version(fetched, etag)
        body = changed_ics(fetched.text, tool_use_id=tool_use_id, stamp=self.calendar.now(), tz=owner.tz, cancel=True)
        return self._write_change(fetched, body, tool_use_id, "cancelling the event")

    def _write_change(self, fetched: Fetched, body: str, tool_use_id: str, doing: str) -> Written:
        condition = {"If-Match": fetched.etag} if fetched.etag else {}
        faults.pause("caldav_before_change")
        faults.reach("caldav_before_change")
        status = self.calendar.put(fetched.href, body, condition, doing, tool_use_id)
        now = self.calendar.server.fetch(fetched.href, "reading the event back")
        if now is None:
            raise ToolError("The event was deleted on the server meanwhile; nothing was changed. Tell the user.")
        if status in (412, 409):
            if now.occurrence.last_call == tool_use_id:
                return self.calendar.made(now, tool_use_id)
            raise ToolError(changed_on_server(self.calendar.server.remote_of(now), get_owner(self.calendar.conn).tz))
        return Written(self.calendar.server.remote_of(now), invites=self.calendar.connection.invites)

    def _editable(self, event_id: int, verb: str) -> Fetched:
        href = href_of(self.calendar.conn, event_id)
        if href is None:
            raise ToolError(f"There is no event with id {event_id}: list_events gives the ids of the events.")
        fetched = self.calendar.server.fetch(href, f"reading the event to {verb}")
        if fetched is None:
            raise ToolError(f"Event {event_id} is no longer on the calendar server; nothing was changed.")
        occurrence = fetched.occurrence
        if occurrence.recurring:
            raise ToolError(
                f"Event {event_id} ({occurrence.title!r}) repeats: only single events can be {verb}d on the "
                "calendar server. Tell the user to change it in their calendar app."
            )
        mine = {self.calendar.organizer_email().lower()}
        if occurrence.organizer is not None and occurrence.organizer not in mine and occurrence.last_call is None:
            raise ToolError(
                f"Event {event_id} ({occurrence.title!r}) is organised by {occurrence.organizer}, not by you: "
                f"only its organiser can {verb} it. Nothing was changed."
            )
        if occurrence.cancelled and verb == "move":
            raise ToolError(f"Event {event_id} ({occurrence.title!r}) is cancelled; nothing was moved.")
        return fetched

    def _same_version(self, fetched: Fetched, etag: str | None) -> None:
        if etag is not None and fetched.etag is not None and etag != fetched.etag:
            raise ToolError(
                changed_on_server(self.calendar.server.remote_of(fetched), get_owner(self.calendar.conn).tz)
            )


def changed_on_server(remote: RemoteEvent, tz: str) -> str:
    event = remote.event
    state = "cancelled" if remote.cancelled else f"on {format_window((event.start, event.end), tz)} ({tz})"
    return (
        f"The event changed on the server since it was read; nothing was changed. Here is what it is now: "
        f"{event.title!r} {state}, attendees {', '.join(event.attendees)}, id {event.id}. "
        "Tell the user, and ask before changing it again."
    )


def describe(intervals: Sequence[BusyInterval], tz: str) -> str:
    """`'Design review' (Tue 1 Sep 10:00-11:00; you) and busy (…; priya)`."""
    return " and ".join(
        f"{(repr(b.title) if b.title != 'busy' else 'busy time')} ({format_window((b.start, b.end), tz)}; {b.person})"
        for b in intervals
    )
