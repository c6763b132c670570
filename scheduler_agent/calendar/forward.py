"""A far window of a daily or weekly series, expanded from near it instead of from its first occurrence.

The expansion library (`dateutil`'s rrule, under `recurring-ical-events`) walks every occurrence from DTSTART
to the window: a daily series begun in 2024 walks about 4,400 of them to reach a week in 2036, and the first
search of such a week, which materialises a span for every series, took seconds. For a rule whose
occurrences repeat with a fixed period of days (FREQ=DAILY or WEEKLY, any INTERVAL, BYDAY, BYMONTH,
BYSETPOS and the rest, but no COUNT), the occurrences after a DTSTART moved forward by whole periods are
the same as the original's there: each period (a day, a week from WKST) is the same set of days. So the
master is copied with DTSTART and DTEND moved forward by whole periods, to at least a period and the event's
length before the window: RFC 5545 counts DTSTART as an occurrence even off the rule, and that extra one
ends before the window, where the caller drops it. EXDATE, RDATE, UNTIL and the overrides' RECURRENCE-IDs are
absolute and stay as they are. Written here because neither library offers to start a walk later.
"""

from __future__ import annotations

import copy
from datetime import date, datetime, timedelta
from typing import Any

PERIOD_DAYS = {"DAILY": 1, "WEEKLY": 7}
WORTH_IT = timedelta(days=120)  # nearer than this, walking from DTSTART costs little


def forwarded(calendar: Any, rules: tuple[tuple[str, datetime], ...], start: datetime) -> Any | None:
    """A copy of `calendar` whose one repeating master begins nearer `start` (by whole periods of its rule),
    with the same occurrences from `start` on; None when the series is not one this applies to, or is near.

    `rules` are the series' RRULEs with the DTSTART each runs from (recurrence._Parsed.rules)."""
    if len(rules) != 1:
        return None
    rule, begins = rules[0]
    fields = dict(part.split("=", 1) for part in rule.upper().split(";") if "=" in part)
    step = PERIOD_DAYS.get(fields.get("FREQ", ""))
    if step is None or "COUNT" in fields:
        return None
    masters = [
        component
        for component in calendar.subcomponents
        if component.name == "VEVENT" and component.get("RRULE") is not None and component.get("RECURRENCE-ID") is None
    ]
    if len(masters) != 1 or masters[0].get("DTSTART") is None or _changes_what_follows(calendar):
        return None
    master = masters[0]
    period = step * int(fields.get("INTERVAL", "1") or 1)
    first = master["DTSTART"].dt
    ends = master.get("DTEND")
    length = max(ends.dt - first, timedelta(0)) if ends is not None else timedelta(0)
    room = start - begins - length - timedelta(days=2)  # the caller's window reaches a day before `start`
    if room < WORTH_IT:
        return None
    shift = timedelta(days=(room.days // period - 1) * period)
    if shift <= timedelta(0):
        return None
    moved = copy.copy(master)
    moved["DTSTART"] = _moved(master["DTSTART"], shift)
    if ends is not None:
        moved["DTEND"] = _moved(ends, shift)
    found = copy.copy(calendar)
    found.subcomponents = [moved if component is master else component for component in calendar.subcomponents]
    return found


def _changes_what_follows(calendar: Any) -> bool:
    """Whether an override has RANGE=THISANDFUTURE: it moves the occurrences after its own, which the library
    finds only when it walks through that one."""
    for component in calendar.subcomponents:
        found = component.get("RECURRENCE-ID")
        if found is not None and str(found.params.get("RANGE", "")).upper() == "THISANDFUTURE":
            return True
    return False


def _moved(prop: Any, shift: timedelta) -> Any:
    """A DTSTART/DTEND property `shift` later in its own wall-clock time, its parameters (TZID, VALUE) kept."""
    from icalendar.prop import vDDDTypes

    value: date | datetime = prop.dt
    moved = vDDDTypes(value + shift)  # an aware datetime keeps its zone and its wall-clock time
    moved.params = copy.copy(prop.params)
    return moved
