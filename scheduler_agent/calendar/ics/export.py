"""`calendar export`: every event (or one person's) as one RFC 5545 iCalendar text.

An imported series is written from its stored components (overrides, periods and a file's own
VTIMEZONEs kept); an event made here from its columns. An imported or subscribed event keeps the UID
(and RECURRENCE-ID) it came with; an event made here gets a stable one from its key (`event-N-<when it was
made>-<the calendar's token>@scheduler-agent`). Every event carries its key in X-SCHEDULER-AGENT-EVENT,
so importing the file here again, or subscribing to it, adds nothing (`imports.import_events`).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.calendar.events import event_records
from scheduler_agent.calendar.ics.scan import IcsError
from scheduler_agent.calendar.imports import HERE, calendar_token, event_key
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.series import components_of
from scheduler_agent.calendar.types import EventRecord, Person, from_utc_text

PRODID = "-//scheduler-agent//scheduler-agent//EN"
UID_DOMAIN = "scheduler-agent"
ATTENDEE_DOMAIN = "scheduler-agent.invalid"  # a reserved name: people here have keys, not addresses


@dataclass(frozen=True)
class Exported:
    text: str  # the iCalendar file, CRLF line ends
    events: int
    recurring: int


def export_calendar(conn: Connection, person: Person | None = None) -> Exported:
    """Every event (or `person`'s) as one RFC 5545 iCalendar text."""
    names = {p.key: p.name for p in [get_owner(conn), *list_people(conn)]}
    records = event_records(conn, person.key if person is not None else None)
    token = calendar_token(conn)
    sources: dict[int, tuple[str, str]] = {
        event_id: (uid, recurrence_id)
        for event_id, uid, recurrence_id in conn.execute(sql("SELECT event_id, uid, recurrence_id FROM event_sources"))
    }
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    timezones: dict[str, Any] = {}
    for record in records:
        source = sources.get(record.event.id)
        stored = components_of(conn, record.event.id) if source is not None else None
        if stored is None:
            calendar.add_component(_vevent(record, names, source, token))
            continue
        for component in _series(record, stored[0], names, timezones, source, token):
            calendar.add_component(component)
    for timezone in timezones.values():
        calendar.add_component(timezone)
    if records:
        first = min(record.event.start for record in records).date() - timedelta(days=2)
        last = max(record.event.end for record in records).date() + timedelta(days=2)
        if any(record.recurrence for record in records):
            last = max(last, date(2038, 1, 1))  # a rule may repeat on: zone rules as far as tzdata is sure
        calendar.add_missing_timezones(first_date=first, last_date=last)
    text: str = calendar.to_ical().decode()
    return Exported(text, len(records), sum(1 for record in records if record.recurrence))


def event_uid(key: str) -> str:
    """The UID of an event made here: its key in this calendar (`imports.event_key`), stable from export
    to export."""
    return f"{key}@{UID_DOMAIN}"


def _identify(vevent: Any, record: EventRecord, source: tuple[str, str] | None, token: str) -> None:
    """The event's UID (its source's, else its own) and its key in this calendar."""
    key = event_key(record.event.id, record.created, token)
    vevent.add("uid", source[0] if source is not None else event_uid(key))
    vevent.add(HERE, key)


def _attendees(vevent: Any, keys: tuple[str, ...], names: dict[str, str]) -> None:
    for key in keys:
        attendee = icalendar.prop.vCalAddress(f"mailto:{key}@{ATTENDEE_DOMAIN}")
        attendee.params["CN"] = names.get(key, key)
        vevent.add("attendee", attendee)


def _series(
    record: EventRecord,
    text: str,
    names: dict[str, str],
    timezones: dict[str, Any],
    source: tuple[str, str] | None,
    token: str,
) -> list[Any]:
    """The stored master and overrides of an imported series, under its UID, with attendees."""
    stored: Any = icalendar.Calendar.from_ical(text)
    for timezone in stored.walk("VTIMEZONE"):
        timezones.setdefault(str(timezone.get("TZID")), timezone)
    found = []
    for vevent in stored.walk("VEVENT"):
        for prop in ("UID", "ATTENDEE", "ORGANIZER", HERE):
            vevent.pop(prop, None)
        _identify(vevent, record, source, token)
        if vevent.get("DTSTAMP") is None:
            vevent.add("dtstamp", record.created)
        _attendees(vevent, record.event.attendees, names)
        found.append(vevent)
    return found


def _vevent(record: EventRecord, names: dict[str, str], source: tuple[str, str] | None, token: str) -> icalendar.Event:
    event = record.event
    vevent = icalendar.Event()
    _identify(vevent, record, source, token)
    if source is not None and source[1]:  # one occurrence of a series this calendar does not hold
        vevent.add("recurrence-id", from_utc_text(source[1]))
    vevent.add("dtstamp", record.created)
    vevent.add("summary", event.title)

    def value(moment: datetime) -> date | datetime:
        if record.all_day and record.tz is not None:
            return moment.astimezone(ZoneInfo(record.tz)).date()
        if record.tz is not None and record.tz != "UTC":
            return moment.astimezone(ZoneInfo(record.tz))
        return moment.astimezone(UTC)

    vevent.add("dtstart", value(event.start))
    vevent.add("dtend", value(event.end))
    repeat = record.recurrence
    if repeat.rule is not None:
        rule: Any = icalendar.prop.vRecur.from_ical(repeat.rule)
        if record.all_day and rule.get("UNTIL"):
            rule["UNTIL"] = [value(rule["UNTIL"][0])]  # a date, as DTSTART is
        vevent.add("rrule", rule)
    if repeat.rdates:
        vevent.add("rdate", [value(moment) for moment in repeat.rdates])
    if repeat.exdates:
        vevent.add("exdate", [value(moment) for moment in repeat.exdates])
    _attendees(vevent, event.attendees, names)
    return vevent


def write_file(path: Path, text: str) -> None:
    try:
        path.write_bytes(text.encode())
    except OSError as exc:
        raise IcsError(f"cannot write {path} ({exc.strerror or exc}): give a writable path with --out") from None


def person_label(person: Person | None) -> str:
    return "everyone" if person is None else f"{person.name} ({person.key})"
