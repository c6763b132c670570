"""One VEVENT's values as aware times: DTSTART/DTEND/DURATION, RRULE, RDATE and EXDATE, each checked.

Times keep their zone: `TZID=` (a VTIMEZONE of the file, whatever its name, else an IANA name or a
Windows one mapped by `icalendar.timezone.windows_to_olson`), UTC (`Z`), floating (no zone: read in the
calendar's X-WR-TIMEZONE, else the owner's), all-day (`VALUE=DATE`: the whole day in the person's zone).
A TZID that is none of these (`FOO`, `GMT-05.00/-04.00`) is read as floating time, with no offset guessed
from its name, and named (`Reading.unknown_zones`) for a warning. A value that cannot be read is an
IcsError naming the event and the line.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time, timedelta, tzinfo
from typing import Any, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import icalendar
from icalendar.timezone.windows_to_olson import WINDOWS_TO_OLSON

from scheduler_agent.calendar.clock import FIRST_YEAR, LAST_YEAR
from scheduler_agent.calendar.ics.scan import IcsError, Lines, property_name

_IGNORED_FOR_UID = {"DTSTAMP", "LAST-MODIFIED", "CREATED", "SEQUENCE"}

EXAMPLES = {
    "DTSTART": "write it like 20260831T140000 (with TZID=Zone), 20260831T130000Z (UTC) or 20260831 (all day)",
    "DTEND": "write it like 20260831T150000 (with TZID=Zone), 20260831T140000Z (UTC) or 20260901 (all day)",
    "DURATION": "write it like PT1H30M or P1D",
    "RRULE": "write it like FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z",
    "EXDATE": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
    "RDATE": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
    "RECURRENCE-ID": "write it like 20260907T140000 (with TZID=Zone) or 20260907T130000Z",
}


# The times an event may have: the calendar's years (calendar/clock.py), in UTC.
EARLIEST = datetime(FIRST_YEAR, 1, 1, tzinfo=UTC)
LATEST = datetime(LAST_YEAR + 1, 1, 1, tzinfo=UTC)


def outside(moment: datetime) -> bool:
    """Whether `moment` (aware) falls outside [EARLIEST, LATEST), or cannot even be put in UTC."""
    if FIRST_YEAR < moment.year < LAST_YEAR:  # a zone is less than a day from UTC: the usual case, at a glance
        return False
    try:
        return not EARLIEST <= moment.astimezone(UTC) < LATEST
    except OverflowError:  # 9999-12-31 in New York is the year 10000 in UTC
        return True


class When(NamedTuple):  # a tuple: made two or three times an event, four times sooner than a frozen dataclass
    moment: datetime  # aware
    is_date: bool
    zone: str | None  # its IANA zone; None for a zone defined only in the file
    floating: bool = False


@dataclass
class Reading:
    """One VEVENT being read, and where it is, for the messages."""

    name: str
    component: Any  # an icalendar Event
    vevent: int | None  # which VEVENT of the file it is (from 0), when known
    lines: Lines
    floating_zone: str  # the calendar's X-WR-TIMEZONE, else the owner's zone
    day_zone: str  # the person's zone: dates are whole days there
    calendar: int = 0  # which VCALENDAR of the file it is in
    uid: str = ""
    # TZIDs defined nowhere, neither IANA nor Windows names: read as floating time, and named in a warning
    unknown_zones: list[str] = field(default_factory=list)
    ignored: list[str] = field(default_factory=list)  # properties that cannot be read and do not bear on busy time
    props: dict[str, Any] = field(init=False, repr=False)  # the component's properties, by upper-case name

    def __post_init__(self) -> None:
        # A plain dict of what the component holds: icalendar's own `get` upper-cases the name and raises and
        # catches a KeyError for each property an event lacks, about 4 us a call, 15 calls an event. Its keys
        # are upper-case already: icalendar's CaselessDict stores every key so.
        self.props = dict(dict.items(self.component))

    @property
    def summary(self) -> str:
        return " ".join(str(self.props.get("SUMMARY", "")).split())

    @property
    def line(self) -> int | None:
        """The line of its BEGIN:VEVENT."""
        return None if self.vevent is None else self.lines.line(self.vevent)

    def where(self, prop: str | None = None) -> str:
        found = self.lines.find(self.vevent, prop) if prop is not None and self.vevent is not None else None
        line = found[0] if found is not None else self.line
        place = f"{self.name} line {line}" if line is not None else self.name
        title = repr(self.summary) if self.summary else "(no SUMMARY)"
        uid = f" (UID {self.uid})" if self.uid else " (no UID)"
        return f"{place}: event {title}{uid}"

    def raw(self, prop: str) -> str:
        found = self.lines.find(self.vevent, prop) if self.vevent is not None else None
        return found[1] if found is not None else ""

    def fail(self, prop: str | None, problem: str) -> IcsError:
        return IcsError(f"{self.where(prop)}: {problem}")

    def when(self, prop: str, zone: str | None = None) -> When | None:
        """The property as a When, or None when absent; floating values are read in `zone`."""
        value = self.props.get(prop)
        if value is None:
            return None
        if isinstance(value, list):
            raise self.fail(prop, f"{prop} appears {len(value)} times; keep one")
        return self.resolve(prop, value.dt, _tzid(value.params), zone or self.floating_zone)

    def resolve(self, prop: str, moment: object, tzid: str | None, zone: str) -> When:
        """A date or date-time value: a date is midnight in the person's zone; a floating time is
        wall-clock time in `zone`; a TZID icalendar does not know (it leaves those naive) is an error;
        so is a time outside the years 1000 to 9998."""
        when = self._resolve(prop, moment, tzid, zone)
        if outside(when.moment):
            raise self.out_of_range(prop, f"{prop} {self.raw(prop)!r} is")
        return when

    def out_of_range(self, prop: str, what: str) -> IcsError:
        return self.fail(
            prop,
            f"{what} outside the years {EARLIEST.year} to {LATEST.year - 1} a calendar here can hold; "
            f"{EXAMPLES.get(prop, 'give a time inside them')}",
        )

    def _resolve(self, prop: str, moment: object, tzid: str | None, zone: str) -> When:
        if isinstance(moment, datetime):
            if moment.tzinfo is None:
                known = _known_zone(tzid) if tzid else None
                if known is not None:
                    return When(moment.replace(tzinfo=ZoneInfo(known)), False, known)
                if not tzid:
                    return When(moment.replace(tzinfo=ZoneInfo(zone)), False, zone, True)
                if tzid not in self.unknown_zones:  # read as floating time, and named in a warning
                    self.unknown_zones.append(tzid)
                return When(moment.replace(tzinfo=ZoneInfo(zone)), False, zone)
            return When(moment, False, zone_name(moment.tzinfo))
        if isinstance(moment, date):
            return When(datetime.combine(moment, time(0), ZoneInfo(self.day_zone)), True, self.day_zone)
        raise self.fail(prop, f"{prop} {self.raw(prop)!r} is not a date or a date-time; {EXAMPLES.get(prop, '')}")

    def uid_or_derived(self) -> str:
        """Its UID, or one derived from what it says (so the same file maps to the same UIDs)."""
        uid = " ".join(str(self.props.get("UID", "")).split())
        if uid:
            return uid
        if self.vevent is None:
            lines = self.component.to_ical().decode().splitlines()
        else:
            lines = [line for _, line in self.lines.of(self.vevent)]
        parts = [line for line in lines if property_name(line) not in _IGNORED_FOR_UID]
        return "no-uid-" + hashlib.sha256("\n".join(parts).encode()).hexdigest()[:16]


def _known_zone(tzid: str) -> str | None:
    """The IANA zone a TZID icalendar left unresolved names after all: an IANA or Windows name with spaces
    around it, or a Windows name (`icalendar.timezone.windows_to_olson`); None for a name that is neither."""
    name = tzid.strip()
    mapped = WINDOWS_TO_OLSON.get(name, name)
    try:
        ZoneInfo(mapped)
    except (ValueError, ZoneInfoNotFoundError):  # ValueError: a name ZoneInfo cannot take (a path, ..)
        return None
    return mapped


def _tzid(params: Any) -> str | None:
    """A value's TZID parameter: read as from a plain dict, which icalendar's parameters are with upper-case
    keys (its own `get` upper-cases the name again, 1 us, two calls an event)."""
    found: str | None = dict.get(params, "TZID")
    return found


def zone_name(zone: tzinfo | None) -> str | None:
    """The IANA name of `zone`, 'UTC' for UTC, None for a zone defined only in the file."""
    if isinstance(zone, ZoneInfo):
        return zone.key
    if zone is UTC:
        return "UTC"
    return None


def end_of(reading: Reading, start: When) -> datetime | None:
    """The end from DTEND or DURATION; one day for an all-day event with neither; None for no length.

    A floating DTEND is read in DTSTART's zone, and a DURATION's days are days on its clock.
    """
    ended = reading.when("DTEND", start.zone or reading.floating_zone)
    if ended is not None:
        if ended.is_date != start.is_date:
            kinds = ("a date", "a date-time") if start.is_date else ("a date-time", "a date")
            raise reading.fail("DTEND", f"DTSTART is {kinds[0]} but DTEND is {kinds[1]}: give both the same kind")
        return ended.moment
    duration = reading.props.get("DURATION")
    if duration is None:
        if not start.is_date:
            return None
        ends = start.moment + timedelta(days=1)  # wall-clock: to the next midnight
        if outside(ends):
            raise reading.out_of_range("DTSTART", f"the day DTSTART {reading.raw('DTSTART')!r} ends")
        return ends
    length = duration.dt
    if not isinstance(length, timedelta):
        raise reading.fail("DURATION", f"DURATION {reading.raw('DURATION')!r} is not a length; write it like PT1H30M")
    if length < timedelta(0):
        raise reading.fail("DURATION", f"DURATION {reading.raw('DURATION')!r} is negative; write it like PT1H30M")
    finish: datetime | None
    try:
        finish = _after(start.moment, length)
    except OverflowError:  # P99999999W: past the year 9999
        finish = None
    if finish is None or outside(finish):
        raise reading.out_of_range("DURATION", f"DURATION {reading.raw('DURATION')!r} ends it")
    return finish


def _after(moment: datetime, length: timedelta) -> datetime:
    name = zone_name(moment.tzinfo)
    if name is None or name == "UTC":
        return moment.astimezone(UTC) + length
    local = ZoneInfo(name)
    # A day of DURATION is a day on the wall clock (RFC 5545 3.3.6); hours are exact.
    days = timedelta(days=length.days)
    on_the_day = (moment.astimezone(local).replace(tzinfo=None) + days).replace(tzinfo=local)
    return on_the_day.astimezone(UTC) + (length - days)  # hours are real ones: add them in UTC


def normalised_rule(reading: Reading, rule: Any, zone: str, day_zone: str) -> str:
    """The RRULE's text with UNTIL in UTC (dateutil wants it so for an aware start)."""
    until = rule.get("UNTIL")
    if until:
        value = until[0]
        if isinstance(value, datetime):
            moment = value if value.tzinfo is not None else value.replace(tzinfo=ZoneInfo(zone))
        else:  # a date: every occurrence starting on that day counts
            moment = datetime.combine(value, time(23, 59, 59), ZoneInfo(day_zone))
        if outside(moment):  # an UNTIL past the times an event may have: the same rule with the limit
            moment = EARLIEST if moment.year <= EARLIEST.year else LATEST
        rule = icalendar.prop.vRecur(rule)
        rule["UNTIL"] = [moment.astimezone(UTC)]
    text: str = rule.to_ical().decode()
    if not text.strip():
        raise reading.fail("RRULE", f"RRULE {reading.raw('RRULE')!r} is not a recurrence rule; {EXAMPLES['RRULE']}")
    return text


def dates(reading: Reading, prop: str, zone: str) -> Iterator[tuple[datetime, timedelta | None]]:
    """Each RDATE/EXDATE start, aware, with the length of a period (VALUE=PERIOD), else None."""
    values = reading.props.get(prop)
    if values is None:
        return
    for value_list in values if isinstance(values, list) else [values]:
        tzid = _tzid(value_list.params)
        for value in value_list.dts:
            moment, length = value.dt, None
            if isinstance(moment, tuple):
                if prop != "RDATE":
                    raise reading.fail(prop, f"{prop} {reading.raw(prop)!r} is a period: give start times only")
                moment, second = moment
                length = second if isinstance(second, timedelta) else second - moment
            when = reading.resolve(prop, moment, _tzid(value.params) or tzid, zone)
            if length is not None:
                try:
                    beyond = outside(when.moment + length)
                except OverflowError:
                    beyond = True
                if beyond:
                    raise reading.out_of_range(prop, f"the period {prop} {reading.raw(prop)!r} ends")
            yield when.moment, length
