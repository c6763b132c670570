"""find_free_slots: the windows of a week when the owner and one or more people are all free, and its texts.

A window lies inside everyone's working hours (per weekday, less days off and lunch), clear of
everyone's events widened by their buffer, inside the owner's structured rules, and from now on.
When a week has none, the text says why and whose calendar (or which rule) blocked it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.prefs import Rules, rules_of
from scheduler_agent.calendar.slots import (
    WEEKDAYS,
    Interval,
    NoWindowsReason,
    SlotSearch,
    format_day,
    format_moment,
    format_window,
    free_windows,
    minutes_of,
    monday_of,
    shared_working_hours,
    week_span,
)
from scheduler_agent.calendar.tools.base import Context
from scheduler_agent.calendar.tools.inputs import (
    DEFAULT_MINUTES,
    check_minutes,
    check_searchable_week,
    parse_week,
    resolve_group,
)
from scheduler_agent.calendar.types import OWNER_KEY, Event, Person


def run(ctx: Context, arguments: Mapping[str, Any], tool_use_id: str | None, deadline: Deadline | None) -> str:
    calendar = ctx.calendar
    owner = calendar.owner()
    people = resolve_group(calendar, arguments["person"], arguments.get("also", []), field="person")
    day = parse_week(arguments["week"], owner, ctx.clock)
    check_searchable_week(day, owner, ctx.clock)
    minutes = arguments.get("minutes", DEFAULT_MINUTES)
    check_minutes(minutes)
    rules = rules_of(calendar.preferences())
    search = group_search(ctx, owner, people, day, minutes, rules=rules)
    stale = calendar.staleness([owner.key, *(p.key for p in people)], ctx.clock.now())  # a feed gone stale
    if not search.windows:
        raise ToolError("\n".join(filter(None, [no_windows_text(ctx, owner, people, search), stale])))
    period = f"the week of {format_day(search.monday)}"
    if search.searched_from is not None:
        period = f"the rest of {period} (from now, {format_moment(search.searched_from, owner.tz)})"
    lines = [
        f"Free windows of at least {minutes} minutes for {_names(people)} and you in {period}, times in {owner.tz}:"
    ]
    lines += [f"- {format_window(window, owner.tz)}" for window in search.windows]
    applied = rules_line(rules)
    if applied:
        lines.append(applied)
    return "\n".join(lines + ([stale] if stale else []))


def group_search(
    ctx: Context,
    owner: Person,
    people: Sequence[Person],
    day: date,
    minutes: int,
    *,
    excluding: Event | None = None,
    without: str | None = None,
    rules: Rules | None = None,
) -> SlotSearch:
    """The free windows of the week holding `day`, from the calendar as it is now.

    `excluding` leaves one occurrence out (the one being moved); `without` leaves one person's events out,
    and `rules` replaces the owner's rules, to find out what blocks a week.
    """
    monday = monday_of(day)
    start, end = week_span(monday, owner.tz)
    everyone = [owner, *people]
    widest = timedelta(minutes=max(person.buffer_minutes for person in everyone))
    busy = ctx.calendar.busy([p.key for p in everyone], start - widest, end + widest, excluding=excluding)
    intervals: list[Interval] = []
    for person in everyone:
        if person.key == without:
            continue
        buffer = timedelta(minutes=person.buffer_minutes)
        if buffer:
            intervals += [(begins - buffer, ends + buffer) for begins, ends in busy[person.key]]
        else:  # the same times: a zero buffer widens nothing
            intervals += busy[person.key]
    rules = rules if rules is not None else rules_of(ctx.calendar.preferences())
    closed = rule_closed(rules, owner, monday, busy[OWNER_KEY])
    return free_windows(owner, people, intervals + closed, day, minutes, ctx.clock.now())


def rule_closed(rules: Rules, owner: Person, monday: date, owner_busy: list[Interval]) -> list[Interval]:
    """The times of the week the owner's rules keep free: hours before/after, days, days already full."""
    if rules.not_before is None and rules.not_after is None and not rules.no_days and rules.max_per_day is None:
        return []  # no rule closes any time
    zone = ZoneInfo(owner.tz)
    closed: list[Interval] = []
    for offset in range(WEEKDAYS):
        day = monday + timedelta(days=offset)
        closed += rules.closed(day, owner.tz)
        if rules.max_per_day is not None:
            count = sum(1 for begins, _ in owner_busy if begins.astimezone(zone).date() == day)
            if count >= rules.max_per_day[0]:
                closed += Rules(no_days={day.weekday(): rules.max_per_day[1]}).closed(day, owner.tz)
    return closed


def rules_line(rules: Rules) -> str:
    """The owner's structured rules, named, when there are any ('' otherwise: the text is as without them)."""
    named = [f"{preference.rule_text} (preference #{preference.id})" for preference in _rule_preferences(rules)]
    return f"Your standing rules were applied: {'; '.join(named)}." if named else ""


def _rule_preferences(rules: Rules) -> list[Any]:
    found = [entry[1] for entry in (rules.not_before, rules.not_after, rules.max_per_day) if entry is not None]
    found += list((rules.no_days or {}).values())
    unique = {preference.id: preference for preference in found}
    return [unique[key] for key in sorted(unique)]


def no_windows_text(ctx: Context, owner: Person, people: Sequence[Person], search: SlotSearch) -> str:
    week = format_day(search.monday)
    head = f"No free {search.minutes}-minute windows for {_keys(people)} and you in the week of {week}"
    hours = f"the working hours of {owner.name} ({owner.schedule}) and " + _and(
        [f"{p.name} ({p.schedule})" for p in people]
    )
    next_monday = format_day(monday_of(ctx.clock.today(owner.tz)) + timedelta(days=7))
    match search.reason:
        case NoWindowsReason.NO_SHARED_HOURS if _days_off_that_week(owner, people, search.monday):
            return (
                f"{head}: days off leave no day of that week when everyone works ({hours}). "
                f"Try another week, e.g. the week after, {format_day(search.monday + timedelta(days=7))}."
            )
        case NoWindowsReason.NO_SHARED_HOURS:
            apart = [p for p in people if not _overlap(owner, p, search.monday)]
            who = f" ({_and([p.name for p in apart])}'s never meet yours)" if apart and len(people) > 1 else ""
            return (
                f"{head}: {hours} never overlap on a weekday{who}, so no week has one. Tell the user: "
                f"create_event only books inside {_everyones(people)} working hours."
            )
        case NoWindowsReason.SHARED_HOURS_TOO_SHORT:
            longest = search.longest_shared_minutes
            return (
                f"{head}: {hours} overlap by at most {longest} minutes a day. "
                f"Try a meeting of at most {longest} minutes."
            )
        case NoWindowsReason.WEEK_OVER:
            now = f"now is {format_moment(ctx.clock.now(), owner.tz)} {owner.tz}"
            over = "that week is over" if search.searched_from is None else "too little of it is left"
            return f"{head}: {over} ({now}). Try a later week, e.g. the week of {next_monday}."
        case _:
            rest = "the week" if search.searched_from is None else "the rest of the week"
            both = "you both work" if len(people) == 1 else "you all work"
            if search.longest_free is None:
                why = f"{rest} is fully booked: every hour {both} has an event of one of you."
            else:
                stretch = search.longest_free
                why = (
                    f"{rest} is too busy: its longest free stretch is {minutes_of(stretch)} minutes "
                    f"({format_window(stretch, owner.tz)})."
                )
            return f"{head}; try the next week or a shorter meeting. Why: {why}{_blockers(ctx, owner, people, search)}"


def _blockers(ctx: Context, owner: Person, people: Sequence[Person], search: SlotSearch) -> str:
    """Whose calendar, or which rule, stands between this week and a window, with the windows there would be
    without it ('' when leaving out no one alone gives one)."""
    day, minutes = search.monday, search.minutes
    found = []
    rules = rules_of(ctx.calendar.preferences())
    if rules != Rules():
        freed = group_search(ctx, owner, people, day, minutes, rules=Rules()).windows
        if freed:
            named = rules_line(rules).removeprefix("Your standing rules were applied: ").rstrip(".")
            found.append(f"your standing rules ({named}; without them: {_some(freed, owner.tz)})")
    if len(people) > 1:
        for person in [owner, *people]:
            freed = group_search(ctx, owner, people, day, minutes, without=person.key).windows
            if freed:
                whose = "your calendar" if person.is_owner else f"{person.name}'s calendar ({person.key})"
                found.append(f"{whose} (without its events: {_some(freed, owner.tz)})")
    if not found:
        return ""
    return f" What blocks it: {'; '.join(found)}."


def _some(windows: Sequence[Interval], tz: str, most: int = 2) -> str:
    shown = ", ".join(format_window(window, tz) for window in windows[:most])
    return shown + (f" and {len(windows) - most} more" if len(windows) > most else "")


def _days_off_that_week(owner: Person, people: Sequence[Person], monday: date) -> bool:
    friday = monday + timedelta(days=WEEKDAYS - 1)
    return any(monday <= day <= friday for person in [owner, *people] for day in person.days_off)


def _overlap(owner: Person, person: Person, monday: date) -> bool:
    return bool(shared_working_hours(owner, person, monday, monday + timedelta(days=WEEKDAYS - 1)))


def _names(people: Sequence[Person]) -> str:
    return ", ".join(f"{p.name} ({p.key})" for p in people)


def _keys(people: Sequence[Person]) -> str:
    return ", ".join(p.key for p in people)


def _everyones(people: Sequence[Person]) -> str:
    return "both people's" if len(people) == 1 else "everyone's"


def _and(items: Sequence[str]) -> str:
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"


def windows_on(search: SlotSearch, day: date, tz: str) -> list[Interval]:
    return [w for w in search.windows if w[0].astimezone(ZoneInfo(tz)).date() == day]
