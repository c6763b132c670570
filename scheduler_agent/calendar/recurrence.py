"""Repeating events (RFC 5545's RRULE, RDATE and EXDATE): checked when stored, expanded for a range.

An event that repeats is stored once; `events_for` expands it into the occurrences that overlap the
range asked about, in the wall-clock time of the event's own zone.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.types import CalendarError, Recurrence

_NO_RULES_FINER_THAN = ("SECONDLY", "MINUTELY")


def check_rule(recurrence: Recurrence, start: datetime, tz: str) -> None:
    """Raise CalendarError unless `recurrence.rule` is an RRULE dateutil can expand from `start` in `tz`."""
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
    try:
        rrulestr(rule, dtstart=start.astimezone(ZoneInfo(tz)))
    except (ValueError, TypeError, KeyError, IndexError) as exc:
        raise CalendarError(
            f"RRULE {rule!r} is not a recurrence rule dateutil can read ({exc or type(exc).__name__}): "
            "write it as RFC 5545 says, e.g. FREQ=WEEKLY;BYDAY=MO;UNTIL=20261231T235959Z"
        ) from None


def occurrences(
    first: tuple[datetime, datetime], tz: str, recurrence: Recurrence, start: datetime, end: datetime
) -> list[tuple[datetime, datetime]]:
    """The occurrences, as UTC (start, end), of an event first held at `first` that repeat as
    `recurrence` says in the wall-clock time of `tz`, and overlap [start, end).

    Each occurrence lasts as long on the wall clock as the first (a 09:00-10:00 stays 09:00-10:00
    across a daylight-saving change). Only the range asked about is produced.
    """
    from dateutil.rrule import rruleset, rrulestr  # only when something repeats

    zone = ZoneInfo(tz)
    first_start = first[0].astimezone(zone)
    wall_length = first[1].astimezone(zone).replace(tzinfo=None) - first_start.replace(tzinfo=None)
    real_length = first[1] - first[0]
    earliest = start - max(wall_length, real_length)  # an occurrence that starts later may overlap the range
    starts = rruleset()
    starts.rdate(first_start)  # the first occurrence always counts (RFC 5545 3.8.5.3)
    if recurrence.rule is not None:
        rule_start = _skip_ahead(recurrence.rule, first_start, earliest - timedelta(days=1))
        starts.rrule(rrulestr(recurrence.rule, dtstart=rule_start))
    for moment in recurrence.rdates:
        starts.rdate(moment.astimezone(zone))
    for moment in recurrence.exdates:
        starts.exdate(moment.astimezone(zone))
    result = []
    for begins in starts.between(earliest, end):
        ends = (begins.replace(tzinfo=None) + wall_length).replace(tzinfo=zone)
        if begins == first[0] or ends <= begins:  # the first as stored; or a length the clocks swallowed
            ends = begins.astimezone(UTC) + real_length  # in UTC: aware arithmetic in one zone is wall-clock
        if ends > start:
            result.append((begins.astimezone(UTC), ends.astimezone(UTC)))
    return result


def _skip_ahead(rule: str, first_start: datetime, before: datetime) -> datetime:
    """A start for `rule` that gives the same occurrences from `before` on as `first_start`, but nearer.

    dateutil walks a rule from its start, so a daily rule begun years ago costs thousands of steps
    for one week. A DAILY or WEEKLY rule without COUNT repeats exactly every INTERVAL days or weeks
    on the wall clock, so a start moved on by whole periods keeps the same times, weekdays and
    phase. Any other rule keeps its own start.
    """
    parts = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    days = {"DAILY": 1, "WEEKLY": 7}.get(parts.get("FREQ", ""))
    if days is None or "COUNT" in parts or not parts.get("INTERVAL", "1").isdigit():
        return first_start
    period = days * max(int(parts.get("INTERVAL", "1")), 1)
    zone = first_start.tzinfo
    periods = (before.astimezone(zone).date() - first_start.date()).days // period
    if periods <= 0:
        return first_start
    return (first_start.replace(tzinfo=None) + timedelta(days=periods * period)).replace(tzinfo=zone)
