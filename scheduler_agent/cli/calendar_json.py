"""`calendar show --json`: the busy intervals the agent's tools see for one person, for scripts and tests."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.clock import on_the_clock, out_of_calendar, within_calendar
from scheduler_agent.calendar.events import events_for
from scheduler_agent.calendar.slots import monday_of, week_span
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import CalendarError, Person
from scheduler_agent.storage.db import Connection


def _moment(text: str, field: str, zone: ZoneInfo) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise CalendarError(
            f"{field} {text!r} is not a date and time: give YYYY-MM-DDTHH:MM (your time), or with a UTC offset "
            "(2026-08-31T09:00Z, 2026-08-31T09:00+01:00)"
        ) from None
    if not within_calendar(moment.date()):  # as --week and --today: the window's bounds would overflow
        raise CalendarError(f"{field} {out_of_calendar(text)}")
    if moment.tzinfo is not None:
        return moment
    aware = on_the_clock(moment, zone)
    if aware is None:  # as add-event's start is judged
        raise CalendarError(
            f"{field} {text!r} does not exist in {zone.key}: the clocks skip that hour for daylight saving; "
            "give another time, or one with a UTC offset"
        )
    return aware


def busy_json(
    conn: Connection,
    who: Person,
    owner: Person,
    tools: CalendarTools,
    week: str | None,
    start: str | None,
    end: str | None,
) -> str:
    """`calendar show --json`: each busy interval of `who` in the range, as the agent's tools see it."""
    zone = ZoneInfo(owner.tz)
    if start is not None and week is not None:  # one would be dropped without a word
        raise CalendarError("--week and --from both say where the range begins: give one of them")
    if start is not None:
        begin = _moment(start, "--from", zone)
    else:
        day = tools.parse_week(week, owner) if week is not None else tools.clock.today(owner.tz)
        begin = week_span(monday_of(day), owner.tz)[0]
    until = _moment(end, "--to", zone) if end is not None else begin + timedelta(days=7)
    if until <= begin:
        raise CalendarError("--to must be after --from")
    intervals = [
        {
            "id": f"{event.id}@{event.start.isoformat()}" if event.recurring else str(event.id),
            "series": event.id if event.recurring else None,
            "title": event.title,
            "start": event.start.astimezone(zone).isoformat(),
            "end": event.end.astimezone(zone).isoformat(),
            "attendees": list(event.attendees),
        }
        for event in events_for(conn, who.key, begin.astimezone(UTC), until.astimezone(UTC))
    ]
    record = {
        "person": who.key,
        "from": begin.astimezone(zone).isoformat(),
        "to": until.astimezone(zone).isoformat(),
        "busy": intervals,
    }
    return json.dumps(record, indent=2, ensure_ascii=False)
