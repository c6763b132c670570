"""The values in a tool call, checked: people, weeks, starts, lengths, titles, event ids, occurrences.

Input has already been checked against the schema (fields and types) by `answer_call`; here the values
are checked. Every failure is a `ToolError` whose text names the bad value and says what to do next:
the model reads it as a prompt. `quoted` is how text from outside (titles) reaches the model.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from datetime import UTC, date, datetime, timedelta
from zoneinfo import ZoneInfo

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.backend import Calendar
from scheduler_agent.calendar.clock import Clock, on_the_clock, out_of_calendar, within_calendar
from scheduler_agent.calendar.people import names_owner
from scheduler_agent.calendar.slots import format_day, monday_of
from scheduler_agent.calendar.types import OWNER_KEY, Person

MIN_MINUTES, MAX_MINUTES = 5, 480  # prompts/tools.json says the same: tests/test_tool_bounds.py ties them
DEFAULT_MINUTES = 30
MAX_TITLE = 200
MAX_QUOTED = 80  # a title from outside is cut to this many characters before the model reads it
MAX_ALSO = 8
_DATE = re.compile(r"\d{4}-\d{2}-\d{2}")
_START = re.compile(r"\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:00)?(Z|[+-]\d{2}:\d{2})?")


def quoted(text: str) -> str:
    """`text` as a quoted literal, cut to MAX_QUOTED characters: data inside quotes, never an instruction."""
    return repr(text if len(text) <= MAX_QUOTED else text[: MAX_QUOTED - 1] + "…")


def check_minutes(minutes: int) -> None:
    if not MIN_MINUTES <= minutes <= MAX_MINUTES:
        raise ToolError(
            f"minutes {minutes} is out of range: give a length from {MIN_MINUTES} to {MAX_MINUTES} minutes."
        )


def check_title(title: str | None, others: Sequence[Person]) -> str:
    cleaned = " ".join((title or "").split())
    if len(cleaned) > MAX_TITLE:
        raise ToolError(
            f"title {cleaned[:40]!r}... is {len(cleaned)} characters long: "
            f"give a short title of at most {MAX_TITLE} characters."
        )
    if cleaned:
        return cleaned
    return f"Meeting with {' and '.join(person.name for person in others)}"


def resolve_person(calendar: Calendar, text: str, *, field: str) -> Person:
    """The one person `text` names, else a ToolError that lists who is known."""
    matches = calendar.match(text)
    if len(matches) == 1:
        return matches[0]
    people = calendar.people()
    known = ", ".join(f"{p.key} ({p.name})" for p in people)
    if matches:
        several = ", ".join(f"{p.key} ({p.name})" for p in matches)
        raise ToolError(f"{field} {text!r} fits more than one person: {several}. Use one of those keys.")
    owner = calendar.owner()
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


def resolve_group(calendar: Calendar, first: str, also: Sequence[str], *, field: str) -> list[Person]:
    """The person `first` names and those in `also`, each once, in that order (never the owner)."""
    people = [resolve_person(calendar, first, field=field)]
    if len(also) > MAX_ALSO:
        raise ToolError(f"also lists {len(also)} people: at most {MAX_ALSO} can meet at once here.")
    for index, text in enumerate(also):
        if not isinstance(text, str):
            raise ToolError(f"also[{index}] must be a person's key as a string, got {text!r}.")
        person = resolve_person(calendar, text, field=f"also[{index}]")
        if person.key not in {p.key for p in people}:
            people.append(person)
    return people


def parse_week(text: str, owner: Person, clock: Clock) -> date:
    try:
        if _DATE.fullmatch(text.strip()):
            day = date.fromisoformat(text.strip())
            if not within_calendar(day):  # a week added to it would overflow
                raise ToolError(f"week {out_of_calendar(text)}.")
            return day
    except ValueError:
        pass
    today = clock.today(owner.tz)
    next_week = monday_of(today) + timedelta(days=7)
    raise ToolError(
        f"week {text!r} is not a date. Give any day of the wanted week as YYYY-MM-DD; "
        f"today is {format_day(today)}, so next week is {next_week.isoformat()}."
    )


SEARCH_YEARS = 10  # find_free_slots searches weeks up to this many years ahead (series are materialised on reach)


def check_searchable_week(day: date, owner: Person, clock: Clock) -> None:
    """Refuse a week that begins more than SEARCH_YEARS years after today: so distant a date is likely a mistake."""
    today = clock.today(owner.tz)
    last = _years_after(today, SEARCH_YEARS)
    if monday_of(day) > last:
        raise ToolError(
            f"week {day.isoformat()} is more than {SEARCH_YEARS} years ahead: free slots are searched for weeks "
            f"up to {last.isoformat()} (today is {format_day(today)}). Give a week before then, or ask the user "
            "whether so distant a date is meant."
        )


def _years_after(day: date, years: int) -> date:
    try:
        return day.replace(year=day.year + years)
    except ValueError:  # 29 February, in a year that has none
        return day.replace(year=day.year + years, day=28)


def parse_day(text: str, field: str, owner: Person, clock: Clock) -> date:
    """A calendar date (YYYY-MM-DD) for fields such as `occurrence`, `start` and `end` of list_events."""
    try:
        if _DATE.fullmatch(text.strip()):
            day = date.fromisoformat(text.strip())
            if not within_calendar(day):
                raise ToolError(f"{field} {out_of_calendar(text)}.")
            return day
    except ValueError:
        pass
    today = clock.today(owner.tz)
    raise ToolError(f"{field} {text!r} is not a date. Give YYYY-MM-DD; today is {format_day(today)}.")


def parse_start(text: str, owner: Person, clock: Clock) -> datetime:
    """An aware instant: a naive start is the owner's wall-clock time, an offset is converted."""
    value = text.strip()
    try:
        if not _START.fullmatch(value):
            raise ValueError(value)
        moment = datetime.fromisoformat(value)
        if not within_calendar(moment.date()):  # a zone or a length added to it would overflow
            raise ToolError(f"start {out_of_calendar(text)}.")
    except ValueError:
        today = clock.today(owner.tz)
        raise ToolError(
            f"start {text!r} is not a time. Give YYYY-MM-DDTHH:MM in the owner's time zone "
            f"({owner.tz}), e.g. {today.isoformat()}T14:00; today is {format_day(today)}."
        ) from None
    if moment.tzinfo is not None:
        return moment.astimezone(UTC)
    aware = on_the_clock(moment, ZoneInfo(owner.tz))
    if aware is None:
        raise ToolError(
            f"start {text!r} does not exist in {owner.tz}: the clocks skip that hour for "
            "daylight saving. Pick another time."
        )
    return aware.astimezone(UTC)


def attendees_of(calendar: Calendar, keys: Sequence[str]) -> list[Person]:
    """The people (not the owner) among `keys`, as stored."""
    wanted = set(keys) - {OWNER_KEY}
    return [person for person in calendar.people() if person.key in wanted]


def people_text(owner: Person, others: Sequence[Person]) -> str:
    """`you (Jordan Lee) and Priya Raman (priya)`, or with commas for more."""
    names = [f"you ({owner.name})", *(f"{p.name} ({p.key})" for p in others)]
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"
