"""iCalendar (RFC 5545) files in and out of the calendar: `calendar import` and `calendar export`.

Import reads and checks every VEVENT of a file before it stores any, then stores them all in one
transaction: a bad file changes nothing, and its error names the line and the event at fault.
Each event becomes busy time for one person, keyed by its UID, so importing a file again updates
what changed instead of adding it twice. Times keep their zone: `TZID=`, UTC (`Z`), floating
(no zone: read in the owner's zone), all-day (`VALUE=DATE`: the whole day in the person's zone).
RRULE, RDATE and EXDATE are stored as they are and expanded when busy time is read.

This module imports `icalendar` (about 50 ms): the CLI imports it only for these two commands.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar

from scheduler_agent.calendar.events import event_records
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import get_owner, list_people, match_people, names_owner
from scheduler_agent.calendar.recurrence import check_rule
from scheduler_agent.calendar.types import (
    OWNER_KEY,
    CalendarError,
    EventRecord,
    ImportCounts,
    ImportedEvent,
    Person,
    Recurrence,
)

PRODID = "-//scheduler-agent//scheduler-agent//EN"
UID_DOMAIN = "scheduler-agent"
ATTENDEE_DOMAIN = "scheduler-agent.invalid"  # a reserved name: people here have keys, not addresses
_NAME = re.compile(r"[A-Za-z0-9-]+")
_IGNORED_FOR_UID = {"DTSTAMP", "LAST-MODIFIED", "CREATED", "SEQUENCE"}

When = tuple[datetime, bool, str | None]  # an aware moment, whether it was a date, its IANA zone (None: unknown)


class IcsError(CalendarError):
    """A file that cannot be imported; the message is one line naming the line or event at fault."""


@dataclass(frozen=True)
class ReadCalendar:
    """What an .ics file holds for one person, checked and ready to store."""

    events: list[ImportedEvent]
    dropped: list[tuple[str, datetime | None]]  # keys of cancelled or free events: not busy (any more)
    cancelled: int = 0
    transparent: int = 0
    no_length: int = 0  # a start and no end or duration: they take no time
    floating: int = 0  # events whose times had no zone, read in the owner's

    @property
    def recurring(self) -> int:
        return sum(1 for event in self.events if event.recurrence)

    @property
    def skipped(self) -> int:
        return self.cancelled + self.transparent + self.no_length


@dataclass(frozen=True)
class Exported:
    text: str  # the iCalendar file, CRLF line ends
    events: int
    recurring: int


# --- the person a file is for ---------------------------------------------------------------


def person_named(conn: sqlite3.Connection, text: str) -> Person:
    """The owner (`you`, `me`, their name) or the one person `text` names; else IcsError saying who exists."""
    owner = get_owner(conn)
    if names_owner(owner, text):
        return owner
    matches = match_people(conn, text)
    if len(matches) == 1:
        return matches[0]
    if matches:
        several = ", ".join(f"{p.key} ({p.name})" for p in matches)
        raise IcsError(f"--person {text!r} fits more than one person: {several}; give one of those keys")
    known = ", ".join(f"{p.key} ({p.name})" for p in list_people(conn)) or "nobody else yet"
    raise IcsError(
        f"no one called {text!r} is in the calendar: give 'you' for {owner.name} or one of {known} "
        "(add someone with `scheduler-agent calendar add-person`)"
    )


# --- import -----------------------------------------------------------------------------------


def import_file(conn: sqlite3.Connection, path: Path, person_text: str = OWNER_KEY) -> str:
    """Import the .ics file at `path` as `person_text`'s busy time, all or nothing; return the summary."""
    owner = get_owner(conn)
    person = person_named(conn, person_text)
    text = read_text(path)
    try:
        read = read_ics(text, name=path.name, owner=owner, person=person)
    except IcsError as exc:
        raise IcsError(f"{exc}; nothing was imported") from None
    counts = import_events(conn, person.key, read.events, read.dropped)
    return import_summary(path.name, person, read, counts, owner.tz)


def read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise IcsError(f"cannot read {path} ({exc.strerror or exc}): give the path of an .ics file") from None
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise IcsError(
            f"{path.name} is not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}): "
            "iCalendar files are UTF-8; export it again, or save it as UTF-8"
        ) from None


def import_summary(name: str, person: Person, read: ReadCalendar, counts: ImportCounts, owner_tz: str) -> str:
    """`Imported 5 events (2 recurring) for Priya Raman (priya) from team.ics: 3 new, ...`, and what was skipped."""
    whom = f"{person.name} ({person.key})"
    head = f"Imported {_count(len(read.events), 'event')} ({read.recurring} recurring) for {whom} from {name}"
    parts = [f"{counts.new} new"]
    if counts.updated:
        parts.append(f"{counts.updated} updated")
    if counts.unchanged:
        parts.append(f"{counts.unchanged} already there")
    if counts.removed:
        parts.append(f"{counts.removed} removed (cancelled or free in the file now)")
    lines = [f"{head}: {', '.join(parts)}."]
    if read.skipped:
        reasons = [
            f"{read.cancelled} cancelled" if read.cancelled else "",
            f"{read.transparent} transparent (marked free)" if read.transparent else "",
            f"{read.no_length} with no length (no DTEND or DURATION)" if read.no_length else "",
        ]
        lines.append(f"Skipped {read.skipped}: {', '.join(reason for reason in reasons if reason)}.")
    if read.floating:
        lines.append(
            f"{_count(read.floating, 'event')} had floating times (no time zone): read as {owner_tz}, the owner's zone."
        )
    return "\n".join(lines)


def _count(number: int, noun: str) -> str:
    return f"{number} {noun}{'' if number == 1 else 's'}"


@dataclass
class _Lines:
    """The file's content lines, unfolded, each with the physical line it starts on; VEVENT spans."""

    lines: list[tuple[int, str]] = field(default_factory=list)
    vevents: list[tuple[int, int]] = field(default_factory=list)  # indexes into lines: BEGIN, END

    def find(self, span: tuple[int, int], name: str) -> tuple[int, str] | None:
        """The first line of property `name` inside `span`: (line number, its value)."""
        for number, line in self.lines[span[0] : span[1] + 1]:
            if _property_name(line) == name:
                return number, line.split(":", 1)[1] if ":" in line else ""
        return None


def _property_name(line: str) -> str:
    return re.split(r"[;:]", line, maxsplit=1)[0].upper()


def _scan(text: str, name: str) -> _Lines:
    """Unfold the lines and check the BEGIN/END structure, naming the line of the first problem."""
    scanned = _Lines()
    for number, raw in enumerate(text.splitlines(), 1):
        if raw[:1] in (" ", "\t") and scanned.lines:
            previous_number, previous = scanned.lines[-1]
            scanned.lines[-1] = (previous_number, previous + raw[1:])
        elif raw.strip():
            scanned.lines.append((number, raw))
    if not scanned.lines:
        raise IcsError(f"{name} is empty: give an .ics file exported from a calendar (it starts with BEGIN:VCALENDAR)")
    number, first = scanned.lines[0]
    if first.strip().upper() != "BEGIN:VCALENDAR":
        raise IcsError(
            f"{name} line {number}: not an iCalendar file: it starts with {first[:40]!r}, not BEGIN:VCALENDAR; "
            "export the calendar as .ics (iCalendar) and import that"
        )
    open_components: list[tuple[str, int, int]] = []  # name, line number, index
    for index, (number, line) in enumerate(scanned.lines):
        prop = _property_name(line)
        if ":" not in line or not _NAME.fullmatch(prop):
            raise IcsError(
                f"{name} line {number}: {line[:60]!r} is not an iCalendar content line (NAME:VALUE, "
                "or NAME;PARAM=VALUE:VALUE); fix or remove that line"
            )
        if prop not in ("BEGIN", "END"):
            if not open_components:
                raise IcsError(f"{name} line {number}: {line[:60]!r} comes after END:VCALENDAR; remove it")
            continue
        component = line.split(":", 1)[1].strip().upper()
        if prop == "BEGIN":
            open_components.append((component, number, index))
            continue
        if not open_components:
            raise IcsError(f"{name} line {number}: END:{component} has no BEGIN:{component} before it")
        begun, begun_at, begun_index = open_components.pop()
        if begun != component:
            raise IcsError(
                f"{name} line {number}: END:{component} closes BEGIN:{begun} of line {begun_at}; "
                f"end it with END:{begun}"
            )
        if component == "VEVENT":
            scanned.vevents.append((begun_index, index))
    if open_components:
        begun, begun_at, _ = open_components[-1]
        raise IcsError(f"{name} line {begun_at}: BEGIN:{begun} is never closed: the file ends before END:{begun}")
    return scanned


@dataclass
class _Reading:
    """One VEVENT being read: where it is, for the error messages."""

    name: str
    component: icalendar.Component
    span: tuple[int, int] | None
    lines: _Lines
    uid: str = ""

    @property
    def summary(self) -> str:
        return " ".join(str(self.component.get("SUMMARY", "")).split())

    @property
    def line(self) -> int | None:
        """The line of its BEGIN:VEVENT."""
        return None if self.span is None else self.lines.lines[self.span[0]][0]

    def where(self, prop: str | None = None) -> str:
        found = self.lines.find(self.span, prop) if prop is not None and self.span is not None else None
        line = found[0] if found is not None else self.line
        place = f"{self.name} line {line}" if line is not None else self.name
        title = repr(self.summary) if self.summary else "(no SUMMARY)"
        uid = f" (UID {self.uid})" if self.uid else " (no UID)"
        return f"{place}: event {title}{uid}"

    def raw(self, prop: str) -> str:
        found = self.lines.find(self.span, prop) if self.span is not None else None
        return found[1] if found is not None else ""

    def fail(self, prop: str | None, problem: str) -> IcsError:
        return IcsError(f"{self.where(prop)}: {problem}")


def read_ics(text: str, *, name: str, owner: Person, person: Person) -> ReadCalendar:
    """Read every VEVENT of `text` as busy time for `person`; IcsError (one line) on the first problem.

    `name` is the file's name, for the messages. Floating times are read in `owner`'s zone,
    all-day events as whole days in `person`'s.
    """
    lines = _scan(text, name)
    try:
        calendars = icalendar.Calendar.from_ical(text, multiple=True)
    except ValueError as exc:
        raise IcsError(f"{name} is not valid iCalendar ({exc}); export the calendar again as .ics") from None
    components = [event for calendar in calendars for event in calendar.walk("VEVENT")]
    spans: Sequence[tuple[int, int] | None] = lines.vevents
    if len(spans) != len(components):  # cannot pair them up: say which event, not which line
        spans = [None] * len(components)
    readings = [_Reading(name, component, span, lines) for component, span in zip(components, spans, strict=True)]
    read = _Read()
    problems: list[IcsError] = []
    for reading in readings:
        try:
            _read_event(reading, owner, person, read)
        except IcsError as exc:
            problems.append(exc)
    if problems:
        more = len(problems) - 1
        also = f" ({_count(more, 'other event')} in the file {'has' if more == 1 else 'have'} problems too)"
        raise IcsError(f"{problems[0]}{also if more else ''}")
    return ReadCalendar(_leave_out_replaced(read.events, read.replaced), read.dropped, **read.counts)


@dataclass
class _Read:
    """What the events read so far add up to."""

    events: list[ImportedEvent] = field(default_factory=list)
    dropped: list[tuple[str, datetime | None]] = field(default_factory=list)
    replaced: list[tuple[str, datetime]] = field(default_factory=list)  # (UID, RECURRENCE-ID) a master leaves out
    seen: dict[tuple[str, datetime | None], _Reading] = field(default_factory=dict)
    counts: dict[str, int] = field(
        default_factory=lambda: {"cancelled": 0, "transparent": 0, "no_length": 0, "floating": 0}
    )


def _read_event(reading: _Reading, owner: Person, person: Person, read: _Read) -> None:
    component = reading.component
    reading.uid = " ".join(str(component.get("UID", "")).split()) or _derived_uid(reading)
    for prop, message in component.errors:
        raw = reading.raw(prop) if prop else ""
        value = f" {raw!r}" if raw else ""
        hint = _EXAMPLES.get(prop or "", "fix or remove it")
        raise reading.fail(prop, f"{prop or 'a line'}{value} cannot be read ({message}); {hint}")
    floating = False

    def when(prop: str, zone: str) -> When | None:
        """The property as (aware start, is a date, zone name), or None when absent."""
        nonlocal floating
        value = component.get(prop)
        if value is None:
            return None
        if isinstance(value, list):
            raise reading.fail(prop, f"{prop} appears {len(value)} times; keep one")
        moment, is_date, name, was_floating = _resolve(
            reading, prop, value.dt, value.params.get("TZID"), zone, person.tz
        )
        floating = floating or was_floating
        return moment, is_date, name

    recurrence_id = when("RECURRENCE-ID", owner.tz)
    rid = recurrence_id[0] if recurrence_id is not None else None
    key = (reading.uid, rid)
    if key in read.seen:
        other = read.seen[key].line
        also = f" (also by the event on line {other})" if other is not None else ""
        raise reading.fail("UID", f"UID {reading.uid} is used twice{also}: give each event its own UID")
    read.seen[key] = reading
    status = str(component.get("STATUS", "")).upper()
    transparent = str(component.get("TRANSP", "")).upper() == "TRANSPARENT"
    if status == "CANCELLED" or transparent:
        read.counts["cancelled" if status == "CANCELLED" else "transparent"] += 1
        read.dropped.append(key)
        if rid is not None:
            read.replaced.append((reading.uid, rid))
        return
    started = when("DTSTART", owner.tz)
    if started is None:
        raise reading.fail(
            None, "it has no DTSTART: every event needs a start, e.g. DTSTART;TZID=Europe/London:20260831T140000"
        )
    start, all_day, zone = started
    events_zone = zone or owner.tz  # floating values of the other properties: as DTSTART's
    if component.get("DTEND") is not None and component.get("DURATION") is not None:
        raise reading.fail("DURATION", "it has both DTEND and DURATION; RFC 5545 allows one: remove the other")
    end = _end(reading, start, all_day, events_zone, when)
    if end is None or end == start:
        read.counts["no_length"] += 1
        read.dropped.append(key)
        return
    if end < start:
        raise reading.fail(
            "DTEND", f"it ends (DTEND {reading.raw('DTEND')!r}) before it starts (DTSTART {reading.raw('DTSTART')!r})"
        )
    recurrence = _recurrence(reading, start, all_day, events_zone, person.tz)
    if recurrence and zone is None:
        tzid = component["DTSTART"].params.get("TZID", "")
        raise reading.fail(
            "DTSTART",
            f"it repeats in time zone {tzid!r}, which is defined only inside the file, not an IANA name; "
            "repeating events need one such as Europe/London: change its TZID",
        )
    if recurrence:
        assert zone is not None
        try:
            check_rule(recurrence, start, zone)
        except CalendarError as exc:
            raise reading.fail("RRULE", str(exc)) from None
    read.counts["floating"] += floating
    if rid is not None:
        read.replaced.append((reading.uid, rid))
    title = reading.summary or "Busy"
    read.events.append(ImportedEvent(reading.uid, rid, title, start, end, zone, all_day, recurrence))


_EXAMPLES = {
    "DTSTART": "write it like 20260831T140000 (with TZID=Zone), 20260831T130000Z (UTC) or 20260831 (all day)",
    "DTEND": "write it like 20260831T150000 (with TZID=Zone), 20260831T140000Z (UTC) or 20260901 (all day)",
    "DURATION": "write it like PT1H30M or P1D",
    "RRULE": "write it like FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z",
    "EXDATE": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
    "RDATE": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
    "RECURRENCE-ID": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
}


def _resolve(
    reading: _Reading, prop: str, moment: object, tzid: str | None, zone: str, day_zone: str
) -> tuple[datetime, bool, str | None, bool]:
    """A date or date-time value of `prop` as (aware moment, is a date, IANA zone or None, was floating).

    A date is midnight in `day_zone` (the person's); a floating time is wall-clock time in `zone`; a
    time whose TZID named no zone icalendar knows (it leaves those naive) is an error.
    """
    if isinstance(moment, datetime):
        if moment.tzinfo is None:
            if tzid:
                raise reading.fail(
                    prop,
                    f"{prop} has TZID={tzid!r}, a time zone that is neither an IANA name nor defined in the file "
                    "(VTIMEZONE): use a name such as Europe/London or America/New_York",
                )
            return moment.replace(tzinfo=ZoneInfo(zone)), False, zone, True
        return moment, False, _zone_name(moment.tzinfo), False
    if isinstance(moment, date):
        return datetime.combine(moment, time(0), ZoneInfo(day_zone)), True, day_zone, False
    raise reading.fail(prop, f"{prop} {reading.raw(prop)!r} is not a date or a date-time; {_EXAMPLES.get(prop, '')}")


def _zone_name(zone: tzinfo | None) -> str | None:
    """The IANA name of `zone`, 'UTC' for UTC, None for a zone defined only in the file."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is UTC:
        return "UTC"
    return None


def _end(
    reading: _Reading, start: datetime, all_day: bool, zone: str, when: Callable[[str, str], When | None]
) -> datetime | None:
    """The end from DTEND or DURATION; one day for an all-day event with neither; None for no length.

    `zone` is the event's: a floating DTEND is read in it, and a DURATION's days are days on its clock.
    """
    component = reading.component
    ended = when("DTEND", zone)
    if ended is not None:
        end, end_is_date, _ = ended
        if end_is_date != all_day:
            kinds = ("a date", "a date-time") if all_day else ("a date-time", "a date")
            raise reading.fail("DTEND", f"DTSTART is {kinds[0]} but DTEND is {kinds[1]}: give both the same kind")
        return end
    duration = component.get("DURATION")
    if duration is None:
        return start + timedelta(days=1) if all_day else None  # wall-clock: to the next local midnight
    length = duration.dt
    if not isinstance(length, timedelta):
        raise reading.fail("DURATION", f"DURATION {reading.raw('DURATION')!r} is not a length; write it like PT1H30M")
    if length < timedelta(0):
        raise reading.fail("DURATION", f"DURATION {reading.raw('DURATION')!r} is negative; write it like PT1H30M")
    zone_name = _zone_name(start.tzinfo)
    if zone_name is None or zone_name == "UTC":
        return start.astimezone(UTC) + length
    local = ZoneInfo(zone_name)
    # A day of DURATION is a day on the wall clock (RFC 5545 3.3.6); hours are exact.
    days = timedelta(days=length.days)
    on_the_day = (start.astimezone(local).replace(tzinfo=None) + days).replace(tzinfo=local)
    return on_the_day.astimezone(UTC) + (length - days)  # hours are real ones: add them in UTC


def _recurrence(reading: _Reading, start: datetime, all_day: bool, zone: str, day_zone: str) -> Recurrence:
    component = reading.component
    rules = component.get("RRULE")
    if isinstance(rules, list):
        raise reading.fail("RRULE", f"it has {len(rules)} RRULEs; give one (RFC 5545 deprecates several)")
    rule = None if rules is None else _normalised_rule(reading, rules, zone, day_zone if all_day else zone)
    return Recurrence(
        rule,
        tuple(_dates(reading, "RDATE", zone, day_zone)),
        tuple(_dates(reading, "EXDATE", zone, day_zone)),
    )


def _normalised_rule(reading: _Reading, rule: icalendar.prop.vRecur, zone: str, day_zone: str) -> str:
    """The RRULE's text with UNTIL in UTC (dateutil wants it so for an aware start)."""
    until = rule.get("UNTIL")
    if until:
        value = until[0]
        if isinstance(value, datetime):
            moment = value if value.tzinfo is not None else value.replace(tzinfo=ZoneInfo(zone))
        else:  # a date: every occurrence starting on that day counts
            moment = datetime.combine(value, time(23, 59, 59), ZoneInfo(day_zone))
        rule = icalendar.prop.vRecur(rule)
        rule["UNTIL"] = [moment.astimezone(UTC)]
    text: str = rule.to_ical().decode()  # type: ignore[no-untyped-call]
    if not text.strip():
        raise reading.fail("RRULE", f"RRULE {reading.raw('RRULE')!r} is not a recurrence rule; {_EXAMPLES['RRULE']}")
    return text


def _dates(reading: _Reading, prop: str, zone: str, day_zone: str) -> Iterator[datetime]:
    values = reading.component.get(prop)
    if values is None:
        return
    for value_list in values if isinstance(values, list) else [values]:
        tzid = value_list.params.get("TZID")
        for value in value_list.dts:
            if isinstance(value.dt, tuple):
                raise reading.fail(
                    prop,
                    f"{prop} {reading.raw(prop)!r} is a period (VALUE=PERIOD), which is not supported: "
                    f"give start times only, e.g. {prop}:20260907T130000Z",
                )
            yield _resolve(reading, prop, value.dt, value.params.get("TZID") or tzid, zone, day_zone)[0]


def _derived_uid(reading: _Reading) -> str:
    """A UID for an event that has none, from what it says (so the same file maps to the same UIDs)."""
    if reading.span is None:
        text = reading.component.to_ical().decode()
        parts = [line for line in text.splitlines() if _property_name(line) not in _IGNORED_FOR_UID]
    else:
        parts = [
            line
            for _, line in reading.lines.lines[reading.span[0] : reading.span[1] + 1]
            if _property_name(line) not in _IGNORED_FOR_UID
        ]
    return "no-uid-" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _leave_out_replaced(events: list[ImportedEvent], replaced: list[tuple[str, datetime]]) -> list[ImportedEvent]:
    """Each repeating event with the occurrences its RECURRENCE-ID events replace (or cancel) left out."""
    by_uid: dict[str, list[datetime]] = {}
    for uid, moment in replaced:
        by_uid.setdefault(uid, []).append(moment)
    result = []
    for event in events:
        extra = by_uid.get(event.uid, []) if event.recurrence_id is None and event.recurrence else []
        if extra:
            recurrence = replace(event.recurrence, exdates=(*event.recurrence.exdates, *extra))
            event = replace(event, recurrence=recurrence)
        result.append(event)
    return result


# --- export -----------------------------------------------------------------------------------


def export_calendar(conn: sqlite3.Connection, person: Person | None = None) -> Exported:
    """Every event (or `person`'s) as one RFC 5545 iCalendar text."""
    names = {p.key: p.name for p in [get_owner(conn), *list_people(conn)]}
    records = event_records(conn, person.key if person is not None else None)
    calendar = icalendar.Calendar()
    calendar.add("prodid", PRODID)
    calendar.add("version", "2.0")
    calendar.add("calscale", "GREGORIAN")
    for record in records:
        calendar.add_component(_vevent(record, names))
    if records:
        first = min(record.event.start for record in records).date() - timedelta(days=2)
        last = max(record.event.end for record in records).date() + timedelta(days=2)
        if any(record.recurrence for record in records):
            last = max(last, date(2038, 1, 1))  # a rule may repeat on: zone rules as far as tzdata is sure
        calendar.add_missing_timezones(first_date=first, last_date=last)
    text: str = calendar.to_ical().decode()
    return Exported(text, len(records), sum(1 for record in records if record.recurrence))


def event_uid(event_id: int) -> str:
    return f"event-{event_id}@{UID_DOMAIN}"


def _vevent(record: EventRecord, names: dict[str, str]) -> icalendar.Event:
    event = record.event
    vevent = icalendar.Event()
    vevent.add("uid", event_uid(event.id))
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
        rule = icalendar.prop.vRecur.from_ical(repeat.rule)
        if record.all_day and rule.get("UNTIL"):
            rule["UNTIL"] = [value(rule["UNTIL"][0])]  # a date, as DTSTART is
        vevent.add("rrule", rule)
    if repeat.rdates:
        vevent.add("rdate", [value(moment) for moment in repeat.rdates])
    if repeat.exdates:
        vevent.add("exdate", [value(moment) for moment in repeat.exdates])
    for key in event.attendees:
        attendee = icalendar.prop.vCalAddress(f"mailto:{key}@{ATTENDEE_DOMAIN}")
        attendee.params["CN"] = names.get(key, key)
        vevent.add("attendee", attendee)
    return vevent


def write_file(path: Path, text: str) -> None:
    try:
        path.write_bytes(text.encode())
    except OSError as exc:
        raise IcsError(f"cannot write {path} ({exc.strerror or exc}): give a writable path with --out") from None


def person_label(person: Person | None) -> str:
    return "everyone" if person is None else f"{person.name} ({person.key})"
