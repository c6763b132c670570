"""The values the CalDAV calendar answers with: busy intervals, remote events, what a write left."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from scheduler_agent.calendar.caldav.ics import Occurrence
from scheduler_agent.calendar.types import Event

BUSY = "busy"


@dataclass(frozen=True)
class BusyInterval:
    """A stretch of someone's busy time: with the event's title when the server gave it, else "busy"."""

    person: str  # the person's key
    start: datetime  # aware, UTC
    end: datetime
    title: str = BUSY
    event_id: int | None = None  # the local id, when it is an event of the owner's calendar
    href: str | None = None


@dataclass(frozen=True)
class RemoteEvent:
    """An event of the owner's calendar (or one occurrence of it), with where it lives on the server."""

    event: Event  # its id is the local id
    href: str
    uid: str
    etag: str | None
    organizer: str | None  # e-mail address, when the event has one
    last_call: str | None  # the tool_use id that last wrote it, when this agent did
    cancelled: bool = False
    busy: bool = True  # False when transparent or cancelled


@dataclass(frozen=True)
class Fetched:
    """One resource as the server holds it now: its text, its ETag, its (first) VEVENT."""

    href: str
    text: str
    etag: str | None
    occurrence: Occurrence


@dataclass(frozen=True)
class Written:
    """What a create, move or cancel left on the server."""

    event: RemoteEvent
    already_made: bool = False  # a resumed round: this call's write was already there
    clashes: tuple[BusyInterval, ...] = ()  # overlaps that appeared while writing (the booking is kept)
    not_invited: tuple[str, ...] = ()  # attendees with no e-mail address: no ATTENDEE, no invitation
    invites: bool = True  # whether the server is asked to send invitations
