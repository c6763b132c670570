"""The tools the model may call, on the real calendar, dispatched by a table.

    find_free_slots   when the owner and one or more people are all free   (find_free_slots.py)
    create_event      book a meeting, exactly once                          (create_event.py)
    list_events       the events in a window, with their ids                (list_events.py)
    move_event        reschedule or resize an event, exactly once           (move_event.py)
    cancel_event      cancel an event or one occurrence, exactly once       (cancel_event.py)

Each module holds its tool's texts beside its code, since they are its prompts; the values in a call
are checked in inputs.py; the tools see the calendar only through `backend.Calendar`. The definitions
sent to the API are `prompts/tools.json`. A tool's module is imported when the table is first used (a
call from the model): `calendar show` needs only find_free_slots, and starts without the others.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date
from functools import cache
from typing import Any

from sqlalchemy import Connection

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.backend import Calendar, SqliteCalendar
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.slots import SlotSearch
from scheduler_agent.calendar.tools.base import Context, Tool, preview_once
from scheduler_agent.calendar.tools.inputs import (
    DEFAULT_MINUTES,
    MAX_MINUTES,
    MIN_MINUTES,
    check_minutes,
    parse_week,
    resolve_person,
)
from scheduler_agent.calendar.types import CalendarError, Person

__all__ = [
    "DEFAULT_MINUTES",
    "MAX_MINUTES",
    "MIN_MINUTES",
    "CalendarTools",
    "check_minutes",
    "tool_definitions",
    "tool_table",
]


@cache
def tool_table() -> dict[str, Tool]:
    """The dispatch table, name -> Tool, built (its modules imported) on the first call."""
    from scheduler_agent.calendar.tools import cancel_event, create_event, find_free_slots, list_events, move_event

    return {
        "find_free_slots": Tool(find_free_slots.run),
        "create_event": Tool(create_event.run, create_event.preview, create_event.side_effect),
        "list_events": Tool(list_events.run),
        "move_event": Tool(move_event.run, move_event.preview, move_event.side_effect),
        "cancel_event": Tool(cancel_event.run, cancel_event.preview, cancel_event.side_effect),
    }


@cache
def _load_definitions() -> str:
    from importlib import resources

    return (resources.files("scheduler_agent.prompts") / "tools.json").read_text(encoding="utf-8")


def tool_definitions() -> list[JSON]:
    """The tools as sent to the API, from `prompts/tools.json` (a fresh copy each time: parsing makes one,
    in a tenth of the time a deep copy takes)."""
    import json

    definitions: list[JSON] = json.loads(_load_definitions())
    return definitions


def _out_of_range(name: str) -> str:
    return (
        f"{name} was not run: a date in the call is too near the start or end of the calendar (years 1 to 9999) "
        "to work with. Give a date near today."
    )


class CalendarTools:
    """The `Toolbox` on one calendar database, judging "now" and "the past" by `clock`."""

    def __init__(
        self,
        conn: Connection,
        clock: Clock,
        deadline_seconds: float = TOOL_DEADLINE_SECONDS,
        calendar: Calendar | None = None,
    ) -> None:
        self.conn = conn
        self.clock = clock
        self.deadline_seconds = deadline_seconds
        self.calendar: Calendar = calendar if calendar is not None else SqliteCalendar(conn)
        self.context = Context(self.calendar, clock)
        self._definitions: list[JSON] | None = None

    @property
    def definitions(self) -> list[JSON]:
        """This toolbox's own copy, parsed once, when first asked for (`calendar show` never asks): the loop
        reads it at every call (a parse took ~30 µs)."""
        if self._definitions is None:
            self._definitions = tool_definitions()
        return self._definitions

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        tool = tool_table().get(name)
        if tool is None:
            known = ", ".join(d["name"] for d in self.definitions)
            raise ToolError(f"There is no tool named {name!r}. The tools are: {known}.")
        try:
            return self._noted(tool.run(self.context, arguments, tool_use_id, deadline))
        except CalendarError as exc:  # e.g. no owner yet: only the user can fix it
            raise ToolError(self._noted(f"The calendar cannot be used: {exc}. Tell the user.")) from exc
        except ToolError as exc:  # a check that failed on the local copy says so too
            noted = self._noted(str(exc))
            if noted == str(exc):
                raise
            raise ToolError(noted) from exc
        except OverflowError as exc:  # a date near year 1 or 9999: its week or day runs off the calendar
            raise ToolError(_out_of_range(name)) from exc

    def _noted(self, text: str) -> str:
        """`text`, and on a line of its own the calendar server's line when the last read could not sync
        and read the local copy (`last synced 3 min ago; SERVER unreachable`), unless it says it already."""
        line = self.calendar.server_line()
        return text if not line or line in text else f"{text}\n{line}"

    def preview(self, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str | None:
        """What a side-effecting call would do, after every check it would make, without writing anything.

        None when there is nothing to ask about: a tool that only reads, or a call whose change is
        already recorded (a resumed round). Raises ToolError, as the call itself would, when a check fails.
        """
        tool = tool_table().get(name)
        if tool is None:
            return None
        try:
            return preview_once(self.context, tool, name, arguments, tool_use_id)
        except CalendarError as exc:
            raise ToolError(f"The calendar cannot be used: {exc}. Tell the user.") from exc
        except OverflowError as exc:
            raise ToolError(_out_of_range(name)) from exc

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        """What call `tool_use_id` changed, from its record; None for a tool that only reads."""
        tool = tool_table().get(name)
        if tool is None or tool.side_effect is None:
            return None
        return tool.side_effect(self.calendar.recorded(tool_use_id))

    # --- the same tools for a person at the CLI (no tool_use id: no record) ---------------------

    def find_free_slots(self, person: str, week: str, minutes: int = DEFAULT_MINUTES) -> str:
        from scheduler_agent.calendar.tools import find_free_slots

        return find_free_slots.run(self.context, {"person": person, "week": week, "minutes": minutes}, None, None)

    def create_event(
        self,
        with_: str,
        start: str,
        minutes: int,
        title: str | None = None,
        *,
        tool_use_id: str | None = None,
        deadline: Deadline | None = None,
        also: list[str] | None = None,
    ) -> str:
        """Book after every check, exactly once per `tool_use_id`, in one transaction (see base.change_once)."""
        arguments: dict[str, Any] = {"with": with_, "start": start, "minutes": minutes}
        if title is not None:
            arguments["title"] = title
        if also:
            arguments["also"] = also
        from scheduler_agent.calendar.tools import create_event

        return create_event.run(self.context, arguments, tool_use_id, deadline)

    def search(self, owner: Person, other: Person | list[Person], day: date, minutes: int) -> SlotSearch:
        """The free windows of the week holding `day`, from the calendar as it is now."""
        from scheduler_agent.calendar.tools import find_free_slots

        people = [other] if isinstance(other, Person) else other
        return find_free_slots.group_search(self.context, owner, people, day, minutes)

    def no_windows_text(self, owner: Person, other: Person | list[Person], search: SlotSearch) -> str:
        from scheduler_agent.calendar.tools import find_free_slots

        people = [other] if isinstance(other, Person) else other
        return find_free_slots.no_windows_text(self.context, owner, people, search)

    def resolve_person(self, text: str, *, field: str) -> Person:
        return resolve_person(self.calendar, text, field=field)

    def parse_week(self, text: str, owner: Person) -> date:
        return parse_week(text, owner, self.clock)
