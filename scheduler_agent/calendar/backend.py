"""The calendar the tools call: one interface, with the SQLite calendar as its first implementation.

The tools (calendar/tools/) see a calendar only through `Calendar`: who is in it, the busy intervals
of some people in a window, the events in a window, one event as stored, and the three changes
(create, move, cancel), each keyed by the `tool_use` id of the call it answers so that it happens
exactly once. The owner's CalDAV server sits behind the same interface (caldav/remote.py);
`open_calendar` (calendar/opening.py) is the one place that chooses.

Each change writes its event and its record (calendar/bookings.py) in one transaction, inside the
`atomic()` block the tool opened for its checks: a crash leaves both or neither.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Protocol

from sqlalchemy import Connection, text

from scheduler_agent.calendar.bookings import Booking, book_time, booking_for, lock_people, record_booking
from scheduler_agent.calendar.busy import busy_for, events_for
from scheduler_agent.calendar.events import add_event, get_record, recurrence_columns
from scheduler_agent.calendar.people import get_owner, list_people, match_people
from scheduler_agent.calendar.prefs import Preference, list_preferences
from scheduler_agent.calendar.series import store_recurrence
from scheduler_agent.calendar.slots import Interval
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person, Recurrence, to_utc_text
from scheduler_agent.storage.db import transaction

Answer = Callable[[Event], str]  # the result text of a change, from the event as it now is


@dataclass(frozen=True)
class Key:
    """The call a change answers: its tool_use id, the tool, and a hash of its input."""

    tool_use_id: str
    kind: str
    input_hash: str


@dataclass(frozen=True)
class StoredEvent:
    """One event as stored (its first occurrence when it repeats), and where it came from."""

    event: Event
    tz: str | None
    recurrence: Recurrence
    imported: bool  # read from a file or feed: someone else's, never changed by the tools
    booked_by_agent: bool

    @property
    def changeable(self) -> bool:
        """Whether the tools may move or cancel it: the agent booked it, or the owner organises it
        (the owner attends and it was not imported from someone else's calendar)."""
        return self.booked_by_agent or (not self.imported and OWNER_KEY in self.event.attendees)


class Calendar(Protocol):
    """What the tools need from a calendar."""

    def atomic(self) -> AbstractContextManager[object]:
        """A block whose reads and writes are one transaction: checks made inside still hold at the write."""
        ...

    def owner(self) -> Person: ...

    def people(self) -> list[Person]:
        """Everyone but the owner."""
        ...

    def match(self, text: str) -> list[Person]:
        """The people (not the owner) `text` names."""
        ...

    def preferences(self) -> list[Preference]: ...

    def staleness(self, keys: Sequence[str], now: datetime) -> str:
        """A line for the model when busy time of these people comes from a feed that failed to refresh."""
        ...

    def server_line(self) -> str:
        """The line for the model when the last read could not sync from the calendar server and read the
        local copy as it was ('' when it synced, or there is no server)."""
        ...

    def busy(
        self, keys: Sequence[str], start: datetime, end: datetime, *, excluding: Event | None = None
    ) -> dict[str, list[Interval]]:
        """Each person's busy intervals overlapping [start, end), less the occurrence `excluding`."""
        ...

    def events(self, keys: Sequence[str], start: datetime, end: datetime) -> list[Event]:
        """The events (each occurrence once) any of `keys` attends in [start, end), by start."""
        ...

    def event(self, event_id: int) -> StoredEvent | None: ...

    def recorded(self, tool_use_id: str) -> Booking | None:
        """What call `tool_use_id` changed, if anything."""
        ...

    def create(
        self, title: str, start: datetime, end: datetime, attendees: Sequence[str], key: Key | None, answer: Answer
    ) -> str: ...

    def move(
        self, stored: StoredEvent, occurrence: Event, start: datetime, end: datetime, key: Key | None, answer: Answer
    ) -> str:
        """Move `occurrence` of `stored` (the event itself when it does not repeat) to [start, end)."""
        ...

    def cancel(self, stored: StoredEvent, occurrence: Event, key: Key | None, answer: Answer) -> str:
        """Cancel `occurrence` of `stored` (the whole event when it does not repeat)."""
        ...

    def invitations(self, attendees: Sequence[str]) -> str:
        """For the approval text of a booking: who will be e-mailed an invitation ('' when nobody is)."""
        ...


class SqliteCalendar:
    """`Calendar` on the SQLite database (calendar/events.py, people.py, bookings.py)."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def atomic(self) -> AbstractContextManager[object]:
        return transaction(self.conn)

    def owner(self) -> Person:
        return get_owner(self.conn)

    def staleness(self, keys: Sequence[str], now: datetime) -> str:
        from scheduler_agent.calendar.feeds import staleness_note  # httpx2 only when a feed is fetched

        return staleness_note(self.conn, list(keys), now)

    def server_line(self) -> str:
        return ""  # no server: the local calendar is the only copy

    def people(self) -> list[Person]:
        return list_people(self.conn)

    def match(self, text: str) -> list[Person]:
        return match_people(self.conn, text)

    def preferences(self) -> list[Preference]:
        return list_preferences(self.conn)

    def busy(
        self, keys: Sequence[str], start: datetime, end: datetime, *, excluding: Event | None = None
    ) -> dict[str, list[Interval]]:
        lock_people(self.conn, keys)  # PostgreSQL: the check holds until the write (calendar/bookings.py)
        found = busy_for(self.conn, keys, start, end)
        if excluding is None:
            return {key: [(begins, ends) for _, begins, ends in found[key]] for key in keys}
        skip = (excluding.id, excluding.start)
        return {
            key: [(begins, ends) for event_id, begins, ends in found[key] if (event_id, begins) != skip] for key in keys
        }

    def events(self, keys: Sequence[str], start: datetime, end: datetime) -> list[Event]:
        lock_people(self.conn, keys)
        unique = {(e.id, e.start): e for key in keys for e in events_for(self.conn, key, start, end)}
        return sorted(unique.values(), key=lambda event: (event.start, event.id))

    def event(self, event_id: int) -> StoredEvent | None:
        record = get_record(self.conn, event_id)
        if record is None:
            return None
        imported = self.conn.execute(
            text("SELECT 1 FROM event_sources WHERE event_id = :event_id"), {"event_id": event_id}
        ).fetchone()
        booked = self.conn.execute(
            text("SELECT 1 FROM bookings WHERE event_id = :event_id AND kind = 'create_event'"), {"event_id": event_id}
        ).fetchone()
        return StoredEvent(record.event, record.tz, record.recurrence, imported is not None, booked is not None)

    def recorded(self, tool_use_id: str) -> Booking | None:
        return booking_for(self.conn, tool_use_id)

    def create(
        self, title: str, start: datetime, end: datetime, attendees: Sequence[str], key: Key | None, answer: Answer
    ) -> str:
        with transaction(self.conn):
            event = add_event(self.conn, title, start, end, attendees)
            return self._record(key, event.id, answer(event))

    def move(
        self, stored: StoredEvent, occurrence: Event, start: datetime, end: datetime, key: Key | None, answer: Answer
    ) -> str:
        with transaction(self.conn):
            if not stored.recurrence:
                self.conn.execute(
                    text("UPDATE events SET start_utc = :start, end_utc = :end WHERE id = :id"),
                    {"start": to_utc_text(start), "end": to_utc_text(end), "id": stored.event.id},
                )
                moved = replace(stored.event, start=start, end=end)
            else:  # that occurrence leaves the series and becomes an event of its own
                self._leave_out(stored, occurrence.start)
                moved = add_event(self.conn, stored.event.title, start, end, stored.event.attendees, tz=stored.tz)
            return self._record(key, moved.id, answer(moved))

    def cancel(self, stored: StoredEvent, occurrence: Event, key: Key | None, answer: Answer) -> str:
        with transaction(self.conn):
            if stored.recurrence:
                self._leave_out(stored, occurrence.start)
            else:
                self.conn.execute(text("DELETE FROM events WHERE id = :id"), {"id": stored.event.id})
            return self._record(key, None, answer(occurrence))

    def invitations(self, attendees: Sequence[str]) -> str:
        return ""  # a local calendar e-mails nobody

    def _leave_out(self, stored: StoredEvent, start: datetime) -> None:
        repeat = replace(stored.recurrence, exdates=(*stored.recurrence.exdates, start))
        _, _, exdates = recurrence_columns(repeat)
        self.conn.execute(
            text("UPDATE events SET exdates = :exdates WHERE id = :id"), {"exdates": exdates, "id": stored.event.id}
        )
        # the series' stored components and materialised occurrences follow (calendar/series.py)
        store_recurrence(self.conn, stored.event.id, stored.tz or self.owner().tz, repeat, stored.event.title)

    def _record(self, key: Key | None, event_id: int | None, text: str) -> str:
        if event_id is not None:
            book_time(self.conn, event_id)
        if key is not None:
            record_booking(self.conn, key.tool_use_id, event_id, text, key.kind, key.input_hash)
        return text
