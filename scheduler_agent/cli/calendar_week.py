"""`calendar show`'s text view: each day of the range with what covers it, and the free windows shared.

An event is listed under every day it covers, its end's day named when that is another day
(`Thu 09:00 - Fri 17:00`); an all-day event is `all day` on its own dates, the days of the zone it was
made in, whatever the owner's zone (an all-day event from Kolkata is not `18:30-18:30` the day before in London).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, bindparam, text

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.slots import Interval, format_day, format_span, format_window, intersect, monday_of
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person
from scheduler_agent.cli.calendar_range import Range

WEEKEND = 5  # Saturday's weekday: a week's weekend is shown only when something is on it


def all_day_zones(conn: Connection, events: list[Event], default: str) -> dict[int, str]:
    """The all-day events among `events`, by id: the zone whose days they are (the owner's when none is kept)."""
    ids = sorted({event.id for event in events})
    if not ids:
        return {}
    rows = conn.execute(
        text("SELECT id, tz FROM events WHERE all_day = 1 AND id IN :ids").bindparams(bindparam("ids", expanding=True)),
        {"ids": ids},
    )
    return {int(row[0]): row[1] or default for row in rows}


def days_of(event: Event, zone: ZoneInfo, all_day_zone: str | None) -> tuple[date, date]:
    """The first and last day `event` covers: its own dates when all-day, else days of `zone` (the owner's)."""
    days = ZoneInfo(all_day_zone) if all_day_zone is not None else zone
    start, end = event.start.astimezone(days), event.end.astimezone(days)
    last = (end - timedelta(microseconds=1)).date()  # an end at midnight is the day before's
    return start.date(), max(last, start.date())


def span_text(event: Event, zone: ZoneInfo, all_day_zone: str | None) -> str:
    """`09:00-10:00`; `Thu 09:00 - Fri 17:00` when it ends on another day; `all day` (or `3 days`) for an
    all-day event."""
    if all_day_zone is not None:
        first, last = days_of(event, zone, all_day_zone)
        days = (last - first).days + 1
        return f"{'all day' if days == 1 else f'all day, {days} days':<11}"
    start, end = event.start.astimezone(zone), event.end.astimezone(zone)
    if (end - timedelta(microseconds=1)).date() <= start.date():
        return format_span((event.start, event.end), zone.key)
    form = "%a %H:%M" if (end.date() - start.date()).days < 7 else "%a %Y-%m-%d %H:%M"
    return f"{start.strftime(form)} - {end.strftime(form)}"


def range_lines(
    conn: Connection,
    tools: CalendarTools,
    owner: Person,
    other: Person | None,
    shown: Range,
    minutes: int,
    week: bool,
) -> Iterator[str]:
    """The text view of `shown`: for a `week`, Monday to Friday and a weekend day only when booked."""
    begin, until = shown
    zone = ZoneInfo(owner.tz)
    people = [owner] if other is None else [owner, other]
    if week:
        yield f"Week of {format_day(begin.date())}, times in {owner.tz}"
    else:
        yield f"From {begin:%a %Y-%m-%d %H:%M} to {until:%a %Y-%m-%d %H:%M}, times in {owner.tz}"
    for person in people:
        yield f"  {person.name} ({person.key}): works {person.schedule}"
    by_day = _by_day(conn, people, begin, until, zone, owner.tz)
    first, last = begin.date(), (until - timedelta(microseconds=1)).date()
    day = first
    while day <= last:
        listed = by_day.get(day, [])
        if not (week and day.weekday() >= WEEKEND and not listed):
            yield ""
            yield format_day(day)
            yield from listed
            if not listed:
                yield "  (nothing booked)"
        day += timedelta(days=1)
    if other is not None:
        yield ""
        yield from _windows(tools, owner, other, shown, minutes, week)


def _by_day(
    conn: Connection, people: list[Person], begin: datetime, until: datetime, zone: ZoneInfo, tz: str
) -> dict[date, list[str]]:
    """Each day's lines: every event that covers it, by start (an all-day one by its own dates)."""
    margin = timedelta(days=2)  # an all-day event of a zone far from the owner's starts or ends a day off
    found: dict[tuple[int, datetime], Event] = {  # the occurrences of a repeating event share its id
        (event.id, event.start): event
        for person in people
        for event in events_for(conn, person.key, begin - margin, until + margin)
    }
    events = sorted(found.values(), key=lambda event: (event.start, event.id))
    all_day = all_day_zones(conn, events, tz)
    first_day, last_day = begin.date(), (until - timedelta(microseconds=1)).date()
    by_day: dict[date, list[str]] = {}
    for event in events:
        day_zone = all_day.get(event.id)
        if day_zone is None and not (event.start < until and event.end > begin):
            continue  # fetched for the margin only
        first, last = days_of(event, zone, day_zone)
        repeats = " (repeats)" if event.recurring else ""
        line = f"  {span_text(event, zone, day_zone)}  {event.title}  ({', '.join(event.attendees)})  #{event.id}"
        day = max(first, first_day)
        while day <= min(last, last_day):
            by_day.setdefault(day, []).append(line + repeats)
            day += timedelta(days=1)
    return by_day


def _windows(
    tools: CalendarTools, owner: Person, other: Person, shown: Range, minutes: int, week: bool
) -> Iterator[str]:
    """The free windows you share in the range (each week's search, clipped to it)."""
    begin, until = shown
    if week:
        search = tools.search(owner, other, begin.date(), minutes)
        if not search.windows:
            yield tools.no_windows_text(owner, other, search)
            return
        windows: list[Interval] = search.windows
    else:
        windows = []
        monday = monday_of(begin.date())
        while monday <= until.date():
            found = tools.search(owner, other, monday, minutes).windows
            windows += [w for w in intersect(found, [(begin, until)]) if w[1] - w[0] >= timedelta(minutes=minutes)]
            monday += timedelta(weeks=1)
        if not windows:
            yield f"No free window of at least {minutes} minutes for {OWNER_KEY} and {other.key} in that range."
            return
    yield f"Free windows of at least {minutes} minutes for {OWNER_KEY} and {other.key}:"
    for window in windows:
        yield f"  {format_window(window, owner.tz)}"
