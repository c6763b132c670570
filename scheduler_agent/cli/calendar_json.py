"""`calendar show --json`: the busy intervals the agent's tools see for one person, for scripts and tests."""

from __future__ import annotations

import json
from datetime import UTC
from zoneinfo import ZoneInfo

from sqlalchemy import Connection

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import Person
from scheduler_agent.cli.calendar_range import show_range


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
    begin, until = show_range(tools, owner, week, start, end)
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
