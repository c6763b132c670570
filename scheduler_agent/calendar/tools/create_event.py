"""create_event: book a meeting after every check, exactly once; and the checks (and their texts) that
move_event shares: working hours, the owner's standing rules, everyone free."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.agent import faults
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import Key
from scheduler_agent.calendar.bookings import Booking
from scheduler_agent.calendar.prefs import rules_of
from scheduler_agent.calendar.slots import (
    Interval,
    format_day,
    format_moment,
    format_span,
    format_window,
    shared_working_hours,
)
from scheduler_agent.calendar.tools.base import Context, change_once
from scheduler_agent.calendar.tools.find_free_slots import group_search, windows_on
from scheduler_agent.calendar.tools.inputs import (
    check_minutes,
    check_title,
    parse_start,
    people_text,
    quoted,
    resolve_group,
)
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person

NAME = "create_event"


@dataclass(frozen=True)
class Plan:
    """A booking that passed every check: who, when, under what title."""

    owner: Person
    others: list[Person]
    begins: datetime
    ends: datetime
    title: str


def run(ctx: Context, arguments: Mapping[str, Any], tool_use_id: str | None, deadline: Deadline | None) -> str:
    def make(key: Key | None) -> str:
        plan = plan_of(ctx, arguments)
        faults.pause("between_check_and_insert")
        keys = [OWNER_KEY, *(p.key for p in plan.others)]
        return ctx.calendar.create(
            plan.title, plan.begins, plan.ends, keys, key, lambda event: booked_text(plan.owner, plan.others, event)
        )

    return change_once(ctx, NAME, arguments, tool_use_id, deadline, make)


def preview(ctx: Context, arguments: Mapping[str, Any]) -> str:
    plan = plan_of(ctx, arguments)
    span = format_window((plan.begins, plan.ends), plan.owner.tz)
    people = _and(["you", *(f"{p.name} ({p.key})" for p in plan.others)])
    summary = f"Book {plan.title!r} on {span} ({plan.owner.tz}) for {people}"
    for other in plan.others:  # the same sentence the booking's result has, for each other zone
        if other.tz != plan.owner.tz:
            summary += f"; for {other.name} that is {format_window((plan.begins, plan.ends), other.tz)} {other.tz}"
    note = ctx.calendar.invitations([p.key for p in plan.others])
    return f"{summary}. {note}" if note else summary


def side_effect(recorded: Booking | None) -> str:
    if recorded is None:
        return "Nothing was booked."
    if recorded.event_id is None:
        return f"The booking was made, and has since been cancelled: {recorded.result} Do not book it again."
    return f"The booking was made: {recorded.result} Do not book it again."


def plan_of(ctx: Context, arguments: Mapping[str, Any]) -> Plan:
    """Every check of a booking, in order; ToolError names the first that fails and what to do."""
    owner = ctx.calendar.owner()
    others = resolve_group(ctx.calendar, arguments["with"], arguments.get("also", []), field="with")
    start = arguments["start"]
    begins = parse_start(start, owner, ctx.clock)
    check_not_past(ctx, owner, start, begins)
    minutes = arguments["minutes"]
    check_minutes(minutes)
    title = check_title(arguments.get("title"), others)
    ends = begins + timedelta(minutes=minutes)
    check_slot(ctx, owner, others, (begins, ends), minutes, verb="booked", retry="create_event")
    return Plan(owner, others, begins, ends, title)


def check_not_past(ctx: Context, owner: Person, start: str, begins: datetime) -> None:
    now = ctx.clock.now()
    if begins < now:
        raise ToolError(
            f"start {start!r} ({format_moment(begins, owner.tz)} {owner.tz}) is in the past: "
            f"now is {format_moment(now, owner.tz)} {owner.tz}. Pick a later start, "
            "e.g. one from find_free_slots."
        )


def check_slot(
    ctx: Context,
    owner: Person,
    others: Sequence[Person],
    meeting: Interval,
    minutes: int,
    *,
    verb: str,
    retry: str,
    excluding: Event | None = None,
) -> None:
    """Working hours, the owner's rules, everyone free: the checks create_event and move_event share."""
    check_working_hours(owner, others, meeting)
    check_rules(ctx, owner, meeting, excluding, verb=verb)
    check_free(ctx, owner, others, meeting, minutes, verb=verb, retry=retry, excluding=excluding)


def check_working_hours(owner: Person, others: Sequence[Person], meeting: Interval) -> None:
    day = meeting[0].astimezone(ZoneInfo(owner.tz)).date()
    shared = shared_working_hours(owner, others, day, day)
    if any(start <= meeting[0] and meeting[1] <= end for start, end in shared):
        return
    where = f"{format_window(meeting, owner.tz)} ({owner.tz}) is outside working hours"
    hours = _and([f"{owner.name} works {owner.schedule}", *(f"{p.name} {p.schedule}" for p in others)])
    hours += ", Monday to Friday"
    everyone = {0: "you", 1: "both"}.get(len(others), "all of you")
    if shared:
        spans = ", ".join(format_span(interval, owner.tz) for interval in shared)
        advice = (
            f"on {format_day(day)} {everyone} work {spans} {owner.tz}. "
            "Pick a start so that the whole meeting fits inside."
        )
    else:
        advice = (
            f"they share no working hours on {format_day(day)}. Pick another day; "
            "find_free_slots lists the free windows."
        )
    raise ToolError(f"{where}: {hours}; {advice}")


def check_rules(ctx: Context, owner: Person, meeting: Interval, excluding: Event | None, *, verb: str) -> None:
    """The owner's structured preferences, each named when it refuses ("09:00 is before your 10:00 rule")."""
    rules = rules_of(ctx.calendar.preferences())
    zone = ZoneInfo(owner.tz)
    begins, ends = (moment.astimezone(zone) for moment in meeting)
    tail = f"Nothing was {verb}. Pick a time that keeps the rule (find_free_slots leaves such times out)."
    if rules.no_days and begins.weekday() in rules.no_days:
        rule = rules.no_days[begins.weekday()]
        raise ToolError(
            f"{format_day(begins.date())} is a day your rule keeps free (preference #{rule.id}: {rule.text!r}). {tail}"
        )
    if rules.not_before is not None and begins.time() < rules.not_before[0]:
        moment, rule = rules.not_before
        raise ToolError(
            f"{begins:%H:%M} is before your {moment:%H:%M} rule (preference #{rule.id}: {rule.text!r}). {tail}"
        )
    if rules.not_after is not None and (ends.date() > begins.date() or ends.time() > rules.not_after[0]):
        moment, rule = rules.not_after
        raise ToolError(
            f"{ends:%H:%M} is after your {moment:%H:%M} rule (preference #{rule.id}: {rule.text!r}). {tail}"
        )
    if rules.max_per_day is not None:
        cap, rule = rules.max_per_day
        day_start = datetime.combine(begins.date(), datetime.min.time(), tzinfo=zone)
        busy = ctx.calendar.busy([OWNER_KEY], day_start, day_start + timedelta(days=1), excluding=excluding)
        count = sum(1 for start, _ in busy[OWNER_KEY] if start.astimezone(zone).date() == begins.date())
        if count >= cap:
            raise ToolError(
                f"{format_day(begins.date())} already has {count} of your meetings, and your rule allows {cap} a day "
                f"(preference #{rule.id}: {rule.text!r}). {tail}"
            )


def check_free(
    ctx: Context,
    owner: Person,
    others: Sequence[Person],
    meeting: Interval,
    minutes: int,
    *,
    verb: str,
    retry: str,
    excluding: Event | None = None,
) -> None:
    clashes: dict[tuple[int, datetime], Event] = {}  # by id and start: occurrences of a repeating event share an id
    buffered = []
    for person in [owner, *others]:
        pad = timedelta(minutes=person.buffer_minutes)
        for event in ctx.calendar.events([person.key], meeting[0] - pad, meeting[1] + pad):
            if excluding is not None and (event.id, event.start) == (excluding.id, excluding.start):
                continue
            clashes[(event.id, event.start)] = event
            if pad and not (event.start < meeting[1] and event.end > meeting[0]):
                buffered.append(f"{person.name}'s {person.buffer_minutes}-minute buffer")
    if not clashes:
        return
    described = " and ".join(
        f"{quoted(event.title)} ({format_window((event.start, event.end), owner.tz)}; {', '.join(event.attendees)})"
        for event in sorted(clashes.values(), key=lambda event: (event.start, event.id))
    )
    if buffered:
        described += f" (within {', '.join(sorted(set(buffered)))})"
    day = meeting[0].astimezone(ZoneInfo(owner.tz)).date()
    search = group_search(ctx, owner, others, day, minutes, excluding=excluding)
    same_day = windows_on(search, day, owner.tz)
    if same_day:
        nearby = f"Free {minutes}-minute windows that day: {_list_windows(same_day, owner.tz)}."
    elif search.windows:
        nearby = (
            f"No {minutes}-minute window is free that day; that week has {_list_windows(search.windows, owner.tz)}."
        )
    else:
        nearby = f"No {minutes}-minute window is free in the rest of that week either."
    next_step = (
        f"call {retry} again with a start inside a free window."
        if search.windows
        else "call find_free_slots for the next week, or try a shorter meeting."
    )
    raise ToolError(
        f"{format_window(meeting, owner.tz)} ({owner.tz}) is not free: it overlaps {described}. "
        f"{nearby} Nothing was {verb}; {next_step}"
    )


def booked_text(owner: Person, others: Sequence[Person], event: Event) -> str:
    span = (event.start, event.end)
    text = (
        f"Booked {event.title!r} on {format_window(span, owner.tz)} ({owner.tz}) "
        f"for {people_text(owner, others)}. Event id: {event.id}."
    )
    return text + other_zones(owner, others, span)


def other_zones(owner: Person, others: Sequence[Person], span: Interval) -> str:
    return "".join(f" For {p.name} that is {format_window(span, p.tz)} {p.tz}." for p in others if p.tz != owner.tz)


def _list_windows(windows: list[Interval], tz: str) -> str:
    return ", ".join(format_window(window, tz) for window in windows)


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
