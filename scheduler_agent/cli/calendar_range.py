"""`calendar show --from/--to/--week`: the range shown, for the text view and `--json` alike."""

from __future__ import annotations

from datetime import datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.clock import on_the_clock, out_of_calendar, within_calendar
from scheduler_agent.calendar.slots import monday_of, week_span
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import CalendarError, Person

Range = tuple[datetime, datetime]  # [from, to), aware, in the owner's zone


def moment(text: str, field: str, zone: ZoneInfo) -> datetime:
    """`--from`/`--to`: the owner's wall-clock time, or a time with a UTC offset."""
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        raise CalendarError(
            f"{field} {text!r} is not a date and time: give YYYY-MM-DDTHH:MM (your time), or with a UTC offset "
            "(2026-08-31T09:00Z, 2026-08-31T09:00+01:00)"
        ) from None
    if not within_calendar(parsed.date()):  # as --week and --today: the window's bounds would overflow
        raise CalendarError(f"{field} {out_of_calendar(text)}")
    if parsed.tzinfo is not None:
        return parsed
    aware = on_the_clock(parsed, zone)
    if aware is None:  # as add-event's start is judged
        raise CalendarError(
            f"{field} {text!r} does not exist in {zone.key}: the clocks skip that hour for daylight saving; "
            "give another time, or one with a UTC offset"
        )
    return aware


def show_range(tools: CalendarTools, owner: Person, week: str | None, start: str | None, end: str | None) -> Range:
    """From --from (or the start of --week's week, or of this week) to --to (or 7 days on)."""
    zone = ZoneInfo(owner.tz)
    if start is not None and week is not None:  # one would be dropped without a word
        raise CalendarError("--week and --from both say where the range begins: give one of them")
    if start is not None:
        begin = moment(start, "--from", zone)
    else:
        day = tools.parse_week(week, owner) if week is not None else tools.clock.today(owner.tz)
        begin = week_span(monday_of(day), owner.tz)[0]
    until = moment(end, "--to", zone) if end is not None else begin + timedelta(days=7)
    if until <= begin:
        raise CalendarError("--to must be after --from")
    return begin.astimezone(zone), until.astimezone(zone)
