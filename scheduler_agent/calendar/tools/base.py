"""What every tool shares: the calendar and clock it runs on, and the exactly-once frame of a side effect."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import Calendar, Key
from scheduler_agent.calendar.bookings import Booking, input_hash
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.storage.dialect import BookedTimeTaken


@dataclass(frozen=True)
class Context:
    calendar: Calendar
    clock: Clock


@dataclass(frozen=True)
class Tool:
    """One tool: how to run it, what to ask the person first (side effects), and what a call changed."""

    run: Callable[[Context, Mapping[str, Any], str | None, Deadline | None], str]
    preview: Callable[[Context, Mapping[str, Any]], str] | None = None  # None: it only reads
    side_effect: Callable[[Booking | None], str] | None = None


def key_for(name: str, arguments: Mapping[str, Any], tool_use_id: str | None) -> Key | None:
    return None if tool_use_id is None else Key(tool_use_id, name, input_hash(arguments))


def already_done(ctx: Context, key: Key | None) -> str | None:
    """The recorded answer when call `key` already made its change (a resumed round), else None.

    The same id with another tool or another input is refused: it is not the call that was recorded.
    """
    if key is None:
        return None
    recorded = ctx.calendar.recorded(key.tool_use_id)
    if recorded is None:
        return None
    if recorded.kind != key.kind or (recorded.input_hash and recorded.input_hash != key.input_hash):
        raise ToolError(
            f"Not run: the call id {key.tool_use_id} already answered a {recorded.kind} call with another "
            f"input ({recorded.result}). Nothing was changed now. Make a new call for the new change."
        )
    return recorded.result


def change_once(
    ctx: Context,
    name: str,
    arguments: Mapping[str, Any],
    tool_use_id: str | None,
    deadline: Deadline | None,
    make: Callable[[Key | None], str],
) -> str:
    """Run `make` (every check, then the change and its record) exactly once per `tool_use_id`, in one
    transaction of the calendar.

    A call already recorded answers with its stored result, checking nothing. `deadline` is checked right
    before the commit: DeadlineExceeded rolls everything back. With `tool_use_id` None (a person at the
    CLI) no record is kept.
    """
    key = key_for(name, arguments, tool_use_id)
    try:
        text = _once(ctx, name, key, deadline, make)
    except BookedTimeTaken:
        # PostgreSQL's exclusion constraint: a booking committed meanwhile holds the slot. All was rolled back;
        # run again, and the checks see that booking and answer with the usual conflict text.
        try:
            text = _once(ctx, name, key, deadline, make)
        except BookedTimeTaken:
            raise ToolError(
                "that time was booked by another call while this one was checked. Nothing was changed; "
                "call find_free_slots again and pick another time."
            ) from None
    faults.reach("after_calendar_write")
    return text


def _once(
    ctx: Context, name: str, key: Key | None, deadline: Deadline | None, make: Callable[[Key | None], str]
) -> str:
    with ctx.calendar.atomic():
        done = already_done(ctx, key)
        if done is not None:
            return done
        text = make(key)
        if deadline is not None:
            deadline.check(name)
    return text


def preview_once(ctx: Context, tool: Tool, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str | None:
    """What the person is asked before a side effect; None for a read or a call already made."""
    if tool.preview is None:
        return None
    if already_done(ctx, key_for(name, arguments, tool_use_id)) is not None:
        return None
    return tool.preview(ctx, arguments)
