"""One injectable clock for the prompt, the tools and the CLI.

A pinned clock always answers the same instant, so a replayed conversation sends the
same "today" in its system prompt and the tools judge "in the past" the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date, datetime, time
from zoneinfo import ZoneInfo

from scheduler_agent.agent.errors import InputError

# Dates near the ends of Python's calendar (years 1 and 9999) overflow as soon as a week or a time zone is added
# to them, and times are stored with four-digit years (as an imported event's must be: calendar/ics/values.py):
# outside these years a date is refused with a clear text instead.
FIRST_YEAR, LAST_YEAR = 1000, 9998


def within_calendar(day: date) -> bool:
    """Whether `day` is far enough from the ends of the calendar for weeks and zones to be added to it."""
    return FIRST_YEAR <= day.year <= LAST_YEAR


def out_of_calendar(text: str) -> str:
    """The sentence that says why a date outside the years FIRST_YEAR to LAST_YEAR is refused."""
    return f"{text!r} is outside the calendar: give a date in the years {FIRST_YEAR} to {LAST_YEAR}"


def on_the_clock(moment: datetime, zone: ZoneInfo) -> datetime | None:
    """`moment` (naive) as wall-clock time in `zone`; None for a time that zone's clocks skip (daylight saving)."""
    aware = moment.replace(tzinfo=zone)
    return aware if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) == moment else None


# A pin given as a bare date (`--today 2026-08-27`) means that morning at this hour, local time.
DEFAULT_PIN_TIME = time(9, 0)


@dataclass(frozen=True)
class Clock:
    """`pinned` is an aware instant, or None for the real time."""

    pinned: datetime | None = None

    def now(self) -> datetime:
        """The current instant, aware, in UTC."""
        if self.pinned is not None:
            return self.pinned.astimezone(UTC)
        return datetime.now(UTC)

    def local_now(self, tz: str) -> datetime:
        return self.now().astimezone(ZoneInfo(tz))

    def today(self, tz: str) -> date:
        return self.local_now(tz).date()

    def frozen(self, tz: str) -> Clock:
        """This clock pinned at its current minute in `tz` (a recorded session runs on a pinned clock)."""
        now = self.local_now(tz)
        return Clock.pinned_at(now.date(), now.time().replace(second=0, microsecond=0), tz)

    @classmethod
    def pinned_at(cls, day: date, at: time, tz: str) -> Clock:
        """Pin to a wall-clock date and time in the time zone `tz` (the owner's)."""
        return cls(datetime.combine(day, at, tzinfo=ZoneInfo(tz)))


def parse_pin(text: str) -> tuple[date, time]:
    """Parse `YYYY-MM-DD` or `YYYY-MM-DDTHH:MM` (the `--today` option) into a date and a time of day.

    Raises InputError with a message a person can act on.
    """
    value = text.strip()
    try:
        if "T" in value or " " in value:
            moment = datetime.fromisoformat(value.replace(" ", "T"))
            if moment.tzinfo is not None:
                raise ValueError("offset")
            day, at = moment.date(), moment.time().replace(second=0, microsecond=0)
        else:
            day, at = date.fromisoformat(value), DEFAULT_PIN_TIME
    except ValueError:
        raise InputError(
            f"--today {text!r} is not a date: use YYYY-MM-DD (e.g. 2026-08-27) or YYYY-MM-DDTHH:MM "
            "(e.g. 2026-08-27T09:00), in the owner's local time"
        ) from None
    if not within_calendar(day):
        raise InputError(f"--today {out_of_calendar(text)}")
    return day, at
