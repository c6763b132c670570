"""Several attendees, people's real hours (per weekday, days off, lunch, buffer), and the owner's rules,
as find_free_slots and create_event apply them."""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta

import pytest
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import ToolError, answer_call
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.people import edit_person
from scheduler_agent.calendar.prefs import add_preference
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.calendar.types import CalendarError, parse_days


@pytest.fixture
def demo_conn(any_conn: Connection) -> Connection:
    """These tests run on SQLite and on PostgreSQL (conftest.py `any_conn`)."""
    return any_conn


WEEK = "2026-08-31"


def find(tools: CalendarTools, **arguments: object) -> str:
    return tools.run("find_free_slots", {"week": WEEK, **arguments}, "toolu_f", Deadline.after(5))


def windows(text: str) -> list[str]:
    return [line[2:] for line in text.splitlines() if line.startswith("- ")]


# --- several attendees ------------------------------------------------------------------------


def test_the_seed_calls_are_unchanged(tools: CalendarTools) -> None:
    assert windows(find(tools, person="priya")) == [
        "Mon 2026-08-31 09:00-09:30",
        "Mon 2026-08-31 14:00-15:00",
        "Wed 2026-09-02 09:15-09:45",
    ]


def test_also_finds_where_everyone_works_and_is_free(tools: CalendarTools) -> None:
    text = find(tools, person="priya", also=["aiko"], minutes=60)
    assert text.splitlines()[0] == (
        "Free windows of at least 60 minutes for Priya Raman (priya), Aiko Tanaka (aiko) and you in the week of "
        "Mon 2026-08-31, times in Europe/London:"
    )
    assert windows(text) == ["Mon 2026-08-31 14:00-15:00"]  # Aiko starts at 14:00 London time


def test_a_booking_with_also_invites_everyone(tools: CalendarTools, demo_conn: Connection) -> None:
    arguments = {"with": "priya", "also": ["aiko", "priya"], "start": "2026-08-31T14:00", "minutes": 60}
    text = tools.run("create_event", arguments, "toolu_c", Deadline.after(5))
    assert text == (
        "Booked 'Meeting with Priya Raman and Aiko Tanaka' on Mon 2026-08-31 14:00-15:00 (Europe/London) for you "
        "(Jordan Lee), Priya Raman (priya) and Aiko Tanaka (aiko). Event id: 29. For Aiko Tanaka that is "
        "Mon 2026-08-31 09:00-10:00 America/New_York."
    )
    keys = [
        row[0]
        for row in demo_conn.execute(sql("SELECT person_key FROM event_attendees WHERE event_id = 29 ORDER BY 1"))
    ]
    assert keys == ["aiko", "priya", "you"]


def test_a_booking_outside_one_attendees_hours_names_them(tools: CalendarTools) -> None:
    arguments = {"with": "priya", "also": ["aiko"], "start": "2026-08-31T09:00", "minutes": 30}
    block = answer_call(tools, {"type": "tool_use", "id": "t", "name": "create_event", "input": arguments})
    assert "is outside working hours: Jordan Lee works 09:00-17:00 Europe/London, Priya Raman" in block["content"]
    assert (
        "Aiko Tanaka 09:00-17:00 America/New_York, Monday to Friday; on Mon 2026-08-31 all of you work 14:00-17:00"
        in (block["content"])
    )


def test_an_empty_week_says_whose_calendar_blocks_it(tools: CalendarTools, demo_conn: Connection) -> None:
    monday_two = datetime(2026, 8, 31, 13, 0, tzinfo=UTC)
    add_event(demo_conn, "Aiko's offsite", monday_two, monday_two.replace(hour=14), ["aiko"])
    with pytest.raises(ToolError) as raised:
        find(tools, person="priya", also=["aiko"], minutes=60)
    text = str(raised.value)
    assert text.startswith("No free 60-minute windows for priya, aiko and you in the week of Mon 2026-08-31")
    blocks = text[text.index(" What blocks it: ") :]
    assert "Aiko Tanaka's calendar (aiko) (without its events: Mon 2026-08-31 14:00-15:00)" in blocks
    assert "Priya Raman's calendar (priya) (without its events: Tue 2026-09-01 14:00-15:00" in blocks


# --- people as they really work ---------------------------------------------------------------


def test_a_lunch_break_and_a_day_off_take_time_out(tools: CalendarTools, demo_conn: Connection) -> None:
    edit_person(demo_conn, "priya", lunch=(time(14, 0), time(14, 30)), days=parse_days(["wed=off"]))
    assert windows(find(tools, person="priya")) == ["Mon 2026-08-31 09:00-09:30", "Mon 2026-08-31 14:30-15:00"]
    booked = answer_call(
        tools,
        {
            "type": "tool_use",
            "id": "t",
            "name": "create_event",
            "input": {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30},
        },
    )
    assert "is outside working hours" in booked["content"]
    assert "Priya Raman 09:00-17:00 Europe/London; Wed off; lunch 14:00-14:30" in booked["content"]
    assert "both work 09:00-14:00, 14:30-17:00 Europe/London" in booked["content"]


def test_hours_per_weekday_and_dates_off(tools: CalendarTools, demo_conn: Connection) -> None:
    edit_person(demo_conn, "priya", days=parse_days(["mon=14:30-17:00"]), days_off=(date(2026, 9, 2),))
    assert windows(find(tools, person="priya")) == ["Mon 2026-08-31 14:30-15:00"]


def test_a_buffer_keeps_time_free_around_meetings(tools: CalendarTools, demo_conn: Connection) -> None:
    edit_person(demo_conn, "priya", buffer_minutes=15)  # her workshop ends at 14:00 Monday
    found = windows(find(tools, person="priya"))
    assert "Mon 2026-08-31 14:15-15:00" in found
    assert "Mon 2026-08-31 09:00-09:30" not in found  # Weekly planning at 09:30 leaves her 15 minutes
    block = answer_call(
        tools,
        {
            "type": "tool_use",
            "id": "t",
            "name": "create_event",
            "input": {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30},
        },
    )
    assert "overlaps 'Customer onboarding workshop'" in block["content"]
    assert "(within Priya Raman's 15-minute buffer)" in block["content"]


def test_the_same_tools_see_each_edit_at_the_next_call(tools: CalendarTools, demo_conn: Connection) -> None:
    """A person is parsed once per distinct stored row (types.person_from_row): the next call after an edit
    reads the edited person, and after the edit is undone answers as the first call did."""
    before = find(tools, person="priya")
    edit_person(demo_conn, "priya", buffer_minutes=15)
    assert "Mon 2026-08-31 14:15-15:00" in windows(find(tools, person="priya"))
    edit_person(demo_conn, "priya", buffer_minutes=0)
    assert find(tools, person="priya") == before
    edit_person(demo_conn, "you", lunch=(time(9, 0), time(9, 30)))
    assert "Mon 2026-08-31 09:00-09:30" not in windows(find(tools, person="priya"))
    edit_person(demo_conn, "you", lunch=False)
    assert find(tools, person="priya") == before


def test_bad_hours_are_refused_with_an_example(demo_conn: Connection) -> None:
    with pytest.raises(CalendarError, match="--day 'sat=10:00-12:00' is not WEEKDAY=HOURS"):
        parse_days(["sat=10:00-12:00"])
    with pytest.raises(CalendarError, match="buffer 500 is out of range"):
        edit_person(demo_conn, "priya", buffer_minutes=500)
    with pytest.raises(CalendarError, match="end before they start"):
        edit_person(demo_conn, "priya", lunch=(time(14, 0), time(13, 0)))


# --- the owner's rules ---------------------------------------------------------------------


def test_not_before_leaves_mornings_out_and_is_named(tools: CalendarTools, demo_conn: Connection) -> None:
    add_preference(demo_conn, "No meetings before 10am", "not_before", "10:00")
    text = find(tools, person="priya")
    assert windows(text) == ["Mon 2026-08-31 14:00-15:00"]
    assert text.endswith("Your standing rules were applied: no meeting starts before 10:00 (preference #1).")
    early = {"with": "priya", "start": "2026-08-31T09:00", "minutes": 30}
    with pytest.raises(
        ToolError, match=r"09:00 is before your 10:00 rule \(preference #1: 'No meetings before 10am'\)"
    ):
        tools.run("create_event", early, "toolu_c", Deadline.after(5))


def test_not_after_no_days_and_max_per_day(tools: CalendarTools, demo_conn: Connection) -> None:
    add_preference(demo_conn, None, "not_after", "14:30")
    assert windows(find(tools, person="priya")) == [
        "Mon 2026-08-31 09:00-09:30",
        "Mon 2026-08-31 14:00-14:30",
        "Wed 2026-09-02 09:15-09:45",
    ]
    add_preference(demo_conn, "Keep Wednesdays for deep work", "no_days", "wed")
    assert windows(find(tools, person="priya")) == ["Mon 2026-08-31 09:00-09:30", "Mon 2026-08-31 14:00-14:30"]
    add_preference(demo_conn, None, "max_per_day", "3")  # Monday already has three of the owner's meetings
    with pytest.raises(ToolError) as raised:
        find(tools, person="priya")
    assert "What blocks it: your standing rules (" in str(raised.value)
    with pytest.raises(ToolError, match="already has 3 of your meetings, and your rule allows 3 a day"):
        tools.run("create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}, "t", Deadline.after(5))


@pytest.mark.parametrize(
    ("rule", "value", "message"),
    [
        ("not_before", "10am", "--not-before '10am' is not a time: give HH:MM"),
        ("no_days", "sunday", "--no-days 'sunday' must be weekdays"),
        ("max_per_day", "0", "--max-per-day '0' must be a whole number from 1 to 20"),
        ("sometimes", "x", "unknown rule 'sometimes'"),
    ],
)
def test_a_bad_rule_is_refused(demo_conn: Connection, rule: str, value: str, message: str) -> None:
    with pytest.raises(CalendarError, match=message):
        add_preference(demo_conn, None, rule, value)


def test_a_week_of_days_off_says_so_and_names_the_next_week(tools: CalendarTools, demo_conn: Connection) -> None:
    week = tuple(date(2026, 8, 31) + timedelta(days=offset) for offset in range(5))  # Monday to Friday
    edit_person(demo_conn, "priya", days_off=week)
    with pytest.raises(ToolError) as raised:
        find(tools, person="priya")
    assert "days off leave no day of that week when everyone works" in str(raised.value)
    assert "Try another week, e.g. the week after, Mon 2026-09-07." in str(raised.value)


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("find_free_slots", {"person": "priya", "week": "9999-12-31"}),
        ("list_events", {"start": "9999-12-30"}),
        ("create_event", {"with": "priya", "start": "9999-12-31T14:00", "minutes": 30}),
    ],
)
def test_a_date_at_the_end_of_the_calendar_is_an_answer_not_a_crash(
    tools: CalendarTools, name: str, arguments: dict
) -> None:  # type: ignore[type-arg]
    block = answer_call(tools, {"type": "tool_use", "id": "t", "name": name, "input": arguments})
    assert block["is_error"] is True
    assert "internal error" not in block["content"]
