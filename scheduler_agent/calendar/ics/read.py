"""Reading an .ics file into busy time for one person: leniently (skip and name each bad event) or strictly.

The file's structure is checked first (`scan`, `parse`): a file that is not iCalendar, or is broken, is
refused. Then each VEVENT is read on its own: in the default, lenient mode an event that cannot be read is
skipped and named (line, UID, summary, why); with `strict` the first such event refuses the file. What is
read, but not quite as the file says it (a TZID defined nowhere, read as floating time; an unreadable
DTSTAMP, left out) is named in a warning, and not refused even with `strict`.

Events are grouped by UID. Copies of one event without RECURRENCE-ID (a file edited twice): the one with
the highest SEQUENCE wins, then the latest LAST-MODIFIED/DTSTAMP, then the last in the file. Overrides
whose series is not in the file are the single events they are (an override's own RRULE is not read).
A repeating event keeps its components (the winning master, every override carrying a RECURRENCE-ID, the
VTIMEZONEs they use) for `recurring-ical-events` to expand, which applies RFC 5545's rules to the
overrides (RANGE=THISANDFUTURE, SEQUENCE) and repeats an event with several RRULEs on their union. A
calendar with X-WR-TIMEZONE (Google's exports) is made standard first by `x-wr-timezone`: its UTC and
floating times are read in that zone.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import icalendar
from icalendar.prop.broken import vBroken

from scheduler_agent.calendar.ics.parse import Skip, Warned, event_warning, parse
from scheduler_agent.calendar.ics.scan import IcsError
from scheduler_agent.calendar.ics.values import EXAMPLES, Reading, dates, end_of, normalised_rule
from scheduler_agent.calendar.imports import HERE, key_in
from scheduler_agent.calendar.recurrence import check_rule, seed
from scheduler_agent.calendar.types import CalendarError, ImportedEvent, Person, Recurrence, check_tz

_TZID = re.compile(r";TZID=(\"[^\"]*\"|[^;:]*)")


@dataclass(frozen=True)
class ReadCalendar:
    """What an .ics file holds for one person, checked and ready to store."""

    events: list[ImportedEvent]
    dropped: list[tuple[str, datetime | None]]  # keys of cancelled or free events: not busy (any more)
    problems: list[Skip] = field(default_factory=list)  # skipped: cannot be read
    warnings: list[Warned] = field(default_factory=list)  # read, but not quite as the file says it
    cancelled: int = 0
    transparent: int = 0
    no_length: int = 0  # a start and no end or duration: they take no time
    floating: int = 0  # events whose times had no zone, read in the owner's (or X-WR-TIMEZONE's)
    superseded: int = 0  # older copies of an event (lower SEQUENCE, earlier DTSTAMP)

    @property
    def recurring(self) -> int:
        return sum(1 for event in self.events if event.recurrence)

    @property
    def skipped(self) -> int:
        return self.cancelled + self.transparent + self.no_length + len(self.problems)


@dataclass
class _Candidate:
    """One VEVENT read: what kind it is, and the event it makes when it is busy time."""

    reading: Reading
    rid: datetime | None
    sequence: int
    stamp: datetime
    kind: str  # busy, cancelled, transparent, no_length
    event: ImportedEvent | None = None
    floating: bool = False


@dataclass
class _Calendar:
    floating_zone: str
    timezones: dict[str, Any]  # TZID -> its VTIMEZONE
    x_wr_timezone: str | None
    timezone_texts: dict[str, str] = field(default_factory=dict)  # TZID -> its VTIMEZONE's text, once made


def read_ics(text: str, *, name: str, owner: Person, person: Person, strict: bool = False) -> ReadCalendar:
    """Read every VEVENT of `text` as busy time for `person`.

    `name` is the file's name, for the messages. Floating times are read in the calendar's X-WR-TIMEZONE,
    else in `owner`'s zone; all-day events are whole days in `person`'s. A broken file is an IcsError;
    so is any unreadable event when `strict`.
    """
    lines, calendars, walked, warnings = parse(text, name)
    settings = [_settings(calendar, found, owner) for calendar, found in zip(calendars, walked, strict=True)]
    components = [(index, event) for index, found in enumerate(walked) for event in found if event.name == "VEVENT"]
    paired = lines.count == len(components)  # else cannot pair them up: say which event, not which line
    candidates: list[_Candidate] = []
    problems: list[Skip] = []
    for number, (index, component) in enumerate(components):
        vevent = number if paired else None
        reading = Reading(name, component, vevent, lines, settings[index].floating_zone, person.tz, index)
        try:
            candidate = _read_one(reading)
        except IcsError as exc:
            where, _, why = str(exc).partition(": event ")
            problems.append(Skip(where, "event " + why))
            continue
        candidates.append(candidate)
        if candidate.kind == "busy" and (reading.unknown_zones or reading.ignored):
            warnings.append(event_warning(reading))
    if strict and problems:
        more = len(problems) - 1
        also = (
            f" ({more} other event{'s' if more != 1 else ''} in the file {'has' if more == 1 else 'have'} problems too)"
        )
        raise IcsError(f"{problems[0]}{also if more else ''}")
    return _group(candidates, settings, person, problems, warnings)


def _settings(calendar: Any, walked: list[Any], owner: Person) -> _Calendar:
    x_wr = calendar.get("X-WR-TIMEZONE")
    zone = None
    if x_wr is not None:
        try:
            zone = check_tz(str(x_wr).strip())
        except CalendarError:
            zone = None  # an unknown X-WR-TIMEZONE is ignored: floating times stay the owner's
    timezones = {str(tz.get("TZID")): tz for tz in walked if tz.name == "VTIMEZONE"}
    return _Calendar(zone or owner.tz, timezones, zone)


def _read_one(reading: Reading) -> _Candidate:
    component = reading.component
    reading.uid = reading.uid_or_derived()
    for prop, message in component.errors:
        if prop in _NOT_BUSY_TIME:
            reading.ignored.append(prop)
            continue
        raw = reading.raw(prop) if prop else ""
        value = f" {raw!r}" if raw else ""
        hint = EXAMPLES.get(prop or "", "fix or remove it")
        raise reading.fail(prop, f"{prop or 'a line'}{value} cannot be read ({message}); {hint}")
    recurrence_id = reading.when("RECURRENCE-ID")
    rid = recurrence_id.moment if recurrence_id is not None else None
    props = reading.props
    candidate = _Candidate(reading, rid, _sequence(props), _stamp(props), "busy")
    if str(props.get("STATUS", "")).upper() == "CANCELLED":
        candidate.kind = "cancelled"
        return candidate
    if str(props.get("TRANSP", "")).upper() == "TRANSPARENT":
        candidate.kind = "transparent"
        return candidate
    start = reading.when("DTSTART")
    if start is None:
        raise reading.fail(
            None, "no DTSTART: every event needs a start, e.g. DTSTART;TZID=Europe/London:20260831T140000"
        )
    if props.get("DTEND") is not None and props.get("DURATION") is not None:
        raise reading.fail("DURATION", "it has both DTEND and DURATION; RFC 5545 allows one: remove the other")
    end = end_of(reading, start)
    if end is not None and end < start.moment:
        raise reading.fail(
            "DTEND",
            f"DTEND before DTSTART: it ends (DTEND {reading.raw('DTEND')!r}) before it starts "
            f"(DTSTART {reading.raw('DTSTART')!r})",
        )
    zone = start.zone or reading.floating_zone
    if rid is None:
        recurrence, periods, rules = _recurrence(reading, start.moment, start.is_date, zone)
    else:  # an override is the one occurrence it replaces: its own RRULE (if any) is not read, as the reference
        recurrence, periods, rules = _NO_RECURRENCE, [], []
    if end is None or end == start.moment:
        if not periods:
            candidate.kind = "no_length"
            return candidate
        end = start.moment + max(periods)  # the periods are the busy time; the row needs a length
    for rule in rules:
        try:
            check_rule(Recurrence(rule), start.moment, start.zone)
        except CalendarError as exc:
            raise reading.fail("RRULE", str(exc)) from None
    title = reading.summary or "Busy"
    here = key_in(str(props.get(HERE, ""))) or key_in(reading.uid)  # exported from this calendar, perhaps
    candidate.event = ImportedEvent(
        reading.uid, rid, title, start.moment, end, start.zone, start.is_date, recurrence, here=here
    )
    candidate.floating = start.floating
    return candidate


# Properties that do not bear on busy time: one that cannot be read is left out, not the event with it.
_NOT_BUSY_TIME = frozenset({"DTSTAMP", "CREATED", "LAST-MODIFIED"})


def _recurrence(
    reading: Reading, start: datetime, all_day: bool, zone: str
) -> tuple[Recurrence, list[timedelta], list[str]]:
    """What repeats it, the lengths of its RDATE periods, and each of its RRULEs.

    Several RRULEs (RFC 5545 deprecates them, but allows them) repeat it on their union: the stored
    components keep them all for the expansion; the event's row names the first."""
    props = reading.props
    found = props.get("RRULE")
    if found is None and "RDATE" not in props and "EXDATE" not in props:
        return _NO_RECURRENCE, [], []  # most events: nothing to read
    until_zone = reading.day_zone if all_day else zone  # a date UNTIL is a whole day in the person's zone
    given = [] if found is None else found if isinstance(found, list) else [found]
    rules = [normalised_rule(reading, rule, zone, until_zone) for rule in given]
    rdates = list(dates(reading, "RDATE", zone))
    exdates = [moment for moment, _ in dates(reading, "EXDATE", zone)]
    periods = [length for _, length in rdates if length is not None]
    first = rules[0] if rules else None
    return Recurrence(first, tuple(moment for moment, _ in rdates), tuple(exdates)), periods, rules


_NO_RECURRENCE = Recurrence()


def _sequence(component: Any) -> int:
    value = component.get("SEQUENCE")
    if value is None:  # most events
        return 0
    try:
        return int(str(value).strip() or 0)
    except ValueError:
        return 0


def _stamp(component: Any) -> datetime:
    """LAST-MODIFIED, else DTSTAMP, in UTC: which of two copies with one SEQUENCE is the later edit."""
    for prop in ("LAST-MODIFIED", "DTSTAMP"):
        value = component.get(prop)
        if value is None or isinstance(value, vBroken):  # absent, or cannot be read (then left out, warned)
            continue
        moment = getattr(value, "dt", None)
        if isinstance(moment, datetime):
            return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)
    return datetime.min.replace(tzinfo=UTC)


def _group(
    candidates: list[_Candidate],
    settings: list[_Calendar],
    person: Person,
    problems: list[Skip],
    warnings: list[Warned],
) -> ReadCalendar:
    counts = {"cancelled": 0, "transparent": 0, "no_length": 0, "floating": 0, "superseded": 0}
    events: list[ImportedEvent] = []
    dropped: list[tuple[str, datetime | None]] = []
    by_uid: dict[str, list[tuple[int, _Candidate]]] = {}
    for order, candidate in enumerate(candidates):
        by_uid.setdefault(candidate.reading.uid, []).append((order, candidate))
    for uid, found in by_uid.items():
        if len(found) == 1 and found[0][1].rid is None:  # the usual case: one copy of an event, no overrides
            cores, overrides = found, []
        else:
            cores = [(order, c) for order, c in found if c.rid is None]
            overrides = [c for _, c in found if c.rid is not None]
        if not cores:  # occurrences of a series the file does not hold: each is an event of its own
            for override in overrides:
                _take(override, events, dropped, counts, key=(uid, override.rid))
            continue
        counts["superseded"] += len(cores) - 1
        core = cores[0][1] if len(cores) == 1 else max(cores, key=_newest)[1]
        if core.event is None or not core.event.recurrence:
            edit = _edit_of_single(core, overrides) if overrides else core
            _take(edit, events, dropped, counts, key=(uid, None))
            continue
        counts["floating"] += core.floating
        events.append(core.event._replace(components=_components(core, overrides, settings, person)))
    return ReadCalendar(events, dropped, problems, warnings, **counts)


def _newest(item: tuple[int, _Candidate]) -> tuple[int, datetime, int]:
    """Which copy of an event wins: the highest SEQUENCE, then the latest stamp, then the last in the file."""
    order, candidate = item
    return candidate.sequence, candidate.stamp, order


def _take(
    candidate: _Candidate,
    events: list[ImportedEvent],
    dropped: list[tuple[str, datetime | None]],
    counts: dict[str, int],
    key: tuple[str, datetime | None],
) -> None:
    if candidate.event is None:
        counts[candidate.kind] += 1
        dropped.append(key)
        return
    counts["floating"] += candidate.floating
    event = candidate.event
    # Only an override taken as the event itself needs its key changed: a copy of the event.
    events.append(event if event.recurrence_id is key[1] else event._replace(recurrence_id=key[1]))


def _edit_of_single(core: _Candidate, overrides: list[_Candidate]) -> _Candidate:
    """An event that does not repeat, or the override of its one occurrence that is as new or newer."""
    start = core.event.start if core.event is not None else None
    edits = [o for o in overrides if o.rid == start and o.sequence >= core.sequence]
    return max(edits, key=lambda o: (o.sequence, o.stamp)) if edits else core


def _starting_at_its_recurrence_id(component: Any) -> Any:
    """A copy of an override that gives only its RECURRENCE-ID (a cancelled occurrence), with DTSTART too."""
    text = component.to_ical().decode()
    rid = next(line for line in text.splitlines() if line.upper().startswith("RECURRENCE-ID"))
    text = text.replace("END:VEVENT", "DTSTART" + rid[len("RECURRENCE-ID") :] + "\r\nEND:VEVENT")
    return icalendar.Event.from_ical(text)


def _components(
    core: _Candidate, overrides: list[_Candidate], settings: list[_Calendar], person: Person
) -> tuple[str, str, str]:
    """A VCALENDAR of the series: the VTIMEZONEs it uses, its master and its overrides; and its zones.

    Its text is what icalendar's `to_ical` of that calendar gives, put together from each member's own
    text (serialised once, and each VTIMEZONE once per file) instead of serialising the whole again.
    """
    calendar = _empty_calendar()
    members = []
    for member in [core, *overrides]:
        component = member.reading.component
        if component.get("DTSTART") is None and component.get("RECURRENCE-ID") is not None:
            component = _starting_at_its_recurrence_id(component)
        members.append((component, component.to_ical().decode()))
    used = {match.strip('"') for _, text in members for match in _TZID.findall(text)}
    own = settings[core.reading.calendar]
    parts = [_HEAD]
    added: set[str] = set()
    for tzid in sorted(used):
        for source in [own, *settings]:
            if tzid in source.timezones and tzid not in added:
                calendar.add_component(source.timezones[tzid])
                if tzid not in source.timezone_texts:
                    source.timezone_texts[tzid] = source.timezones[tzid].to_ical().decode()
                parts.append(source.timezone_texts[tzid])
                added.add(tzid)
    for component, text in members:
        calendar.add_component(component)
        parts.append(text)
    if own.x_wr_timezone is not None:
        import x_wr_timezone

        calendar = x_wr_timezone.to_standard(calendar, timezone=ZoneInfo(own.x_wr_timezone))
        whole: str = calendar.to_ical().decode()
    else:
        whole = "".join(parts) + "END:VCALENDAR\r\n"
    seed(whole, own.floating_zone, person.tz, calendar)  # storing it expands this very object: no second parse
    return whole, own.floating_zone, person.tz


def _empty_calendar() -> Any:
    calendar = icalendar.Calendar()
    calendar.add("prodid", "-//scheduler-agent//import//EN")
    calendar.add("version", "2.0")
    return calendar


# The lines icalendar writes for that calendar before its components (VERSION, then PRODID).
_HEAD = _empty_calendar().to_ical().decode().removesuffix("END:VCALENDAR\r\n")
