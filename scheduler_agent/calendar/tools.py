"""The two tools the model may call, on the real calendar: find_free_slots and create_event.

Input has already been checked against the schema (fields and types) by `answer_call`; here
the values are checked. Every failure is a `ToolError` whose text names the bad value and
says what to do next: the model reads it as a prompt.
"""

from __future__ import annotations

import copy
import json
import re
import sqlite3
from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from functools import cache
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.bookings import booking_for, record_booking
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.events import add_event, events_for
from scheduler_agent.calendar.people import get_owner, list_people, match_people, names_owner
from scheduler_agent.calendar.slots import (
    Interval,
    NoWindowsReason,
    SlotSearch,
    format_day,
    format_moment,
    format_span,
    format_window,
    free_windows,
    minutes_of,
    monday_of,
    shared_working_hours,
    week_span,
)
from scheduler_agent.calendar.types import OWNER_KEY, CalendarError, Event, Person
from scheduler_agent.storage.db import transaction
from scheduler_agent.testing import faults

MIN_MINUTES, MAX_MINUTES = 5, 480
DEFAULT_MINUTES = 30
MAX_TITLE = 200
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_START = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:00)?(Z|[+-]\d{2}:\d{2})?")


@cache
def _load_definitions() -> str:
    return (resources.files("scheduler_agent.prompts") / "tools.json").read_text(encoding="utf-8")


def tool_definitions() -> list[JSON]:
    """The tools as sent to the API, from `prompts/tools.json` (a fresh copy each time)."""
    definitions: list[JSON] = json.loads(_load_definitions())
    return copy.deepcopy(definitions)


@dataclass(frozen=True)
class Plan:
    """A booking that passed every check: who, when, under what title."""

    owner: Person
    other: Person
    begins: datetime
    ends: datetime
    title: str


class CalendarTools:
    """The `Toolbox` on one calendar database, judging "now" and "the past" by `clock`."""

    def __init__(self, conn: sqlite3.Connection, clock: Clock, deadline_seconds: float = TOOL_DEADLINE_SECONDS) -> None:
        self.conn = conn
        self.clock = clock
        self.deadline_seconds = deadline_seconds

    @property
    def definitions(self) -> list[JSON]:
        return tool_definitions()

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        try:
            if name == "find_free_slots":
                return self.find_free_slots(
                    arguments["person"], arguments["week"], arguments.get("minutes", DEFAULT_MINUTES)
                )
            if name == "create_event":
                return self.create_event(
                    arguments["with"],
                    arguments["start"],
                    arguments["minutes"],
                    arguments.get("title"),
                    tool_use_id=tool_use_id,
                    deadline=deadline,
                )
        except CalendarError as exc:  # e.g. no owner yet: only the user can fix it
            raise ToolError(f"The calendar cannot be used: {exc}. Tell the user.") from exc
        known = ", ".join(d["name"] for d in self.definitions)
        raise ToolError(f"There is no tool named {name!r}. The tools are: {known}.")

    # --- find_free_slots --------------------------------------------------------------------

    def find_free_slots(self, person: str, week: str, minutes: int = DEFAULT_MINUTES) -> str:
        owner = get_owner(self.conn)
        other = self.resolve_person(person, field="person")
        day = self.parse_week(week, owner)
        check_minutes(minutes)
        search = self.search(owner, other, day, minutes)
        if not search.windows:
            raise ToolError(self.no_windows_text(owner, other, search))
        period = f"the week of {format_day(search.monday)}"
        if search.searched_from is not None:
            period = f"the rest of {period} (from now, {format_moment(search.searched_from, owner.tz)})"
        lines = [
            f"Free windows of at least {minutes} minutes for {other.name} ({other.key}) and you "
            f"in {period}, times in {owner.tz}:"
        ]
        lines += [f"- {format_window(window, owner.tz)}" for window in search.windows]
        return "\n".join(lines)

    def search(self, owner: Person, other: Person, day: date, minutes: int) -> SlotSearch:
        """The free windows of the week holding `day`, from the calendar as it is now."""
        start, end = week_span(monday_of(day), owner.tz)
        busy = [
            (event.start, event.end)
            for key in (OWNER_KEY, other.key)
            for event in events_for(self.conn, key, start, end)
        ]
        return free_windows(owner, other, busy, day, minutes, self.clock.now())

    def no_windows_text(self, owner: Person, other: Person, search: SlotSearch) -> str:
        head = (
            f"No free {search.minutes}-minute windows for {other.key} and you "
            f"in the week of {format_day(search.monday)}"
        )
        hours = f"the working hours of {owner.name} ({owner.hours}) and {other.name} ({other.hours})"
        next_monday = format_day(monday_of(self.clock.today(owner.tz)) + timedelta(days=7))
        match search.reason:
            case NoWindowsReason.NO_SHARED_HOURS:
                return (
                    f"{head}: {hours} never overlap on a weekday, so no week has one. Tell the user: "
                    "create_event only books inside both people's working hours."
                )
            case NoWindowsReason.SHARED_HOURS_TOO_SHORT:
                longest = search.longest_shared_minutes
                return (
                    f"{head}: {hours} overlap by at most {longest} minutes a day. "
                    f"Try a meeting of at most {longest} minutes."
                )
            case NoWindowsReason.WEEK_OVER:
                now = f"now is {format_moment(self.clock.now(), owner.tz)} {owner.tz}"
                over = "that week is over" if search.searched_from is None else "too little of it is left"
                return f"{head}: {over} ({now}). Try a later week, e.g. the week of {next_monday}."
            case _:
                rest = "the week" if search.searched_from is None else "the rest of the week"
                if search.longest_free is None:
                    why = f"{rest} is fully booked: every hour you both work has an event of one of you."
                else:
                    stretch = search.longest_free
                    why = (
                        f"{rest} is too busy: its longest free stretch is {minutes_of(stretch)} minutes "
                        f"({format_window(stretch, owner.tz)})."
                    )
                return f"{head}; try the next week or a shorter meeting. Why: {why}"

    # --- create_event -----------------------------------------------------------------------

    def create_event(
        self,
        with_: str,
        start: str,
        minutes: int,
        title: str | None = None,
        *,
        tool_use_id: str | None = None,
        deadline: Deadline | None = None,
    ) -> str:
        """Book after every check, exactly once per `tool_use_id`, in one transaction.

        `tool_use_id` is the call being answered. If a booking is already recorded under it
        (a resumed round), its stored result is returned unchanged and nothing is checked or
        booked. Otherwise the slot is checked, the event inserted and the record
        (tool_use_id, event id, result text) written, all in one `BEGIN IMMEDIATE`
        transaction, so two processes never both book an overlapping slot and a crash leaves
        both or neither. With `tool_use_id` None (a person at the CLI) no record is kept.

        `deadline` is checked right before the commit: DeadlineExceeded rolls everything back.
        """
        with transaction(self.conn):
            if tool_use_id is not None:
                recorded = booking_for(self.conn, tool_use_id)
                if recorded is not None:
                    return recorded.result
            plan = self._plan(with_, start, minutes, title)
            faults.pause("between_check_and_insert")
            event = add_event(self.conn, plan.title, plan.begins, plan.ends, [OWNER_KEY, plan.other.key])
            text = self._booked_text(plan.owner, plan.other, event)
            if tool_use_id is not None:
                record_booking(self.conn, tool_use_id, event.id, text)
            if deadline is not None:
                deadline.check("create_event")
        faults.reach("after_calendar_write")
        return text

    def preview(self, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str | None:
        """What a side-effecting call would do, after every check it would make, without writing anything.

        None when there is nothing to ask about: a tool that only reads, or a call whose booking is
        already recorded (a resumed round). Raises ToolError, as the call itself would, when a check fails.
        """
        if name != "create_event" or booking_for(self.conn, tool_use_id) is not None:
            return None
        plan = self._plan(arguments["with"], arguments["start"], arguments["minutes"], arguments.get("title"))
        span = format_window((plan.begins, plan.ends), plan.owner.tz)
        return f"Book {plan.title!r} on {span} ({plan.owner.tz}) for you and {plan.other.name} ({plan.other.key})"

    def _plan(self, with_: str, start: str, minutes: int, title: str | None) -> Plan:
        """Every check of a booking, in order; ToolError names the first that fails and what to do."""
        owner = get_owner(self.conn)
        other = self.resolve_person(with_, field="with")
        begins = self._parse_start(start, owner)
        now = self.clock.now()
        if begins < now:
            raise ToolError(
                f"start {start!r} ({format_moment(begins, owner.tz)} {owner.tz}) is in the past: "
                f"now is {format_moment(now, owner.tz)} {owner.tz}. Pick a later start, "
                "e.g. one from find_free_slots."
            )
        check_minutes(minutes)
        name = _check_title(title, other)
        ends = begins + timedelta(minutes=minutes)
        self._check_working_hours(owner, other, (begins, ends))
        self._check_free(owner, other, (begins, ends), minutes)
        return Plan(owner, other, begins, ends, name)

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        """What call `tool_use_id` changed, from the bookings record; None for find_free_slots."""
        if name != "create_event":
            return None
        recorded = booking_for(self.conn, tool_use_id)
        if recorded is None:
            return "Nothing was booked."
        if recorded.event_id is None:
            return f"The booking was made, and has since been cancelled: {recorded.result} Do not book it again."
        return f"The booking was made: {recorded.result} Do not book it again."

    def _check_working_hours(self, owner: Person, other: Person, meeting: Interval) -> None:
        day = meeting[0].astimezone(ZoneInfo(owner.tz)).date()
        shared = shared_working_hours(owner, other, day, day)
        if any(start <= meeting[0] and meeting[1] <= end for start, end in shared):
            return
        where = f"{format_window(meeting, owner.tz)} ({owner.tz}) is outside working hours"
        hours = f"{owner.name} works {owner.hours} and {other.name} {other.hours}, Monday to Friday"
        if shared:
            spans = ", ".join(format_span(interval, owner.tz) for interval in shared)
            advice = (
                f"on {format_day(day)} both work {spans} {owner.tz}. "
                "Pick a start so that the whole meeting fits inside."
            )
        else:
            advice = (
                f"they share no working hours on {format_day(day)}. Pick another day; "
                "find_free_slots lists the free windows."
            )
        raise ToolError(f"{where}: {hours}; {advice}")

    def _check_free(self, owner: Person, other: Person, meeting: Interval, minutes: int) -> None:
        clashes = {  # keyed by id and start: the occurrences of a repeating event share its id
            (event.id, event.start): event
            for key in (OWNER_KEY, other.key)
            for event in events_for(self.conn, key, *meeting)
        }
        if not clashes:
            return
        described = " and ".join(
            f"{event.title!r} ({format_window((event.start, event.end), owner.tz)}; {', '.join(event.attendees)})"
            for event in sorted(clashes.values(), key=lambda event: (event.start, event.id))
        )
        day = meeting[0].astimezone(ZoneInfo(owner.tz)).date()
        search = self.search(owner, other, day, minutes)
        same_day = [w for w in search.windows if w[0].astimezone(ZoneInfo(owner.tz)).date() == day]
        if same_day:
            nearby = f"Free {minutes}-minute windows that day: {_list_windows(same_day, owner.tz)}."
        elif search.windows:
            nearby = (
                f"No {minutes}-minute window is free that day; that week has {_list_windows(search.windows, owner.tz)}."
            )
        else:
            nearby = f"No {minutes}-minute window is free in the rest of that week either."
        next_step = (
            "call create_event again with a start inside a free window."
            if search.windows
            else "call find_free_slots for the next week, or try a shorter meeting."
        )
        raise ToolError(
            f"{format_window(meeting, owner.tz)} ({owner.tz}) is not free: it overlaps {described}. "
            f"{nearby} Nothing was booked; {next_step}"
        )

    def _booked_text(self, owner: Person, other: Person, event: Event) -> str:
        span = (event.start, event.end)
        text = (
            f"Booked {event.title!r} on {format_window(span, owner.tz)} ({owner.tz}) "
            f"for you ({owner.name}) and {other.name} ({other.key}). Event id: {event.id}."
        )
        if other.tz != owner.tz:
            text += f" For {other.name} that is {format_window(span, other.tz)} {other.tz}."
        return text

    # --- shared checks ----------------------------------------------------------------------

    def resolve_person(self, text: str, *, field: str) -> Person:
        """The one person `text` names, else a ToolError that lists who is known."""
        matches = match_people(self.conn, text)
        if len(matches) == 1:
            return matches[0]
        people = list_people(self.conn)
        known = ", ".join(f"{p.key} ({p.name})" for p in people)
        if matches:
            several = ", ".join(f"{p.key} ({p.name})" for p in matches)
            raise ToolError(f"{field} {text!r} fits more than one person: {several}. Use one of those keys.")
        owner = get_owner(self.conn)
        if names_owner(owner, text):
            raise ToolError(
                f"{field} {text!r} is the owner ({owner.name}), who is always included. "
                f"Give the other person instead: one of {known or 'nobody yet'}."
            )
        if not people:
            raise ToolError(
                f"No one called {text!r} is in the calendar, which has no other people yet. Tell the user "
                "to add them with `scheduler-agent calendar add-person`."
            )
        raise ToolError(
            f"No one called {text!r} is in the calendar. Known people: {known}. Use one of those keys; "
            "if the user means someone else, ask them (they can add a person with "
            "`scheduler-agent calendar add-person`)."
        )

    def parse_week(self, text: str, owner: Person) -> date:
        try:
            if _DATE.fullmatch(text.strip()):
                return date.fromisoformat(text.strip())
        except ValueError:
            pass
        today = self.clock.today(owner.tz)
        next_week = monday_of(today) + timedelta(days=7)
        raise ToolError(
            f"week {text!r} is not a date. Give any day of the wanted week as YYYY-MM-DD; "
            f"today is {format_day(today)}, so next week is {next_week.isoformat()}."
        )

    def _parse_start(self, text: str, owner: Person) -> datetime:
        """An aware instant: a naive start is the owner's wall-clock time, an offset is converted."""
        value = text.strip()
        try:
            if not _START.fullmatch(value):
                raise ValueError(value)
            moment = datetime.fromisoformat(value)
        except ValueError:
            today = self.clock.today(owner.tz)
            raise ToolError(
                f"start {text!r} is not a time. Give YYYY-MM-DDTHH:MM in the owner's time zone "
                f"({owner.tz}), e.g. {today.isoformat()}T14:00; today is {format_day(today)}."
            ) from None
        if moment.tzinfo is not None:
            return moment.astimezone(UTC)
        zone = ZoneInfo(owner.tz)
        aware = moment.replace(tzinfo=zone)
        if aware.astimezone(UTC).astimezone(zone).replace(tzinfo=None) != moment:
            raise ToolError(
                f"start {text!r} does not exist in {owner.tz}: the clocks skip that hour for "
                "daylight saving. Pick another time."
            )
        return aware.astimezone(UTC)


def check_minutes(minutes: int) -> None:
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise ToolError(
            f"minutes {minutes} is out of range: give a length from {MIN_MINUTES} to {MAX_MINUTES} minutes."
        )


def _check_title(title: str | None, other: Person) -> str:
    cleaned = " ".join((title or "").split())
    if len(cleaned) > MAX_TITLE:
        raise ToolError(
            f"title {cleaned[:40]!r}... is {len(cleaned)} characters long: "
            f"give a short title of at most {MAX_TITLE} characters."
        )
    return cleaned or f"Meeting with {other.name}"


def _list_windows(windows: list[Interval], tz: str) -> str:
    return ", ".join(format_window(window, tz) for window in windows)
