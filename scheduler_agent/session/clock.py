"""The clock a command or a server runs on: real time, or a `--today` pin in the owner's time zone."""

from __future__ import annotations

from sqlalchemy import Connection

from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.people import get_owner


def clock_for(conn: Connection, today: str | None) -> Clock:
    """Real time, or the `--today` pin read as the owner's wall-clock time (ValueError if malformed)."""
    if today is None:
        return Clock()
    day, at = parse_pin(today)
    return Clock.pinned_at(day, at, get_owner(conn).tz)
