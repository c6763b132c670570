"""Repeating events: checked when stored, expanded by `recurring-ical-events` for the window asked about.

A repeating event is kept as iCalendar components (its master VEVENT, the overrides that carry a
RECURRENCE-ID, the VTIMEZONEs they use): what the file said, expanded by the field's reference library,
which follows RFC 5545 on RANGE=THISANDFUTURE, SEQUENCE, EXDATE/RDATE (periods too) and overrides. An
event made here (`add_event` with a `Recurrence`) is written as such a component first, so there is one
expansion for both. Parsed components are cached per process by a digest of their text.

One window may expand at most `WINDOW_CAP` occurrences of one series, and the walk from a series' start
to the window is bounded too: a rule that lists every BYHOUR, BYMINUTE and BYSECOND is refused with a
clear text instead of taking seconds. The library (and `icalendar`, ~50 ms) is imported only when
something repeats.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from datetime import UTC, date, datetime, time, timedelta
from functools import lru_cache
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.forward import forwarded
from scheduler_agent.calendar.types import CalendarError, Recurrence, to_utc_text

if TYPE_CHECKING:
    import icalendar

__all__ = [
    "CalendarError",
    "Occurrence",
    "TooManyOccurrences",
    "check_expandable",
    "check_rule",
    "expand",
    "occurrences",
    "seed",
    "series_text",
]
_NO_RULES_FINER_THAN = ("SECONDLY", "MINUTELY")
WINDOW_CAP = 2000  # occurrences of one series in one query window
WALK_CAP = 200_000  # occurrences the library may walk from a series' start to the window's end
FAST_FORWARD = True  # off only to compare with the walk from DTSTART (tests/test_recurrence_forward.py)
SEARCH_DAYS = 8  # the days a week's search expands (with the day the window's edges may reach into)
MAX_PER_DAY = WINDOW_CAP // SEARCH_DAYS  # the densest rule stored: any week of it can be searched


@dataclass(frozen=True)
class Occurrence:
    start: datetime  # aware, UTC
    end: datetime
    title: str


class TooManyOccurrences(CalendarError):
    """A series that would expand into more occurrences than a query window may hold."""


def check_rule(recurrence: Recurrence, start: datetime, tz: str | None) -> None:
    """Raise CalendarError unless `recurrence.rule` is an RRULE that can be expanded from `start`."""
    if recurrence.rule is None:
        return
    from dateutil.rrule import rrulestr  # only when a rule is stored or expanded

    rule = recurrence.rule
    parts = {part.split("=", 1)[0] for part in rule.upper().split(";")}
    if {"COUNT", "UNTIL"} <= parts:
        raise CalendarError(f"RRULE {rule!r} has both COUNT and UNTIL, which RFC 5545 forbids: keep one of them")
    frequency = re.search(r"(?:^|;)FREQ=([A-Z]+)", rule.upper())
    if frequency is not None and frequency.group(1) in _NO_RULES_FINER_THAN:
        raise CalendarError(
            f"RRULE {rule!r} repeats every {frequency.group(1).lower()[:-2]}: busy time can repeat "
            "hourly at most; give FREQ=HOURLY, DAILY, WEEKLY, MONTHLY or YEARLY"
        )
    _check_parts(rule)
    if (per_day := _per_day(rule)) > MAX_PER_DAY:  # else every week's search would refuse the person's calendar
        raise CalendarError(
            f"RRULE {rule!r} repeats up to {per_day:,} times a day, more than the {MAX_PER_DAY} a week's search "
            f"can expand ({WINDOW_CAP:,} occurrences of one series): give fewer BYHOUR, BYMINUTE or BYSECOND values"
        )
    try:
        parsed = rrulestr(rule, dtstart=start.astimezone(ZoneInfo(tz)) if tz else start)
        if any(part.startswith("BY") for part in parts):  # without a BYxxx part, DTSTART's own date fits it
            _check_it_occurs(rule, parsed)
    except (ValueError, TypeError, KeyError, IndexError, OverflowError) as exc:
        raise CalendarError(
            f"RRULE {rule!r} is not a recurrence rule dateutil can read ({exc or type(exc).__name__}): "
            "write it as RFC 5545 says, e.g. FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z"
        ) from None


def check_expandable(rule: str, start: date | datetime) -> None:
    """Raise CalendarError for a rule written elsewhere (an event a CalDAV server holds) that would keep the
    library expanding for ever or for minutes: INTERVAL=0, a value out of RFC 5545's range, a rule no date
    fits, one finer than hourly. What only concerns how it ends (UNTIL, COUNT) is left to the library."""
    _check_parts(rule)  # COUNT=0 among them
    bare = ";".join(part for part in rule.split(";") if part.split("=", 1)[0].upper() not in ("UNTIL", "COUNT"))
    moment = start if isinstance(start, datetime) else datetime.combine(start, time(0))
    check_rule(Recurrence(rule=bare), moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC), None)


# RFC 5545 3.3.10: each BYxxx part's values, as (lowest, highest) magnitudes and whether a sign is allowed.
_RANGES = {
    "BYSECOND": (0, 60, False),
    "BYMINUTE": (0, 59, False),
    "BYHOUR": (0, 23, False),
    "BYMONTHDAY": (1, 31, True),
    "BYYEARDAY": (1, 366, True),
    "BYWEEKNO": (1, 53, True),
    "BYMONTH": (1, 12, False),
    "BYSETPOS": (1, 366, True),
}
_NUMBER = re.compile(r"([+-]?)(\d{1,9})")
_WEEKDAY = re.compile(r"([+-]?)(\d{1,9})?(MO|TU|WE|TH|FR|SA|SU)")
PROBE_YEARS = 100  # how far at least a rule is walked to see that a date fits it


def _check_parts(rule: str) -> None:
    """RFC 5545's ranges: INTERVAL and COUNT positive (dateutil loops for ever on INTERVAL=0), each BYxxx
    value inside its range (dateutil walks to the year 9999 looking for a 40th day of the month)."""
    for part in rule.upper().split(";"):
        name, _, value = part.partition("=")
        if name in ("INTERVAL", "COUNT"):
            if not value.isdigit() or int(value) < 1:
                example = "INTERVAL=2 (every other one)" if name == "INTERVAL" else "COUNT=10 (ten occurrences)"
                raise CalendarError(
                    f"RRULE {rule!r} has {name}={value}: RFC 5545 says it is a positive whole number, e.g. {example}"
                )
        elif name in _RANGES:
            low, high, signed = _RANGES[name]
            for item in value.split(","):
                found = _NUMBER.fullmatch(item)
                if found is None or not low <= int(found.group(2)) <= high or (found.group(1) and not signed):
                    within = f"{low}..{high} or -{high}..-{low}" if signed else f"{low}..{high}"
                    raise CalendarError(f"RRULE {rule!r} has {name}={item}: RFC 5545 allows {within} only")
        elif name == "BYDAY":
            limit = 5 if "FREQ=MONTHLY" in rule.upper() or "BYMONTH=" in rule.upper() else 53
            for item in value.split(","):
                found = _WEEKDAY.fullmatch(item)
                if found is None or (found.group(2) is not None and not 1 <= int(found.group(2)) <= limit):
                    raise CalendarError(
                        f"RRULE {rule!r} has BYDAY={item}: give a day (MO, TU, WE, TH, FR, SA, SU), with a position "
                        f"from 1 to {limit} or -{limit} to -1 before it if you like, e.g. 2TU or -1FR"
                    )


def _check_it_occurs(rule: str, parsed: Any) -> None:
    """Refuse a rule no date fits (BYMONTH=2;BYMONTHDAY=30): dateutil walks to the year 9999 looking for one,
    UNTIL or not (it looks at UNTIL only when a date fits), seconds for every window asked about.

    The walk here is that walk from the same day 400 years on (the Gregorian calendar repeats every 400 years,
    weekdays and leap days alike) moved as close to 9999 as keeps `PROBE_YEARS` ahead: a bounded walk.
    """
    first = parsed._dtstart  # dateutil keeps it only there
    shift = max(0, -(-(9999 - PROBE_YEARS - 400 - first.year) // 400))
    probe = parsed.replace(dtstart=first.replace(year=first.year + 400 * shift), until=None, count=None)
    if next(iter(probe), None) is None:
        raise CalendarError(
            f"RRULE {rule!r} gives no date at all: no day fits all its parts together; give a rule some day fits, "
            "e.g. FREQ=MONTHLY;BYMONTHDAY=-1 for each month's last day"
        )


# --- components -------------------------------------------------------------------------------


def series_text(first: tuple[datetime, datetime], tz: str, recurrence: Recurrence, title: str = "Busy") -> str:
    """A VCALENDAR holding one VEVENT that repeats as `recurrence` says, in the wall-clock time of `tz`."""
    zone = ZoneInfo(tz)

    def local(moment: datetime) -> str:
        if tz == "UTC":
            return f":{moment.astimezone(UTC):%Y%m%dT%H%M%SZ}"
        return f";TZID={tz}:{moment.astimezone(zone):%Y%m%dT%H%M%S}"

    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//scheduler-agent//EN", "BEGIN:VEVENT", "UID:series"]
    lines += [f"SUMMARY:{_escape(title)}", f"DTSTART{local(first[0])}", f"DTEND{local(first[1])}"]
    if recurrence.rule is not None:
        lines.append(f"RRULE:{recurrence.rule}")
    lines += [f"RDATE{local(moment)}" for moment in recurrence.rdates]
    lines += [f"EXDATE{local(moment)}" for moment in recurrence.exdates]
    lines += ["END:VEVENT", "END:VCALENDAR"]
    return "\r\n".join(lines) + "\r\n"


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace(";", "\\;").replace(",", "\\,").replace("\n", "\\n")


def digest(components: str, zone: str, day_zone: str) -> str:
    """The parse cache's key for a series: its text and the zones it is read in."""
    import hashlib  # here: its OpenSSL binding costs ~3 ms of start-up, and `calendar show` never hashes

    return hashlib.sha256(f"{zone}\n{day_zone}\n{components}".encode()).hexdigest()[:24]


@dataclass(frozen=True)
class _Parsed:
    calendar: icalendar.Calendar
    query: Any  # recurring_ical_events' query over `calendar`
    first: tuple[datetime, datetime] | None  # the master's own DTSTART-DTEND, resolved
    overridden: frozenset[datetime]  # the RECURRENCE-IDs the file's overrides carry, in UTC
    rules: tuple[tuple[str, datetime], ...]  # each RRULE and the DTSTART it runs from (for the caps)


_seeds: dict[str, Any] = {}  # digest -> the icalendar.Calendar that `components` is the text of
SEED_CAP = 50_000


def seed(components: str, zone: str, day_zone: str, calendar: icalendar.Calendar) -> None:
    """Hand over `calendar`, already parsed, whose text is `components` (the importer built it from the file's
    own parse), so the first expansion of that series does not parse the text again. Used once, then dropped."""
    if len(_seeds) >= SEED_CAP:  # never stored (an import that failed): do not keep them for ever
        _seeds.clear()
    _seeds[digest(components, zone, day_zone)] = calendar


@lru_cache(maxsize=4096)
def _parse(version: str, components: str, zone: str, day_zone: str) -> _Parsed:
    import icalendar
    import recurring_ical_events

    calendar: Any = _seeds.pop(version, None) or icalendar.Calendar.from_ical(components)
    first = None
    rules: list[tuple[str, datetime]] = []
    overridden: set[datetime] = set()
    vevent: Any
    for vevent in calendar.walk("VEVENT"):
        if vevent.get("RECURRENCE-ID") is not None:
            overridden.add(_moment(vevent["RECURRENCE-ID"].dt, zone, day_zone).astimezone(UTC))
        start_value = vevent.get("DTSTART")
        if start_value is None:
            continue
        begins = _moment(start_value.dt, zone, day_zone)
        found = vevent.get("RRULE")
        for rule in found if isinstance(found, list) else [found]:
            if rule is not None:
                rules.append((rule.to_ical().decode(), begins))
        if vevent.get("RECURRENCE-ID") is None and first is None:
            end_value = vevent.get("DTEND")
            if end_value is not None:
                first = (begins, _moment(end_value.dt, zone, day_zone))
    query = recurring_ical_events.of(calendar, components=[_selection()])
    return _Parsed(calendar, query, first, frozenset(overridden), tuple(rules))


@lru_cache(maxsize=1)
def _selection() -> Any:
    """VEVENTs whose occurrences come back as (start, end, source component), not as copied components.

    The library's `occurrence=` extension point: copying a component per occurrence was 70% of an
    expansion's time (a three-year horizon of a daily series: 0.15 s). Falls back to the library's own
    component if its occurrence ever stops carrying the source.
    """
    from recurring_ical_events.occurrence import Occurrence as LibraryOccurrence
    from recurring_ical_events.selection.name import ComponentsWithName

    class Light(LibraryOccurrence):  # type: ignore[misc]
        def as_component(self, keep_recurrence_attributes: bool) -> Any:
            source = getattr(getattr(self, "_adapter", None), "_component", None)
            if source is None:
                return super().as_component(keep_recurrence_attributes)
            return _Found(self.start, self.end, source)

    return ComponentsWithName("VEVENT", occurrence=Light)


@dataclass(frozen=True)
class _Found:
    start: date | datetime
    end: date | datetime
    source: Any  # the master or override it comes from


def _moment(value: date | datetime, zone: str, day_zone: str) -> datetime:
    """A DTSTART/DTEND value as an aware datetime: floating in `zone`, a date at midnight in `day_zone`."""
    if isinstance(value, datetime):
        return value if value.tzinfo is not None else value.replace(tzinfo=ZoneInfo(zone))
    return datetime.combine(value, time(0), ZoneInfo(day_zone))


def _per_day(rule: str) -> int:
    """How many times a day `rule` can repeat at most (from its FREQ and its BYHOUR/BYMINUTE/BYSECOND lists)."""
    parts = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    frequency = parts.get("FREQ", "DAILY")
    finer = ("HOURLY", "MINUTELY", "SECONDLY")

    def count(name: str, default: int, when: tuple[str, ...]) -> int:
        if name in parts:
            return len(parts[name].split(","))
        return default if frequency in when else 1

    hours = count("BYHOUR", 24, finer)
    minutes = count("BYMINUTE", 60, finer[1:])
    seconds = count("BYSECOND", 60, finer[2:])
    return hours * minutes * seconds


def _check_caps(parsed: _Parsed, start: datetime, end: datetime, cap: int) -> None:
    for rule, begins in parsed.rules:
        per_day = _per_day(rule)
        window_days = max((end - max(start, begins)).total_seconds() / 86400, 0) + 1  # none before it begins
        if per_day * window_days > cap:
            raise TooManyOccurrences(
                f"its RRULE {rule!r} repeats up to {per_day:,} times a day, more than the {cap:,} "
                "occurrences one window may hold: busy time can repeat hourly at most"
            )
        walked_days = max((end - begins).total_seconds() / 86400, 0) + 1
        count = re.search(r"(?:^|;)COUNT=(\d+)", rule.upper())
        if per_day * walked_days > WALK_CAP and (count is None or int(count.group(1)) > WALK_CAP):
            raise TooManyOccurrences(
                f"its RRULE {rule!r} (from {to_utc_text(begins)}) would be walked through more than "
                f"{WALK_CAP:,} occurrences to reach this window: give it a later DTSTART or a coarser rule"
            )


def expand(
    components: str,
    zone: str,
    day_zone: str,
    start: datetime,
    end: datetime,
    first: tuple[datetime, datetime] | None = None,
    cap: int = WINDOW_CAP,
) -> list[Occurrence]:
    """The occurrences of the series in `components` that overlap [start, end), by start, in UTC.

    Floating times are read in `zone`, dates as whole days in `day_zone`. Cancelled or transparent
    occurrences are not busy and are left out. `first` is the first occurrence exactly as stored (an
    end in the repeated hour of a change of the clocks is ambiguous in local text). Raises
    TooManyOccurrences past the caps.
    """
    version = digest(components, zone, day_zone)
    parsed = _parse(version, components, zone, day_zone)
    if first is not None and parsed.first is not None:  # a master with no length keeps none
        parsed = replace(parsed, first=first)
    _check_caps(parsed, start, end, cap)
    found: list[Occurrence] = []
    # A day earlier too: the library ends an occurrence by wall-clock length, the first as stored may
    # end later than that (across a change of the clocks), and it is this module that decides the overlap.
    # A day later too: the library compares a whole day (a date) with the window's end as if both were in
    # one zone, so an all-day occurrence that begins before the end in a zone ahead of UTC (Friday in
    # London begins 23:00 UTC on Thursday) was left out of a window ending at midnight UTC.
    for component in _query(parsed, start).between(start - timedelta(days=1), end + timedelta(days=1)):
        occurrence = _occurrence(component, parsed, zone, day_zone)
        if occurrence is not None and occurrence.end > start and occurrence.start < end:
            found.append(occurrence)
        if len(found) > cap:
            raise TooManyOccurrences(f"it gives more than {cap:,} occurrences in one window")
    return sorted(found, key=lambda occurrence: (occurrence.start, occurrence.end))


def _query(parsed: _Parsed, start: datetime) -> Any:
    """The library's query over the series, begun near `start` when the walk from its DTSTART is long
    (calendar/forward.py): the same occurrences from `start` on."""
    if not FAST_FORWARD:
        return parsed.query
    moved = forwarded(parsed.calendar, parsed.rules, start)
    if moved is None:
        return parsed.query
    import recurring_ical_events

    return recurring_ical_events.of(moved, components=[_selection()])


def _occurrence(found: Any, parsed: _Parsed, zone: str, day_zone: str) -> Occurrence | None:
    if isinstance(found, _Found):
        source, value, end_value = found.source, found.start, found.end
    else:  # a component from the library
        source, value = found, found["DTSTART"].dt
        end_value = found["DTEND"].dt if found.get("DTEND") is not None else value
    if str(source.get("STATUS", "")).upper() == "CANCELLED":
        return None
    if str(source.get("TRANSP", "")).upper() == "TRANSPARENT":
        return None
    begins = _moment(value, zone, day_zone)
    ends = _moment(end_value, zone, day_zone)
    first = parsed.first
    if first is not None and begins == first[0] and first[0].astimezone(UTC) not in parsed.overridden:
        ends = first[1]  # the first occurrence is DTSTART-DTEND exactly, as stored
    elif ends <= begins and first is not None:
        ends = begins.astimezone(UTC) + (first[1] - first[0])  # a length the clocks swallowed: the real one
    if ends <= begins:
        return None
    title = " ".join(str(source.get("SUMMARY", "")).split()) or "Busy"
    return Occurrence(begins.astimezone(UTC), ends.astimezone(UTC), title)


def occurrences(
    first: tuple[datetime, datetime], tz: str, recurrence: Recurrence, start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    """The occurrences, as UTC (start, end), of an event first held at `first` that repeats as `recurrence`
    says in the wall-clock time of `tz`, and overlap [start, end).

    Each occurrence lasts as long on the wall clock as the first (a 09:00-10:00 stays 09:00-10:00
    across a daylight-saving change). Only the range asked about is produced.
    """
    found = expand(series_text(first, tz, recurrence), tz, tz, start, end, first)
    return [(occurrence.start, occurrence.end) for occurrence in found]
