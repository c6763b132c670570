"""cancel_event: cancel one event, or one occurrence of a repeating one, exactly once.

The person approves each cancellation: `--yes` never does (session/approval.py), only `--yes-cancel`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.calendar.backend import Key
from scheduler_agent.calendar.bookings import Booking
from scheduler_agent.calendar.slots import format_window
from scheduler_agent.calendar.tools.base import Context, change_once
from scheduler_agent.calendar.tools.inputs import attendees_of, people_text, quoted
from scheduler_agent.calendar.tools.target import target_of
from scheduler_agent.calendar.types import Event, Person

NAME = "cancel_event"


def run(ctx: Context, arguments: Mapping[str, Any], tool_use_id: str | None, deadline: Deadline | None) -> str:
    def make(key: Key | None) -> str:
        target = target_of(ctx, arguments, "cancel")
        others = attendees_of(ctx.calendar, target.occurrence.attendees)
        faults.pause("between_check_and_insert")

        def answer(event: Event) -> str:
            return cancelled_text(target.owner, others, event)

        return ctx.calendar.cancel(target.stored, target.occurrence, key, answer)

    return change_once(ctx, NAME, arguments, tool_use_id, deadline, make)


def preview(ctx: Context, arguments: Mapping[str, Any]) -> str:
    target = target_of(ctx, arguments, "cancel")
    event = target.occurrence
    tz = target.owner.tz
    who = people_text(target.owner, attendees_of(ctx.calendar, event.attendees))
    one = " (this occurrence only)" if event.recurring else ""
    span = format_window((event.start, event.end), tz)
    return f"CANCEL {quoted(event.title)} (#{event.id}){one} for {who}: before on {span} ({tz}), after gone"


def side_effect(recorded: Booking | None) -> str:
    if recorded is None:
        return "Nothing was cancelled."
    return f"The cancellation was made: {recorded.result} Do not cancel it again."


def cancelled_text(owner: Person, others: list[Person], event: Event) -> str:
    span = format_window((event.start, event.end), owner.tz)
    one = "that occurrence of the repeating event" if event.recurring else "the event"
    return (
        f"Cancelled {quoted(event.title)} on {span} ({owner.tz}) for {people_text(owner, others)}: "
        f"{one} #{event.id} is off the calendar. Nothing else was changed."
    )
