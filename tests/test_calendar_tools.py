"""The two tools on the demo calendar: their texts, their bookings, every error path."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime, time
from pathlib import Path
from typing import Any, ClassVar

import pytest
from helpers import demo_clock, open_in_database
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import MAX_RESULT_CHARS, ToolError, answer_call
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.people import add_person
from scheduler_agent.calendar.tools import CalendarTools


@pytest.fixture
def demo_conn(any_conn: Connection) -> Connection:
    """These tests run on SQLite and on PostgreSQL (conftest.py `any_conn`)."""
    return any_conn


DEMO_CLOCK = demo_clock()
DEMO_WINDOWS = (
    "Free windows of at least 30 minutes for Priya Raman (priya) and you in the week of Mon 2026-08-31, "
    "times in Europe/London:\n"
    "- Mon 2026-08-31 09:00-09:30\n"
    "- Mon 2026-08-31 14:00-15:00\n"
    "- Wed 2026-09-02 09:15-09:45"
)
HOUR = Deadline.after(3600)  # a deadline no test reaches
KNOWN = "Known people: aiko (Aiko Tanaka), marco (Marco Rossi), priya (Priya Raman). Use one of those keys"


def event_count(conn: Connection) -> int:
    count: int = conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0]
    return count


def call(tools: CalendarTools, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    return answer_call(tools, {"type": "tool_use", "id": "toolu_test", "name": name, "input": arguments})


# --- definitions --------------------------------------------------------------------------


def test_definitions_are_prompts_tools_json(tools: CalendarTools) -> None:
    path = Path(__file__).parent.parent / "prompts" / "tools.json"
    assert tools.definitions == json.loads(path.read_text(encoding="utf-8"))
    assert [d["name"] for d in tools.definitions] == [
        "find_free_slots",
        "create_event",
        "list_events",
        "move_event",
        "cancel_event",
    ]
    for definition in tools.definitions:
        assert set(definition) == {"name", "description", "input_schema"}
        schema = definition["input_schema"]
        assert schema["type"] == "object"
        assert schema["additionalProperties"] is False
        assert set(schema["required"]) <= set(schema["properties"])
        assert "time zone" in definition["description"]
    assert tools.definitions is tools.definitions  # parsed once per toolbox: the loop reads it at every call
    tools.definitions.clear()  # one toolbox's copy: a change to it never reaches another toolbox
    assert len(CalendarTools(tools.conn, tools.clock).definitions) == 5


# --- find_free_slots ----------------------------------------------------------------------


def test_find_free_slots_on_the_demo_week(tools: CalendarTools) -> None:
    assert tools.run("find_free_slots", {"person": "priya", "week": "2026-08-31"}, "toolu_1", HOUR) == DEMO_WINDOWS
    # Any day of that week, the name instead of the key, and the default length all agree.
    assert (
        tools.run("find_free_slots", {"person": "Priya Raman", "week": "2026-09-03"}, "toolu_2", HOUR) == DEMO_WINDOWS
    )


def test_find_free_slots_searches_the_week_ten_years_ahead(tools: CalendarTools) -> None:
    """Today is Thu 2026-08-27: the week holding 2036-08-27 is the last one searched (its Monday is before it)."""
    text = tools.run("find_free_slots", {"person": "priya", "week": "2036-08-27"}, "toolu_1", HOUR)
    assert text.startswith(
        "Free windows of at least 30 minutes for Priya Raman (priya) and you in the week of Mon 2036-08-25"
    )


def test_find_free_slots_through_answer_call(tools: CalendarTools) -> None:
    result = call(tools, "find_free_slots", {"person": "priya", "week": "2026-08-31", "minutes": 30})
    assert result == {"type": "tool_result", "tool_use_id": "toolu_test", "content": DEMO_WINDOWS}


def test_find_free_slots_in_the_current_week_starts_from_now(demo_conn: Connection) -> None:
    tools = CalendarTools(demo_conn, demo_clock(at=time(9, 2)))
    text = tools.find_free_slots("priya", "2026-08-27")
    assert text.startswith(
        "Free windows of at least 30 minutes for Priya Raman (priya) and you in the rest of the week of "
        "Mon 2026-08-24 (from now, Thu 2026-08-27 09:05), times in Europe/London:\n"
        "- Thu 2026-08-27 09:05-10:00\n"
    )


# --- create_event -------------------------------------------------------------------------


def test_create_event_books_and_stores_the_event(tools: CalendarTools, demo_conn: Connection) -> None:
    before = event_count(demo_conn)
    text = tools.run("create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}, "toolu_9", HOUR)
    assert text == (
        "Booked 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London) "
        f"for you (Jordan Lee) and Priya Raman (priya). Event id: {before + 1}."
    )
    row = demo_conn.execute(sql("SELECT * FROM events WHERE id = :p1"), {"p1": before + 1}).fetchone()
    assert (row.title, row.start_utc, row.end_utc) == (
        "Meeting with Priya Raman",
        "2026-08-31T13:00:00Z",
        "2026-08-31T13:30:00Z",
    )
    attendees = demo_conn.execute(
        sql("SELECT person_key FROM event_attendees WHERE event_id = :id ORDER BY 1"), {"id": row.id}
    )
    assert [r[0] for r in attendees] == ["priya", "you"]
    # The booked half hour is gone from the free windows.
    assert "- Mon 2026-08-31 14:30-15:00" in tools.find_free_slots("priya", "2026-08-31")
    assert not open_in_database(demo_conn)


@pytest.mark.parametrize(
    ("start", "booked"),
    [
        ("2026-08-31T15:00+02:00", "Mon 2026-08-31 14:00-14:45"),  # converted from +02:00
        ("2026-08-31T13:00Z", "Mon 2026-08-31 14:00-14:45"),
        ("2026-08-31 14:00", "Mon 2026-08-31 14:00-14:45"),
        ("2026-08-31T14:00:00", "Mon 2026-08-31 14:00-14:45"),
    ],
)
def test_create_event_start_forms(tools: CalendarTools, start: str, booked: str) -> None:
    text = tools.create_event("priya", start, 45, "  Roadmap   chat ")
    assert text.startswith(f"Booked 'Roadmap chat' on {booked} (Europe/London)")


def test_create_event_names_the_other_persons_local_time(tools: CalendarTools) -> None:
    text = tools.create_event("marco", "2026-08-31T14:00", 30)
    assert text.endswith("For Marco Rossi that is Mon 2026-08-31 15:00-15:30 Europe/Rome.")


def test_a_conflict_names_the_event_and_the_free_windows_that_day(tools: CalendarTools, demo_conn: Connection) -> None:
    before = event_count(demo_conn)
    with pytest.raises(ToolError) as raised:
        tools.create_event("priya", "2026-08-31T10:00", 30)
    assert str(raised.value) == (
        "Mon 2026-08-31 10:00-10:30 (Europe/London) is not free: it overlaps 'Weekly planning' "
        "(Mon 2026-08-31 09:30-10:30; you, marco, priya). Free 30-minute windows that day: "
        "Mon 2026-08-31 09:00-09:30, Mon 2026-08-31 14:00-15:00. Nothing was booked; call create_event "
        "again with a start inside a free window."
    )
    assert event_count(demo_conn) == before
    assert not open_in_database(demo_conn)


def test_a_conflict_on_a_day_without_windows_gives_the_weeks(tools: CalendarTools) -> None:
    with pytest.raises(ToolError) as raised:
        tools.create_event("priya", "2026-09-03T10:00", 60)
    text = str(raised.value)
    assert "'Leadership offsite' (Thu 2026-09-03 09:00-12:00; you)" in text
    assert "No 60-minute window is free that day; that week has Mon 2026-08-31 14:00-15:00." in text


@pytest.mark.parametrize(
    ("start", "clash"),
    [
        ("2026-08-31T11:00", "'Budget review' (Mon 2026-08-31 10:30-12:00; you)"),  # the owner's alone
        ("2026-08-31T13:00", "'Customer onboarding workshop' (Mon 2026-08-31 11:30-14:00; priya)"),  # Priya's
        ("2026-08-31T14:45", "'Hiring panel' (Mon 2026-08-31 15:00-17:00; you)"),  # runs into it
    ],
)
def test_a_booking_is_refused_when_either_person_is_busy(
    tools: CalendarTools, demo_conn: Connection, start: str, clash: str
) -> None:
    before = event_count(demo_conn)
    with pytest.raises(ToolError, match="is not free") as raised:
        tools.create_event("priya", start, 30)
    assert clash in str(raised.value)
    assert event_count(demo_conn) == before


def test_booking_twice_in_the_same_slot_is_refused_the_second_time(tools: CalendarTools) -> None:
    tools.create_event("priya", "2026-08-31T14:00", 30)
    with pytest.raises(ToolError, match="'Meeting with Priya Raman' \\(Mon 2026-08-31 14:00-14:30; you, priya\\)"):
        tools.create_event("priya", "2026-08-31T14:15", 30)


# --- every error path, as the model reads it ----------------------------------------------


def owner_only(conn: Connection) -> None:
    conn.execute(sql("DELETE FROM event_attendees"))
    conn.execute(sql("DELETE FROM events"))
    conn.execute(sql("DELETE FROM people WHERE key <> 'you'"))


def add_alexes(conn: Connection) -> None:
    add_person(conn, "alex-k", "Alex Kim", "Europe/London", time(9), time(17))
    add_person(conn, "alex-m", "Alex Moore", "Europe/London", time(9), time(17))


def add_kenji(conn: Connection) -> None:
    add_person(conn, "kenji", "Kenji Sato", "Asia/Tokyo", time(9), time(17))


def book_priyas_week(conn: Connection) -> None:
    monday, saturday = datetime(2026, 8, 31, tzinfo=UTC), datetime(2026, 9, 5, tzinfo=UTC)
    add_event(conn, "Conference week", monday, saturday, ["priya"])


def no_owner(conn: Connection) -> None:
    owner_only(conn)
    conn.execute(sql("DELETE FROM people"))


def nothing(conn: Connection) -> None:
    """The demo calendar as it is."""


@dataclass(frozen=True)
class Case:
    id: str
    tool: str
    arguments: dict[str, Any]
    expected: list[str]  # each a part of the text: the bad value, and the next step
    setup: Callable[[Connection], None] = nothing
    clock: Clock = field(default=DEMO_CLOCK)


def slots(person: str = "priya", week: str = "2026-08-31", **more: Any) -> dict[str, Any]:
    return {"person": person, "week": week, **more}


def booking(with_: str = "priya", start: str = "2026-08-31T14:00", minutes: int = 30, **more: Any) -> dict[str, Any]:
    return {"with": with_, "start": start, "minutes": minutes, **more}


FRIDAY_LATE = Clock.pinned_at(date(2026, 8, 28), time(16, 36), "Europe/London")

CASES = [
    # find_free_slots
    Case("slots-unknown-person", "find_free_slots", slots("sam"), ["No one called 'sam' is in the calendar.", KNOWN]),
    Case(
        "slots-no-people",
        "find_free_slots",
        slots("priya"),
        ["No one called 'priya'", "no other people yet", "calendar add-person"],
        setup=owner_only,
    ),
    Case(
        "slots-ambiguous-person",
        "find_free_slots",
        slots("alex"),
        ["person 'alex' fits more than one person: alex-k (Alex Kim), alex-m (Alex Moore).", "Use one of those keys"],
        setup=add_alexes,
    ),
    Case(
        "slots-owner-as-person",
        "find_free_slots",
        slots("you"),
        ["person 'you' is the owner (Jordan Lee)", "Give the other person instead: one of aiko (Aiko Tanaka)"],
    ),
    Case(
        "slots-week-words",
        "find_free_slots",
        slots(week="next week"),
        [
            "week 'next week' is not a date. Give any day of the wanted week as YYYY-MM-DD; today is Thu "
            "2026-08-27, so next week is 2026-08-31."
        ],
    ),
    Case("slots-week-impossible", "find_free_slots", slots(week="2026-02-30"), ["week '2026-02-30' is not a date"]),
    Case(
        "slots-week-with-time", "find_free_slots", slots(week="2026-08-31T09:00"), ["'2026-08-31T09:00'", "YYYY-MM-DD"]
    ),
    Case(
        "slots-week-too-far",
        "find_free_slots",
        slots(week="2036-09-01"),  # the Monday after 2036-08-27, ten years after today
        [
            "week 2036-09-01 is more than 10 years ahead: free slots are searched for weeks up to 2036-08-27 "
            "(today is Thu 2026-08-27). Give a week before then, or ask the user whether so distant a date is meant."
        ],
    ),
    Case("slots-minutes-low", "find_free_slots", slots(minutes=4), ["minutes 4 is out of range", "from 5 to 480"]),
    Case("slots-minutes-high", "find_free_slots", slots(minutes=481), ["minutes 481 is out of range", "from 5 to 480"]),
    Case(
        "slots-too-busy",
        "find_free_slots",
        slots(minutes=90),
        [
            "No free 90-minute windows for priya and you in the week of Mon 2026-08-31; try the next week or "
            "a shorter meeting. Why: the week is too busy: its longest free stretch is 60 minutes "
            "(Mon 2026-08-31 14:00-15:00).",
        ],
    ),
    Case(
        "slots-fully-booked",
        "find_free_slots",
        slots(),
        [
            "No free 30-minute windows for priya and you in the week of Mon 2026-08-31; try the next week or "
            "a shorter meeting. Why: the week is fully booked",
        ],
        setup=book_priyas_week,
    ),
    Case(
        "slots-week-over",
        "find_free_slots",
        slots(week="2026-08-17"),
        [
            "No free 30-minute windows for priya and you in the week of Mon 2026-08-17",
            "that week is over (now is Thu 2026-08-27 09:00 Europe/London)",
            "Try a later week, e.g. the week of Mon 2026-08-31.",
        ],
    ),
    Case(
        "slots-rest-of-week-too-short",
        "find_free_slots",
        slots(week="2026-08-28"),
        ["in the week of Mon 2026-08-24", "too little of it is left (now is Fri 2026-08-28 16:36", "Mon 2026-08-31"],
        clock=FRIDAY_LATE,
    ),
    Case(
        "slots-hours-never-overlap",
        "find_free_slots",
        slots("kenji"),
        [
            "No free 30-minute windows for kenji and you in the week of Mon 2026-08-31",
            "Jordan Lee (09:00-17:00 Europe/London) and Kenji Sato (09:00-17:00 Asia/Tokyo) never overlap",
            "Tell the user",
        ],
        setup=add_kenji,
    ),
    Case(
        "slots-hours-overlap-too-short",
        "find_free_slots",
        slots("aiko", minutes=240),
        ["No free 240-minute windows for aiko", "overlap by at most 180 minutes a day", "at most 180 minutes"],
    ),
    Case(
        "slots-no-owner",
        "find_free_slots",
        slots(),
        ["The calendar cannot be used: this calendar has no owner yet", "calendar set-owner", "Tell the user"],
        setup=no_owner,
    ),
    # create_event
    Case("book-unknown-person", "create_event", booking("sam"), ["No one called 'sam' is in the calendar.", KNOWN]),
    Case(
        "book-owner-as-person",
        "create_event",
        booking("Jordan Lee"),
        ["with 'Jordan Lee' is the owner (Jordan Lee)", "Give the other person instead"],
    ),
    Case(
        "book-ambiguous-person",
        "create_event",
        booking("Alex"),
        ["with 'Alex' fits more than one person: alex-k (Alex Kim), alex-m (Alex Moore)."],
        setup=add_alexes,
    ),
    Case(
        "book-start-words",
        "create_event",
        booking(start="Monday 2pm"),
        [
            "start 'Monday 2pm' is not a time. Give YYYY-MM-DDTHH:MM in the owner's time zone (Europe/London), "
            "e.g. 2026-08-27T14:00; today is Thu 2026-08-27."
        ],
    ),
    Case("book-start-date-only", "create_event", booking(start="2026-08-31"), ["start '2026-08-31' is not a time"]),
    Case(
        "book-start-seconds",
        "create_event",
        booking(start="2026-08-31T14:00:30"),
        ["'2026-08-31T14:00:30' is not a time"],
    ),
    Case(
        "book-start-impossible", "create_event", booking(start="2026-08-32T14:00"), ["'2026-08-32T14:00' is not a time"]
    ),
    Case(
        "book-start-skipped-by-dst",
        "create_event",
        booking(start="2027-03-28T01:30"),
        ["start '2027-03-28T01:30' does not exist in Europe/London", "Pick another time"],
    ),
    Case(
        "book-start-past",
        "create_event",
        booking(start="2026-08-26T10:00"),
        [
            "start '2026-08-26T10:00' (Wed 2026-08-26 10:00 Europe/London) is in the past: now is Thu 2026-08-27 "
            "09:00 Europe/London. Pick a later start"
        ],
    ),
    Case("book-minutes-low", "create_event", booking(minutes=0), ["minutes 0 is out of range", "from 5 to 480"]),
    Case("book-minutes-high", "create_event", booking(minutes=600), ["minutes 600 is out of range", "from 5 to 480"]),
    Case(
        "book-title-long",
        "create_event",
        booking(title="x" * 201),
        ["is 201 characters long", "at most 200 characters"],
    ),
    Case(
        "book-before-hours",
        "create_event",
        booking(start="2026-08-31T08:30"),
        [
            "Mon 2026-08-31 08:30-09:00 (Europe/London) is outside working hours: Jordan Lee works 09:00-17:00 "
            "Europe/London and Priya Raman 09:00-17:00 Europe/London, Monday to Friday; on Mon 2026-08-31 both "
            "work 09:00-17:00 Europe/London. Pick a start so that the whole meeting fits inside."
        ],
    ),
    Case(
        "book-past-the-others-hours",
        "create_event",
        booking("marco", start="2026-08-31T15:45"),
        ["Mon 2026-08-31 15:45-16:15", "Marco Rossi 09:00-17:00 Europe/Rome", "both work 09:00-16:00 Europe/London"],
    ),
    Case(
        "book-weekend",
        "create_event",
        booking(start="2026-09-05T10:00"),
        ["Sat 2026-09-05 10:00-10:30", "they share no working hours on Sat 2026-09-05. Pick another day"],
    ),
    Case(
        "book-conflict",
        "create_event",
        booking(start="2026-08-31T09:15"),
        ["overlaps 'Weekly planning' (Mon 2026-08-31 09:30-10:30; you, marco, priya)", "Mon 2026-08-31 09:00-09:30"],
    ),
    Case(
        "book-conflict-week-full",
        "create_event",
        booking(start="2026-09-02T09:15", minutes=90),
        [
            "overlaps 'Research synthesis' (Wed 2026-09-02 09:45-12:00; priya)",
            "No 90-minute window is free in the rest of that week either.",
            "call find_free_slots for the next week, or try a shorter meeting.",
        ],
    ),
    Case(
        "book-no-owner",
        "create_event",
        booking(),
        ["The calendar cannot be used: this calendar has no owner yet", "calendar seed-demo"],
        setup=no_owner,
    ),
    # neither
    Case(
        "unknown-tool", "delete_event", {}, ["There is no tool named 'delete_event'", "find_free_slots, create_event"]
    ),
]


@pytest.mark.parametrize("case", CASES, ids=[case.id for case in CASES])
def test_every_error_names_the_bad_value_and_the_next_step(demo_conn: Connection, case: Case) -> None:
    case.setup(demo_conn)
    before = event_count(demo_conn)
    tools = CalendarTools(demo_conn, case.clock)
    with pytest.raises(ToolError) as raised:
        tools.run(case.tool, case.arguments, "toolu_err", HOUR)
    text = str(raised.value)
    for part in case.expected:
        assert part in text
    assert "\n" not in text  # one paragraph the model reads at once
    assert event_count(demo_conn) == before
    assert not open_in_database(demo_conn)


def test_an_error_reaches_the_model_as_is_error(tools: CalendarTools) -> None:
    result = call(tools, "create_event", booking("sam"))
    assert result["is_error"] is True
    assert result["content"].startswith("No one called 'sam' is in the calendar.")


def test_ids_of_the_table_are_unique() -> None:
    assert len({case.id for case in CASES}) == len(CASES)


# --- a long result is cut -----------------------------------------------------------------


class ManyLines:
    """A toolbox whose one tool answers `lines` numbered lines."""

    definitions: ClassVar[list[JSON]] = [
        {"name": "list", "description": "list lines", "input_schema": {"type": "object", "properties": {}}}
    ]

    def __init__(self, lines: int) -> None:
        self.lines = lines
        self.deadline_seconds = 30.0

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        return "\n".join(f"line {n:05d} of the listing" for n in range(self.lines))

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        return None


def test_a_long_result_is_cut_with_a_note() -> None:
    whole = ManyLines(1000).run("list", {}, "toolu_l", HOUR)
    block = answer_call(ManyLines(1000), {"type": "tool_use", "id": "toolu_l", "name": "list", "input": {}})
    text = block["content"]
    assert set(block) == {"type", "tool_use_id", "content"}  # still an ordinary result
    assert len(text) <= MAX_RESULT_CHARS
    kept, note = text.rsplit("\n", 1)
    assert whole.startswith(kept + "\n")  # cut at a line end, nothing changed before it
    assert note == (
        f"[Cut at {len(kept)} of {len(whole)} characters: the rest was left out. "
        "Ask for less at once, e.g. a narrower range or one person or week at a time.]"
    )


def test_a_result_within_the_limit_is_whole() -> None:
    whole = ManyLines(100).run("list", {}, "toolu_l", HOUR)
    assert len(whole) <= MAX_RESULT_CHARS
    block = answer_call(ManyLines(100), {"type": "tool_use", "id": "toolu_l", "name": "list", "input": {}})
    assert block["content"] == whole
