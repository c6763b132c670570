"""move_event: reschedule an event, or change its length, with the checks create_event makes, exactly once."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
from typing import Any

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import Key
from scheduler_agent.calendar.bookings import Booking
from scheduler_agent.calendar.slots import format_window, minutes_of
from scheduler_agent.calendar.tools.base import Context, change_once
from scheduler_agent.calendar.tools.create_event import check_not_past, check_slot, other_zones
from scheduler_agent.calendar.tools.inputs import attendees_of, check_minutes, parse_start, people_text, quoted
from scheduler_agent.calendar.tools.target import Target, target_of
from scheduler_agent.calendar.types import Event, Person

NAME = "move_event"


def run(ctx: Context, arguments: Mapping[str, Any], tool_use_id: str | None, deadline: Deadline | None) -> str:
    def make(key: Key | None) -> str:
        target, others, begins, ends = plan_of(ctx, arguments)
        faults.pause("between_check_and_insert")
        before = target.occurrence

        def answer(event: Event) -> str:
            return moved_text(target.owner, others, before, event)

        return ctx.calendar.move(target.stored, before, begins, ends, key, answer)

    return change_once(ctx, NAME, arguments, tool_use_id, deadline, make)


def preview(ctx: Context, arguments: Mapping[str, Any]) -> str:
    target, others, begins, ends = plan_of(ctx, arguments)
    tz = target.owner.tz
    before = format_window((target.occurrence.start, target.occurrence.end), tz)
    after = format_window((begins, ends), tz)
    who = people_text(target.owner, others)
    event = target.stored.event
    return f"Move {quoted(event.title)} (#{event.id}) for {who}: from {before} to {after} ({tz})"


def side_effect(recorded: Booking | None) -> str:
    if recorded is None:
        return "Nothing was moved."
    return f"The move was made: {recorded.result} Do not move it again."


def plan_of(ctx: Context, arguments: Mapping[str, Any]) -> tuple[Target, list[Person], datetime, datetime]:
    """Every check of a move, in order: the event, the new start and length, then as create_event."""
    target = target_of(ctx, arguments, "move")
    if "start" not in arguments and "minutes" not in arguments:
        raise ToolError(
            "move_event needs start, minutes or both: the new start time, the new length. Nothing was moved."
        )
    owner, current = target.owner, target.occurrence
    begins = current.start
    if "start" in arguments:
        begins = parse_start(arguments["start"], owner, ctx.clock)
        check_not_past(ctx, owner, arguments["start"], begins)
    elif begins < ctx.clock.now():
        raise ToolError(
            f"#{current.id} has already started, so its length can no longer be changed here. Nothing was moved."
        )
    minutes = arguments.get("minutes", minutes_of((current.start, current.end)))
    check_minutes(minutes)
    ends = begins + timedelta(minutes=minutes)
    if (begins, ends) == (current.start, current.end):
        raise ToolError(
            f"#{current.id} is already at {format_window((begins, ends), owner.tz)}: nothing to move. "
            "Give a different start or length."
        )
    others = attendees_of(ctx.calendar, current.attendees)
    check_slot(ctx, owner, others, (begins, ends), minutes, verb="moved", retry="move_event", excluding=current)
    return target, others, begins, ends


def moved_text(owner: Person, others: list[Person], before: Event, after: Event) -> str:
    old = format_window((before.start, before.end), owner.tz)
    new = format_window((after.start, after.end), owner.tz)
    text = (
        f"Moved {quoted(before.title)} from {old} to {new} ({owner.tz}), {minutes_of((after.start, after.end))} "
        f"minutes, for {people_text(owner, others)}. Event id: {after.id}."
    )
    if after.id != before.id:
        text += f" (That occurrence left the repeating event #{before.id} and is now event #{after.id}.)"
    return text + other_zones(owner, others, (after.start, after.end))
