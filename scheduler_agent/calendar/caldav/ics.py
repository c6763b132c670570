"""The iCalendar side of CalDAV: what a booking writes, and reading what a server answers.

A booking's UID is a hash of its `tool_use` id, so the resource name `<uid>.ics` follows from the
call: a resumed round writes to the same name, and `If-None-Match: *` makes the second write fail
instead of doubling the meeting. The call that last changed an event is kept in
`X-SCHEDULER-AGENT-CALL`, so a move or cancellation that finds the event already changed can tell
its own change from someone else's.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import icalendar

CALL_PROPERTY = "X-SCHEDULER-AGENT-CALL"
PRODID = "-//scheduler-agent//CalDAV booking//EN"
_SECOND = timedelta(seconds=1)


def booking_uid(tool_use_id: str) -> str:
    """The UID of the event that call `tool_use_id` books: the same for every retry of that call."""
    digest = hashlib.sha256(tool_use_id.encode("utf-8")).hexdigest()[:40]
    return f"scheduler-agent-{digest}"


@dataclass(frozen=True)
class Attendee:
    name: str
    email: str


@dataclass(frozen=True)
class Occurrence:
    """One event, or one occurrence of a repeating one, as a server holds it."""

    uid: str
    title: str
    start: datetime  # aware, UTC
    end: datetime
    busy: bool  # False for TRANSP:TRANSPARENT or STATUS:CANCELLED
    cancelled: bool
    recurring: bool
    organizer: str | None  # the e-mail address, lower case, without mailto:
    attendees: tuple[str, ...]  # e-mail addresses, lower case
    last_call: str | None  # the tool_use id that last wrote it, if this agent did


def title_of(component: Any) -> str:
    """A VEVENT's SUMMARY on one line, as the tools show it, or "(no title)"."""
    return " ".join(str(component.get("SUMMARY", "")).split()) or "(no title)"


def _address(value: Any) -> str:
    text = str(value)
    return (text[7:] if text.lower().startswith("mailto:") else text).strip().lower()


def _moment(value: Any, zone: ZoneInfo) -> datetime:
    """An iCalendar time as aware UTC: floating times and all-day dates are read in `zone`."""
    if isinstance(value, datetime):
        aware = value if value.tzinfo is not None else value.replace(tzinfo=zone)
        return aware.astimezone(UTC)
    if isinstance(value, date):
        return datetime.combine(value, time(0), zone).astimezone(UTC)
    raise ValueError(f"not a date or time: {value!r}")


def read_occurrence(component: Any, zone: ZoneInfo) -> Occurrence:
    """A VEVENT (an expanded occurrence or a whole event) as an Occurrence; ValueError if malformed."""
    if component.get("DTSTART") is None:
        raise ValueError("a VEVENT without DTSTART")
    raw_start = component.decoded("DTSTART")
    start = _moment(raw_start, zone)
    if component.get("DTEND") is not None:
        end = _moment(component.decoded("DTEND"), zone)
    elif component.get("DURATION") is not None:
        end = start + component.decoded("DURATION")
    elif isinstance(raw_start, datetime):
        end = start  # RFC 5545 3.6.1: an instant
    else:
        end = start + timedelta(days=1)  # a date: that whole day
    status = str(component.get("STATUS", "")).upper()
    transparent = str(component.get("TRANSP", "OPAQUE")).upper() == "TRANSPARENT"
    attendees = component.get("ATTENDEE", [])
    if not isinstance(attendees, list):
        attendees = [attendees]
    organizer = component.get("ORGANIZER")
    call = component.get(CALL_PROPERTY)
    return Occurrence(
        uid=str(component.get("UID", "")),
        title=title_of(component),
        start=start,
        end=max(end, start),
        busy=status != "CANCELLED" and not transparent and end > start,
        cancelled=status == "CANCELLED",
        recurring=component.get("RRULE") is not None
        or component.get("RECURRENCE-ID") is not None
        or component.get("RDATE") is not None,
        organizer=None if organizer is None else _address(organizer),
        attendees=tuple(_address(a) for a in attendees),
        last_call=None if call is None else str(call),
    )


def booking_ics(
    *,
    uid: str,
    tool_use_id: str,
    title: str,
    start: datetime,
    end: datetime,
    tz: str,
    organizer: Attendee,
    attendees: list[Attendee],
    invites: bool,
    stamp: datetime,
) -> str:
    """The VCALENDAR a booking writes: times in `tz` with its VTIMEZONE, the owner as ORGANIZER, the
    people as ATTENDEEs; with `invites` False, SCHEDULE-AGENT=CLIENT, so the server sends none."""
    zone = ZoneInfo(tz)
    cal = icalendar.Calendar()
    cal.add("PRODID", PRODID)
    cal.add("VERSION", "2.0")
    event = icalendar.Event()
    event.add("UID", uid)
    event.add("DTSTAMP", stamp.astimezone(UTC))
    event.add("DTSTART", start.astimezone(zone))
    event.add("DTEND", end.astimezone(zone))
    event.add("SUMMARY", title)
    event.add("SEQUENCE", 0)
    event.add("TRANSP", "OPAQUE")
    event.add("STATUS", "CONFIRMED")
    event.add(CALL_PROPERTY, tool_use_id)
    event.add("ORGANIZER", _cal_address(organizer, invites, role=None))
    for person in attendees:
        event.add("ATTENDEE", _cal_address(person, invites, role="REQ-PARTICIPANT"), encode=False)
    cal.add_component(event)
    cal.add_missing_timezones()
    text: str = cal.to_ical().decode("utf-8")
    return text


def _cal_address(person: Attendee, invites: bool, role: str | None) -> icalendar.vCalAddress:
    address = icalendar.vCalAddress(f"mailto:{person.email}")
    address.params["CN"] = person.name
    if role is not None:
        address.params["ROLE"] = role
        address.params["PARTSTAT"] = "NEEDS-ACTION"
        address.params["RSVP"] = "TRUE"
    if not invites:
        address.params["SCHEDULE-AGENT"] = "CLIENT"
    return address


def changed_ics(
    text: str,
    *,
    tool_use_id: str,
    stamp: datetime,
    tz: str,
    start: datetime | None = None,
    end: datetime | None = None,
    cancel: bool = False,
) -> str:
    """The resource `text` with its one VEVENT moved to [start, end), or cancelled; SEQUENCE goes up.

    ValueError when the resource holds anything but one non-repeating VEVENT.
    """
    cal = icalendar.Calendar.from_ical(text)
    events = [c for c in cal.walk("VEVENT")]
    if len(events) != 1 or events[0].get("RRULE") is not None or events[0].get("RDATE") is not None:
        raise ValueError("only a single event, not a repeating one, can be changed")
    event = events[0]
    zone = ZoneInfo(tz)
    if start is not None and end is not None:
        for name in ("DTSTART", "DTEND", "DURATION"):
            event.pop(name, None)
        event.add("DTSTART", start.astimezone(zone))
        event.add("DTEND", end.astimezone(zone))
    if cancel:
        event.pop("STATUS", None)
        event.add("STATUS", "CANCELLED")
    sequence = int(event.get("SEQUENCE", 0)) + 1
    for name in ("SEQUENCE", "DTSTAMP", CALL_PROPERTY):
        event.pop(name, None)
    event.add("SEQUENCE", sequence)
    event.add("DTSTAMP", stamp.astimezone(UTC))
    event.add(CALL_PROPERTY, tool_use_id)
    cal.add_missing_timezones()
    changed: str = cal.to_ical().decode("utf-8")
    return changed


def parse_freebusy(text: str, start: datetime, end: datetime) -> list[tuple[datetime, datetime]]:
    """The busy periods in a free-busy-query answer, clipped to [start, end), in UTC.

    Two shapes are in use: one VFREEBUSY with FREEBUSY periods (FBTYPE other than FREE is busy), and
    (older Radicale) one VFREEBUSY per busy interval, its DTSTART/DTEND the interval, no FREEBUSY.
    A lone VFREEBUSY without periods spanning exactly the range asked about is the first shape saying
    "all free". ValueError when it is not iCalendar.
    """
    cal = icalendar.Calendar.from_ical(text)
    blocks = list(cal.walk("VFREEBUSY"))
    busy: list[tuple[datetime, datetime]] = []
    with_periods = [b for b in blocks if b.get("FREEBUSY") is not None]
    for block in with_periods:
        lines = block.get("FREEBUSY")
        for line in lines if isinstance(lines, list) else [lines]:
            if str(line.params.get("FBTYPE", "BUSY")).upper() == "FREE":
                continue
            for period in line.dt if isinstance(line.dt, list) else [line.dt]:
                begins, length_or_end = period if isinstance(period, tuple) else (period, None)
                if length_or_end is None:
                    raise ValueError(f"a FREEBUSY value without an end: {period!r}")
                ends = begins + length_or_end if isinstance(length_or_end, timedelta) else length_or_end
                busy.append((_moment(begins, ZoneInfo("UTC")), _moment(ends, ZoneInfo("UTC"))))
    if not with_periods:
        for block in blocks:
            if block.get("DTSTART") is None or block.get("DTEND") is None:
                continue
            begins = _moment(block.decoded("DTSTART"), ZoneInfo("UTC"))
            ends = _moment(block.decoded("DTEND"), ZoneInfo("UTC"))
            if len(blocks) == 1 and abs(begins - start) < _SECOND and abs(ends - end) < _SECOND:
                continue  # the range itself (servers drop fractions of a second), with no busy period in it
            busy.append((begins, ends))
    clipped = [(max(b, start), min(e, end)) for b, e in busy]
    return sorted((b, e) for b, e in clipped if b < e)
