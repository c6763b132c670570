"""An .ics file as icalendar reads it, and the notes on what is skipped or read with a warning.

The file's structure is checked first (`scan`). VEVENTs outside any VCALENDAR are read as if inside one,
as khal and the reference (`recurring-ical-events` over `icalendar`) read them, with one warning. A
VTIMEZONE whose TZID has spaces around it (`TZID:Name `) is read under the name without them, which is
how its events name it (icalendar strips a parameter's spaces, not a property's): the file's own rules.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import icalendar

from scheduler_agent.calendar.ics.scan import IcsError, Lines, scan, wrapped
from scheduler_agent.calendar.ics.values import Reading


@dataclass(frozen=True)
class Skip:
    """An event left out because it cannot be read: where it is, and why."""

    where: str  # "cal.ics line 13: event 'Standup' (UID standup@x)"
    why: str

    def __str__(self) -> str:
        return f"{self.where}: {self.why}"


@dataclass(frozen=True)
class Warned(Skip):
    """Something read, but not quite as the file says it: where it is, and what was done about it."""


def parse(text: str, name: str) -> tuple[Lines, list[Any], list[list[Any]], list[Warned]]:
    """The file's checked lines, its VCALENDARs, each one's components (walked once), and the warnings."""
    lines = scan(text, name)
    warnings: list[Warned] = []
    if lines.scanned is not None and lines.scanned.outside:
        text = wrapped(lines.scanned)
        warnings.append(_outside_warning(lines, name))
    calendars = _parse(text, name)
    walked = [calendar.walk() for calendar in calendars]  # each component once, for the events and the zones
    if any(_padded(found) for found in walked):  # `TZID:Name ` in a VTIMEZONE: rare, so parsed again
        calendars = _parse(_PADDED_TZID.sub(_unpadded, text), name)
        walked = [calendar.walk() for calendar in calendars]
    return lines, calendars, walked, warnings


def _parse(text: str, name: str) -> list[Any]:
    try:
        calendars: list[Any] = icalendar.Calendar.from_ical(text, multiple=True)
    except ValueError as exc:
        raise IcsError(f"{name} is not valid iCalendar ({exc}); export the calendar again as .ics") from None
    return calendars


# A VTIMEZONE's TZID with spaces around it: its events' `TZID=Name` would not find it (icalendar strips those).
_PADDED_TZID = re.compile(r"^TZID:([ \t]*)(.*?)([ \t]*)(?=\r?$)", re.MULTILINE | re.IGNORECASE)


def _padded(walked: list[Any]) -> bool:
    return any(tz.name == "VTIMEZONE" and str(tz.get("TZID")) != str(tz.get("TZID")).strip() for tz in walked)


def _unpadded(found: re.Match[str]) -> str:
    return f"TZID:{found.group(2)}"


def _outside_warning(lines: Lines, name: str) -> Warned:
    scanned = lines.numbered()
    count = len(scanned.outside)
    first = scanned.lines[scanned.outside[0][0]][0]
    events = f"{count} VEVENT{'s' if count != 1 else ''}"
    return Warned(
        f"{name} line {first}",
        f"{events} outside any VCALENDAR (BEGIN:VCALENDAR ... END:VCALENDAR): read as if inside one",
    )


def event_warning(reading: Reading) -> Warned:
    notes = [
        f"time zone {zone!r} is neither defined in the file (VTIMEZONE) nor an IANA or Windows name: "
        f"its times are read as floating time in {reading.floating_zone}, with no offset guessed from the name"
        for zone in reading.unknown_zones
    ]
    notes += [
        f"{prop} {reading.raw(prop)!r} cannot be read: left out, as it does not bear on busy time"
        for prop in reading.ignored
    ]
    where, _, what = reading.where().partition(": event ")
    return Warned(where, f"event {what}: {'; '.join(notes)}")
