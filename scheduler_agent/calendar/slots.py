"""Free windows for the owner and one or more people in a week: pure functions on aware datetimes, no database.

Everyone's working hours are wall-clock times in their own time zone, Monday to Friday of
their own calendar (per weekday, less days off and a lunch break, when they have them).
Each working day becomes a real (UTC) interval, so a daylight-saving
change on either side moves the overlap exactly as it does in life; the intervals are
intersected, the busy ones subtracted, and the result is shown in the owner's time zone.
"""

from __future__ import annotations

import enum
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.types import Event, Person

Interval = tuple[datetime, datetime]  # [start, end), aware

ROUNDING = timedelta(minutes=5)
WEEKDAYS = 5  # Monday to Friday


class NoWindowsReason(enum.Enum):
    """Why a week has no window, from the most to the least fundamental."""

    NO_SHARED_HOURS = "their working hours never overlap"
    SHARED_HOURS_TOO_SHORT = "their working hours overlap, but never for that long"
    WEEK_OVER = "the shared working hours of that week are over"
    FULLY_BOOKED = "no free stretch of that week is long enough"


@dataclass(frozen=True)
class SlotSearch:
    """The answer for one week: the windows, or why there are none."""

    monday: date
    tz: str  # the owner's: the days of the week and the formatting
    minutes: int
    windows: list[Interval]
    shared_hours: list[Interval]  # both at work, Monday to Friday, before subtracting events
    searched_from: datetime | None  # the rounded "now" when it fell inside the week, else None
    reason: NoWindowsReason | None  # None exactly when there are windows
    longest_free: Interval | None = None  # the longest free stretch from now on, however short

    @property
    def longest_shared_minutes(self) -> int:
        return max((minutes_of(interval) for interval in self.shared_hours), default=0)


def monday_of(day: date) -> date:
    return day - timedelta(days=day.weekday())


def local_span(first: date, last: date, tz: str) -> Interval:
    """From `first` 00:00 to the day after `last` 00:00, local to `tz`, as UTC."""
    zone = ZoneInfo(tz)
    start = datetime.combine(first, datetime.min.time(), tzinfo=zone)
    end = datetime.combine(last + timedelta(days=1), datetime.min.time(), tzinfo=zone)
    return start.astimezone(UTC), end.astimezone(UTC)


def week_span(monday: date, tz: str) -> Interval:
    """Monday 00:00 to Saturday 00:00 in `tz`, as UTC: where a week's windows can lie."""
    return local_span(monday, monday + timedelta(days=WEEKDAYS - 1), tz)


def working_hours(person: Person, first: date, last: date) -> list[Interval]:
    """`person`'s working hours on each day from `first` to `last` of their own calendar they work, in UTC,
    with their lunch break cut out."""
    zone = ZoneInfo(person.tz)
    intervals: list[Interval] = []
    day = first
    while day <= last:
        hours = person.hours_on(day)
        if hours is not None:
            start = datetime.combine(day, hours[0], tzinfo=zone).astimezone(UTC)
            end = datetime.combine(day, hours[1], tzinfo=zone).astimezone(UTC)
            day_hours = [(start, end)]
            if person.lunch is not None:
                lunch = tuple(datetime.combine(day, moment, tzinfo=zone).astimezone(UTC) for moment in person.lunch)
                day_hours = subtract(day_hours, [(lunch[0], lunch[1])])
            intervals += day_hours
        day += timedelta(days=1)
    return intervals


def shared_working_hours(owner: Person, person: Person | Sequence[Person], first: date, last: date) -> list[Interval]:
    """When all of them work, on the owner's weekdays from `first` to `last` (the owner's calendar)."""
    shared = working_hours(owner, first, last)
    for other in [person] if isinstance(person, Person) else person:
        # Another person's calendar day can differ from the owner's by up to two days (UTC-12 vs +14).
        shared = intersect(shared, working_hours(other, first - timedelta(days=2), last + timedelta(days=2)))
    return shared


def intersect(a: Sequence[Interval], b: Sequence[Interval]) -> list[Interval]:
    """The parts of time in both lists (each sorted, without overlaps of its own)."""
    result = []
    for a_start, a_end in a:
        for b_start, b_end in b:
            if a_start < b_end and b_start < a_end:  # else max(starts) >= min(ends): nothing in both
                # max() and min() of the pair, as they choose between equal times: the first
                start = a_start if a_start >= b_start else b_start
                end = a_end if a_end <= b_end else b_end
                if start < end:
                    result.append((start, end))
    return sorted(result)


def subtract(free: Sequence[Interval], busy: Iterable[Interval]) -> list[Interval]:
    """`free` (non-empty intervals) with every busy interval cut out, in `free`'s order.

    The busy intervals are sorted and merged once (those that overlap or touch), and each free interval
    cut by the few that reach it, found by bisection: a week of a busy calendar has a hundred of them, and
    cutting each free piece by each one was the free-slot search's largest cost.
    """
    merged = _merged(busy)
    if not merged:
        return list(free)
    ends = [end for _, end in merged]
    result: list[Interval] = []
    for start, end in free:
        index = bisect_right(ends, start)  # the first busy interval that ends after this one starts
        if index == len(merged) or merged[index][0] >= end:
            result.append((start, end))  # nothing busy in it
            continue
        for busy_start, busy_end in merged[index:]:
            if busy_start >= end:
                break
            if start < busy_start:
                result.append((start, busy_start))
            start = busy_end
        if start < end:
            result.append((start, end))
    return result


def _merged(busy: Iterable[Interval]) -> list[Interval]:
    """`busy` sorted, with the intervals that overlap or touch made one (an empty one still cuts where it is)."""
    merged: list[Interval] = []
    for start, end in sorted(busy):
        if merged and start <= merged[-1][1]:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


def outside_hours(person: Person, events: Iterable[Event]) -> list[Event]:
    """The events (or occurrences) of which some part falls outside `person`'s working hours (lunch included)."""
    zone = ZoneInfo(person.tz)
    outside = []
    for event in events:
        first, last = event.start.astimezone(zone).date(), event.end.astimezone(zone).date()
        if subtract([(event.start, event.end)], working_hours(person, first, last)):
            outside.append(event)
    return outside


def round_up(moment: datetime, step: timedelta = ROUNDING) -> datetime:
    """The first multiple of `step` (counted from the epoch, so whole minutes) at or after `moment`."""
    seconds = step.total_seconds()
    timestamp = moment.timestamp()
    rounded = -(-timestamp // seconds) * seconds
    return datetime.fromtimestamp(rounded, UTC)


def free_windows(
    owner: Person,
    person: Person | Sequence[Person],
    busy: Iterable[Interval],
    week: date,
    minutes: int,
    now: datetime,
) -> SlotSearch:
    """Windows of at least `minutes`, Monday to Friday of the week holding `week` (owner's calendar),
    inside everyone's working hours, outside every busy interval, and not before `now`.

    `busy` is everyone's events (each widened by its person's buffer), and the times the owner's rules
    close. A window that has begun is clipped to start at `now`
    rounded up to the next 5 minutes.
    """
    monday = monday_of(week)
    length = timedelta(minutes=minutes)
    shared = shared_working_hours(owner, person, monday, monday + timedelta(days=WEEKDAYS - 1))
    start_at = round_up(now)
    week_start, week_end = week_span(monday, owner.tz)
    searched_from = start_at if week_start < start_at < week_end else None

    def from_now(intervals: Iterable[Interval]) -> list[Interval]:
        clipped = ((max(start, start_at), end) for start, end in intervals)
        return [(start, end) for start, end in clipped if start < end]

    free = from_now(subtract(shared, busy))
    windows = [(start, end) for start, end in free if end - start >= length]
    longest = max(free, key=lambda interval: interval[1] - interval[0], default=None)
    reason = None
    if not windows:
        if not shared:
            reason = NoWindowsReason.NO_SHARED_HOURS
        elif max(end - start for start, end in shared) < length:
            reason = NoWindowsReason.SHARED_HOURS_TOO_SHORT
        elif not any(end - start >= length for start, end in from_now(shared)):
            reason = NoWindowsReason.WEEK_OVER
        else:
            reason = NoWindowsReason.FULLY_BOOKED
    return SlotSearch(monday, owner.tz, minutes, windows, shared, searched_from, reason, longest)


def minutes_of(interval: Interval) -> int:
    """The length of `interval` in whole minutes."""
    return int((interval[1] - interval[0]).total_seconds() // 60)


# --- formatting, always in one named time zone ----------------------------------------------


def format_day(day: date) -> str:
    """`Mon 2026-08-31`."""
    return f"{day:%a %Y-%m-%d}"


def format_moment(moment: datetime, tz: str) -> str:
    """`Thu 2026-08-27 09:00`, wall-clock time in `tz`."""
    return _day_and_time(moment.astimezone(ZoneInfo(tz)))


def format_window(window: Interval, tz: str) -> str:
    """`Mon 2026-08-31 14:00-15:00`, wall-clock times in `tz` (a window never spans midnight there)."""
    zone = ZoneInfo(tz)
    start, end = window[0].astimezone(zone), window[1].astimezone(zone)
    if start.date() == end.date() or end.time() == datetime.min.time():
        return f"{_day_and_time(start)}-{_time(end)}"
    return f"{_day_and_time(start)}-{_day_and_time(end)}"


def format_span(window: Interval, tz: str) -> str:
    """`14:00-15:00`, the times only."""
    zone = ZoneInfo(tz)
    return f"{_time(window[0].astimezone(zone))}-{_time(window[1].astimezone(zone))}"


_DAY_NAMES = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")  # strftime's %a, as Python's C locale writes it


def _day_and_time(moment: datetime) -> str:
    """`f"{moment:%a %Y-%m-%d %H:%M}"`, written without strftime (a third of its time: a free-slot answer
    writes a dozen of these)."""
    if moment.year < 1000:  # glibc's %Y writes these years unpadded: kept as strftime writes them
        return f"{moment:%a %Y-%m-%d %H:%M}"
    return "%s %d-%02d-%02d %02d:%02d" % (  # noqa: UP031 (%-formatting: faster than an f-string's specs here)
        _DAY_NAMES[moment.weekday()],
        moment.year,
        moment.month,
        moment.day,
        moment.hour,
        moment.minute,
    )


def _time(moment: datetime) -> str:
    return "%02d:%02d" % (moment.hour, moment.minute)  # noqa: UP031
