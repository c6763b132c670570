"""The calendar's values: people, events and their recurrence, as aware datetimes; and CalendarError.

Times are stored in UTC as `YYYY-MM-DDTHH:MM:SSZ`, so comparing the text compares the times. The owner is
the person keyed `you`. Errors a person (or the model) can fix are `CalendarError`, one actionable line.
"""

from __future__ import annotations

import re
import sqlite3
from dataclasses import dataclass
from datetime import UTC, datetime, time
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scheduler_agent.agent.errors import AgentError

OWNER_KEY = "you"
SET_OWNER_HINT = (
    "run `scheduler-agent calendar set-owner --name NAME --tz ZONE --hours 09:00-17:00`, "
    "or `scheduler-agent calendar seed-demo` for the demo calendar"
)
KEY_PATTERN = re.compile(r"[a-z0-9_-]{1,32}")
_HOURS = re.compile(r"\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*")
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class CalendarError(AgentError):
    """A problem a person can fix; the message is one line that says what to do."""


@dataclass(frozen=True)
class Person:
    key: str
    name: str
    tz: str
    work_start: time
    work_end: time

    @property
    def is_owner(self) -> bool:
        return self.key == OWNER_KEY

    @property
    def hours(self) -> str:
        """`09:00-17:00 Europe/London`."""
        return f"{self.work_start:%H:%M}-{self.work_end:%H:%M} {self.tz}"


@dataclass(frozen=True)
class Event:
    """One event, or one occurrence of a repeating event (same id, that occurrence's times)."""

    id: int
    title: str
    start: datetime  # aware, UTC
    end: datetime
    attendees: tuple[str, ...]  # person keys, the owner ('you') first
    recurring: bool = False


@dataclass(frozen=True)
class Recurrence:
    """How an event repeats, as RFC 5545 says: the first occurrence, the RRULE's and the RDATEs' starts,
    less the EXDATEs. Expanded in the wall-clock time of the event's zone."""

    rule: str | None = None  # an RRULE value with any UNTIL in UTC, e.g. 'FREQ=WEEKLY;BYDAY=MO'
    rdates: tuple[datetime, ...] = ()  # extra starts, aware
    exdates: tuple[datetime, ...] = ()  # starts left out, aware

    def __bool__(self) -> bool:
        return self.rule is not None or bool(self.rdates)


@dataclass(frozen=True)
class EventRecord:
    """Everything stored about one event: what `calendar export` writes."""

    event: Event  # its first occurrence when it repeats
    tz: str | None  # the zone its times were given in, when known
    all_day: bool
    recurrence: Recurrence  # falsy when it does not repeat
    created: datetime


@dataclass(frozen=True)
class ImportedEvent:
    """One event read from an .ics file, ready to store for one person."""

    uid: str
    recurrence_id: datetime | None  # set when it replaces one occurrence of the event with the same UID
    title: str
    start: datetime  # aware
    end: datetime
    tz: str | None
    all_day: bool = False
    recurrence: Recurrence = Recurrence()


@dataclass(frozen=True)
class ImportCounts:
    new: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0  # imported before, cancelled in the file now


# --- values -------------------------------------------------------------------------------


def to_utc_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError(f"{moment.isoformat()} has no time zone; give an aware datetime")
    return moment.astimezone(UTC).strftime(UTC_FORMAT)


def from_utc_text(text: str) -> datetime:
    return datetime.strptime(text, UTC_FORMAT).replace(tzinfo=UTC)


def check_tz(tz: str) -> str:
    """Return `tz` if it names an IANA time zone, else raise CalendarError."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise CalendarError(
            f"time zone {tz!r} is unknown: use an IANA name such as Europe/London or America/New_York"
        ) from None
    return tz


def parse_hours(text: str) -> tuple[time, time]:
    """`09:00-17:00` → (09:00, 17:00); raise CalendarError for anything else or an empty range."""
    match = _HOURS.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        start, end = (time.fromisoformat(part.zfill(5)) for part in match.groups())
    except ValueError:
        raise CalendarError(f"working hours {text!r} are not a range: use HH:MM-HH:MM, e.g. 09:00-17:00") from None
    return check_hours(start, end)


def check_hours(start: time, end: time) -> tuple[time, time]:
    if start.second or start.microsecond or end.second or end.microsecond:
        raise CalendarError(f"working hours {start}-{end} must be whole minutes, e.g. 09:00-17:00")
    if start >= end:
        raise CalendarError(
            f"working hours {start:%H:%M}-{end:%H:%M} end before they start: "
            "give the start first, within one day, e.g. 09:00-17:00"
        )
    return start, end


def check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise CalendarError("the name is empty: give the person's full name, e.g. --name 'Priya Raman'")
    return cleaned


def person_from_row(row: sqlite3.Row) -> Person:
    return Person(
        key=row["key"],
        name=row["name"],
        tz=row["tz"],
        work_start=time.fromisoformat(row["work_start"]),
        work_end=time.fromisoformat(row["work_end"]),
    )
