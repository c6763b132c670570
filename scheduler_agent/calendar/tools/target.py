"""Which event a move_event or cancel_event call names, and whether the tools may touch it.

Only events the owner organises or the agent booked can be changed: an event imported from someone
else's calendar is read-only, whatever any text (a title, a description) asks. A repeating event is
changed one occurrence at a time, named by its date.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import timedelta
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import StoredEvent
from scheduler_agent.calendar.slots import format_day, format_moment, format_window, local_span
from scheduler_agent.calendar.tools.base import Context
from scheduler_agent.calendar.tools.inputs import parse_day, quoted
from scheduler_agent.calendar.types import Event, Person


@dataclass(frozen=True)
class Target:
    owner: Person
    stored: StoredEvent
    occurrence: Event  # the event itself, or the one occurrence named


def target_of(ctx: Context, arguments: Mapping[str, Any], verb: str) -> Target:
    """The event (and occurrence) `arguments` name, checked: it exists, may be changed, is not over."""
    calendar = ctx.calendar
    owner = calendar.owner()
    event_id = arguments["event_id"]
    stored = calendar.event(event_id) if 0 < event_id < 2**63 else None  # SQLite's integers end at 2**63
    if stored is None:
        raise ToolError(
            f"There is no event #{event_id}. Call list_events to see the events and their ids, "
            f"then {verb} one of those."
        )
    event = stored.event
    name = f"#{event.id} {quoted(event.title)}"
    if not stored.changeable:
        source = "it was imported from another calendar" if stored.imported else "you do not attend it"
        raise ToolError(
            f"{name} is not yours to {verb}: {source}. Only events you organise or that were booked here can be "
            f"moved or cancelled; nothing was changed. If the user wants it changed, tell them to ask its organiser."
        )
    occurrence = _occurrence(ctx, owner, stored, arguments.get("occurrence"), name)
    now = ctx.clock.now()
    if occurrence.end <= now:
        when = format_window((occurrence.start, occurrence.end), owner.tz)
        raise ToolError(
            f"{name} on {when} ({owner.tz}) is already over (now is {format_moment(now, owner.tz)}): "
            f"there is nothing to {verb}. Nothing was changed."
        )
    return Target(owner, stored, occurrence)


def _occurrence(ctx: Context, owner: Person, stored: StoredEvent, text: str | None, name: str) -> Event:
    event = stored.event
    if not stored.recurrence:
        if text is not None:
            day = parse_day(text, "occurrence", owner, ctx.clock)
            if event.start.astimezone(_zone(owner)).date() != day:
                raise ToolError(
                    f"{name} does not repeat: it is on {format_day(event.start.astimezone(_zone(owner)).date())}, "
                    f"not {format_day(day)}. Leave occurrence out, or give its own date."
                )
        return event
    if text is None:
        raise ToolError(
            f"{name} repeats: only single events and single occurrences can be moved or cancelled here. "
            "Give occurrence, the date (YYYY-MM-DD) of the one to change; "
            "list_events shows each occurrence with its date."
        )
    day = parse_day(text, "occurrence", owner, ctx.clock)
    start, end = local_span(day, day, owner.tz)
    found = [e for e in ctx.calendar.events(list(event.attendees), start, end) if e.id == event.id]
    if not found:
        nearby = ctx.calendar.events(list(event.attendees), start - timedelta(days=14), end + timedelta(days=14))
        dates = sorted({format_day(e.start.astimezone(_zone(owner)).date()) for e in nearby if e.id == event.id})
        hint = f" Its occurrences near then: {', '.join(dates)}." if dates else ""
        raise ToolError(f"{name} has no occurrence on {format_day(day)}.{hint} Give one of its dates.")
    return found[0]


def _zone(owner: Person) -> ZoneInfo:
    return ZoneInfo(owner.tz)
