"""The calendar's values: people, events and their recurrence, as aware datetimes; and CalendarError.

Times are stored in UTC as `YYYY-MM-DDTHH:MM:SSZ`, so comparing the text compares the times. The owner is
the person keyed `you`. Errors a person (or the model) can fix are `CalendarError`, one actionable line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from functools import lru_cache
from typing import TYPE_CHECKING, Any, NamedTuple
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scheduler_agent.agent.errors import AgentError

OWNER_KEY = "you"
SET_OWNER_HINT = (
    "run `scheduler-agent calendar set-owner --name NAME --tz ZONE --hours 09:00-17:00`, "
    "or `scheduler-agent calendar seed-demo` for the demo calendar"
)

if TYPE_CHECKING:
    from sqlalchemy import Row
KEY_PATTERN = re.compile(r"[a-z0-9_-]{1,32}")
_HOURS = re.compile(r"\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*")
UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"
WEEKDAY_KEYS = ("mon", "tue", "wed", "thu", "fri")  # the days a person can work: the searches are Monday-Friday
MAX_BUFFER_MINUTES = 120

Hours = tuple[time, time]


class CalendarError(AgentError):
    """A problem a person can fix; the message is one line that says what to do."""


@dataclass(frozen=True)
class Person:
    """Someone with a calendar. `work_start`-`work_end` are their hours on every weekday, unless `days`
    says otherwise for a weekday (other hours, or None: not working); `days_off` are dates off; `buffer_minutes`
    is kept free before and after each of their meetings; `lunch` is a daily break."""

    key: str
    name: str
    tz: str
    work_start: time
    work_end: time
    days: tuple[tuple[int, Hours | None], ...] = ()  # (weekday 0-4, hours or None for a day off), sorted
    days_off: tuple[date, ...] = ()
    buffer_minutes: int = 0
    lunch: Hours | None = None

    @property
    def is_owner(self) -> bool:
        return self.key == OWNER_KEY

    @property
    def hours(self) -> str:
        """`09:00-17:00 Europe/London`."""
        return f"{self.work_start:%H:%M}-{self.work_end:%H:%M} {self.tz}"

    def hours_on(self, day: date) -> Hours | None:
        """Their working hours on `day` of their own calendar, or None when they do not work that day."""
        if day.weekday() >= len(WEEKDAY_KEYS) or day in self.days_off:
            return None
        return dict(self.days).get(day.weekday(), (self.work_start, self.work_end))

    @property
    def schedule(self) -> str:
        """`hours`, and whatever else shapes their days: `09:00-17:00 Europe/London; Fri off; lunch 12:30-13:30`."""
        parts = [self.hours]
        for weekday, hours in self.days:
            parts.append(f"{WEEKDAY_KEYS[weekday].title()} {format_hours(hours) if hours else 'off'}")
        if self.lunch is not None:
            parts.append(f"lunch {format_hours(self.lunch)}")
        if self.buffer_minutes:
            parts.append(f"{self.buffer_minutes}-minute buffer around meetings")
        if self.days_off:
            parts.append(f"off on {', '.join(day.isoformat() for day in self.days_off)}")
        return "; ".join(parts)


def format_hours(hours: Hours) -> str:
    return f"{hours[0]:%H:%M}-{hours[1]:%H:%M}"


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


class ImportedEvent(NamedTuple):
    """One event read from an .ics file, ready to store for one person.

    A tuple, as immutable as a frozen dataclass and made five times sooner (1 us): an import makes one an event.
    """

    uid: str
    recurrence_id: datetime | None  # set when it replaces one occurrence of the event with the same UID
    title: str
    start: datetime  # aware
    end: datetime
    tz: str | None
    all_day: bool = False
    recurrence: Recurrence = Recurrence()
    components: tuple[str, str, str] | None = None  # a series: its VCALENDAR text, floating zone, day zone
    here: str = ""  # the key of the event of this calendar it was exported from (`imports.event_key`), if any


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
    utc = moment.astimezone(UTC)
    if utc.year < 1000:  # glibc's %Y writes these years unpadded: kept as strftime has always written them
        return utc.strftime(UTC_FORMAT)
    # UTC_FORMAT's text, written 1.5 us sooner than by strftime (an import writes two an event): the date's and
    # the naive time's own isoformat, which leave out the offset that an aware isoformat formats (0.2 us more).
    return f"{utc.date().isoformat()}T{utc.time().isoformat()[:8]}Z"


def from_utc_text(text: str) -> datetime:
    if text.endswith("Z") and len(text) == 20:  # the stored form: fromisoformat is ~10x faster than strptime
        return datetime.fromisoformat(text)
    return datetime.strptime(text, UTC_FORMAT).replace(tzinfo=UTC)


def check_tz(tz: str) -> str:
    """`tz` spelled as the IANA name it names, matched case-insensitively (`europe/london` is Europe/London);
    else CalendarError, suggesting the nearest name when one is close."""
    try:
        ZoneInfo(tz)
        return tz
    except (ZoneInfoNotFoundError, ValueError):
        pass
    names = _zone_names()
    spelled = names.get(tz.strip().lower())
    if spelled is not None:
        return spelled
    import difflib

    near = difflib.get_close_matches(tz.strip().lower(), names, n=1)
    hint = f"did you mean {names[near[0]]}? Or use" if near else "use"
    raise CalendarError(f"time zone {tz!r} is unknown: {hint} an IANA name such as Europe/London or America/New_York")


@lru_cache(maxsize=1)
def _zone_names() -> dict[str, str]:
    """Every IANA zone name this system knows, by its lower-case spelling (read once, only for a miss)."""
    from zoneinfo import available_timezones

    return {name.lower(): name for name in available_timezones()}


def parse_hours(text: str, what: str = "working hours") -> tuple[time, time]:
    """`09:00-17:00` → (09:00, 17:00); raise CalendarError for anything else or an empty range.

    `what` names the range in the message: "working hours", or "lunch" (whose example is 12:00-13:00)."""
    match = _HOURS.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        start, end = (time.fromisoformat(part.zfill(5)) for part in match.groups())
    except ValueError:
        raise CalendarError(f"{what} {text!r} are not a range: use HH:MM-HH:MM, e.g. {_example(what)}") from None
    return check_hours(start, end, what)


def check_hours(start: time, end: time, what: str = "working hours") -> tuple[time, time]:
    if start.second or start.microsecond or end.second or end.microsecond:
        raise CalendarError(f"{what} {start}-{end} must be whole minutes, e.g. {_example(what)}")
    if start >= end:
        how = "are empty: they end as they start" if start == end else "end before they start"
        raise CalendarError(
            f"{what} {start:%H:%M}-{end:%H:%M} {how}: give the start first, within one day, e.g. {_example(what)}"
        )
    return start, end


def _example(what: str) -> str:
    return "12:00-13:00" if what == "lunch" else "09:00-17:00"


MAX_NAME = 100  # a person's name is printed in every list of who is known: 100 characters is a long one


def check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise CalendarError("the name is empty: give the person's full name, e.g. --name 'Priya Raman'")
    if len(cleaned) > MAX_NAME:
        raise CalendarError(
            f"the name {cleaned[:37]!r}... is {len(cleaned):,} characters long: give a name of at most {MAX_NAME}"
        )
    return cleaned


def parse_days(specs: list[str] | tuple[str, ...]) -> tuple[tuple[int, Hours | None], ...]:
    """`["fri=off", "mon=10:00-16:00"]` → ((0, (10:00, 16:00)), (4, None)); CalendarError for anything else."""
    days: dict[int, Hours | None] = {}
    for spec in specs:
        name, sep, value = spec.partition("=")
        key = name.strip().lower()[:3]
        if not sep or key not in WEEKDAY_KEYS:
            raise CalendarError(
                f"--day {spec!r} is not WEEKDAY=HOURS: use e.g. --day mon=10:00-16:00 or --day fri=off "
                f"(weekdays: {', '.join(WEEKDAY_KEYS)}; the calendar books Monday to Friday)"
            )
        days[WEEKDAY_KEYS.index(key)] = None if value.strip().lower() == "off" else parse_hours(value)
    return tuple(sorted(days.items()))


def days_text(days: tuple[tuple[int, Hours | None], ...]) -> str:
    """The stored form of `days`: `mon=10:00-16:00 fri=off`."""
    return " ".join(f"{WEEKDAY_KEYS[day]}={format_hours(hours) if hours else 'off'}" for day, hours in days)


def parse_dates_off(specs: list[str] | tuple[str, ...]) -> tuple[date, ...]:
    try:
        return tuple(sorted({date.fromisoformat(spec.strip()) for spec in specs}))
    except ValueError:
        raise CalendarError(f"--off {' '.join(specs)!r} must be dates as YYYY-MM-DD, e.g. --off 2026-09-04") from None


def check_buffer(minutes: int) -> int:
    if not 0 <= minutes <= MAX_BUFFER_MINUTES:
        raise CalendarError(
            f"buffer {minutes} is out of range: give 0 to {MAX_BUFFER_MINUTES} minutes, e.g. --buffer 10"
        )
    return minutes


PERSON_COLUMNS = ("key", "name", "tz", "work_start", "work_end", "days", "days_off", "buffer_minutes", "lunch")


def person_from_values(values: tuple[Any, ...]) -> Person:
    """The person of a `people` row read as PERSON_COLUMNS, in that order (a driver's tuple)."""
    return _person(PERSON_COLUMNS, tuple(values))


def person_from_row(row: Row[Any]) -> Person:
    """The person a `people` row stores. Parsed once per distinct row: every tool call reads the owner and
    the people, and a Person is frozen, so the same row gives the same (shared) Person."""
    return _person(row._fields, tuple(row))


@lru_cache(maxsize=256)
def _person(columns: tuple[str, ...], values: tuple[Any, ...]) -> Person:
    row = dict(zip((column.lower() for column in columns), values, strict=True))  # a row's names ignore case
    lunch = row.get("lunch") or ""
    return Person(
        key=row["key"],
        name=row["name"],
        tz=row["tz"],
        work_start=time.fromisoformat(row["work_start"]),
        work_end=time.fromisoformat(row["work_end"]),
        days=parse_days(row["days"].split()) if row.get("days") else (),
        days_off=parse_dates_off(row["days_off"].split()) if row.get("days_off") else (),
        buffer_minutes=int(row["buffer_minutes"]) if "buffer_minutes" in row else 0,
        lunch=parse_hours(lunch, "lunch") if lunch else None,
    )
