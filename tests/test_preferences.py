"""Standing preferences live in the list: rendered into the system prompt (nothing when there are none),
rendered again on each new user turn, sent as stored on a resume; carried by a cassette's fixture."""

from __future__ import annotations

from datetime import date, time
from pathlib import Path

import pytest
from helpers import demo_clock, scripted_send
from sqlalchemy import Connection
from sqlalchemy import text as sql
from sqlalchemy.exc import IntegrityError

from scheduler_agent.agent.errors import ModelUnavailable
from scheduler_agent.agent.events import ignore
from scheduler_agent.calendar.fixtures import export_fixture, load_fixture
from scheduler_agent.calendar.people import edit_person
from scheduler_agent.calendar.prefs import add_preference, remove_preference
from scheduler_agent.calendar.types import parse_days
from scheduler_agent.lessons.scripts import OVERLOADED
from scheduler_agent.session.prompt_loader import render
from scheduler_agent.session.session import Session, Settings, system_prompt
from scheduler_agent.storage import db
from scheduler_agent.storage.migrations import HEAD
from scheduler_agent.testing.scripted_server import Reply, text


@pytest.fixture
def demo_conn(any_conn: Connection) -> Connection:
    """These tests run on SQLite and on PostgreSQL (conftest.py `any_conn`)."""
    return any_conn


CLOCK = demo_clock()
BLOCK = "Standing preferences of Jordan Lee"


def test_without_preferences_the_prompt_is_the_template_with_nothing_added(demo_conn: Connection) -> None:
    prompt = system_prompt(demo_conn, CLOCK)
    assert BLOCK not in prompt
    assert "- priya: Priya Raman, Europe/London\n\nHow to work:" in prompt  # the people, then straight on
    people = (
        "- aiko: Aiko Tanaka, America/New_York\n- marco: Marco Rossi, Europe/Rome\n- priya: Priya Raman, Europe/London"
    )
    expected = render(
        "system.md",
        owner_name="Jordan Lee",
        owner_tz="Europe/London",
        weekday="Thursday",
        today="2026-08-27",
        next_monday="2026-08-31",
        people=people,
        preferences="",
    )
    assert prompt == expected


def test_preferences_are_rendered_after_the_people(demo_conn: Connection) -> None:
    add_preference(demo_conn, "No meetings before 10am", "not_before", "10:00")
    add_preference(demo_conn, "Prefer afternoons for 1:1s")
    prompt = system_prompt(demo_conn, CLOCK)
    assert (
        "- priya: Priya Raman, Europe/London\n\n"
        "Standing preferences of Jordan Lee (set with `calendar prefs`; follow them in every booking):\n"
        "- #1 No meetings before 10am [the tools check this: no meeting starts before 10:00]\n"
        "- #2 Prefer afternoons for 1:1s\n\nHow to work:"
    ) in prompt
    remove_preference(demo_conn, 1)
    assert "#1" not in system_prompt(demo_conn, CLOCK)


def test_a_new_turn_renders_them_again_and_a_resume_sends_the_stored_prompt(demo_conn: Connection) -> None:
    with scripted_send([Reply([text("Hello.")]), OVERLOADED, Reply([text("Resumed.")])]) as (send, server):
        session = Session(demo_conn, CLOCK, send, Settings("claude-sonnet-5-5", 5), ignore)
        session.store()
        session.ask("Hi")
        cid = session.cid  # the conversation is stored with its first turn
        assert cid is not None
        add_preference(demo_conn, "No meetings on Fridays", "no_days", "fri")
        with pytest.raises(ModelUnavailable):
            session.ask("Anything on Friday?")  # this new turn renders the prompt again: with the preference
        add_preference(demo_conn, "Never before 11", "not_before", "11:00")  # after the turn's prompt was stored
        resumed = Session.stored(demo_conn, cid, send, Settings("claude-sonnet-5-5", 5), ignore, None)
        assert resumed.resume().text == "Resumed."
        first, second, third = (body["system"] for body in server.received)
    assert BLOCK not in first
    assert "- #1 No meetings on Fridays" in second
    assert third == second  # the resume sent the stored prompt, without the later preference
    assert "Never before 11" not in third


def test_the_fixture_carries_preferences_and_real_hours(demo_conn: Connection, tmp_path: Path) -> None:
    edit_person(
        demo_conn,
        "priya",
        days=parse_days(["fri=off", "mon=10:00-16:00"]),
        days_off=(date(2026, 9, 3),),
        buffer_minutes=10,
        lunch=(time(12, 30), time(13, 30)),
    )
    edit_person(demo_conn, "you", buffer_minutes=5)
    add_preference(demo_conn, "No meetings before 10am", "not_before", "10:00")
    add_preference(demo_conn, "Keep it short")
    fixture = export_fixture(demo_conn)
    assert fixture["people"][2] == {
        "key": "priya",
        "name": "Priya Raman",
        "tz": "Europe/London",
        "hours": "09:00-17:00",
        "days": "mon=10:00-16:00 fri=off",
        "days_off": ["2026-09-03"],
        "buffer": 10,
        "lunch": "12:30-13:30",
    }
    assert fixture["preferences"] == [
        {"text": "No meetings before 10am", "rule": "not_before", "value": "10:00"},
        {"text": "Keep it short"},
    ]
    copy = db.connect(tmp_path / "copy.db")
    load_fixture(copy, fixture)
    assert export_fixture(copy) == fixture
    assert load_fixture(copy, fixture) == 0  # loading it again changes nothing
    assert export_fixture(copy) == fixture


def test_the_migrations_keep_old_rows_as_they_were(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    old = db.connect(path, to="m013")  # as the version before m014 left it
    old.execute(
        sql("INSERT INTO people (key, name, tz, work_start, work_end) VALUES ('you', 'Jo', 'UTC', '09:00', '17:00')")
    )
    old.execute(sql("INSERT INTO bookings (tool_use_id, event_id, result) VALUES ('toolu_old', NULL, 'Booked it.')"))
    old.close()
    conn = db.connect(path)
    assert db.revision(conn) == HEAD
    booking = conn.execute(sql("SELECT kind, input_hash, result FROM bookings")).fetchone()
    assert tuple(booking) == ("create_event", "", "Booked it.")
    person = conn.execute(sql("SELECT days, days_off, buffer_minutes, lunch FROM people")).fetchone()
    assert tuple(person) == ("", "", 0, "")
    with pytest.raises(IntegrityError):
        conn.execute(sql("INSERT INTO bookings (tool_use_id, result, kind) VALUES ('t2', 'x', 'delete_everything')"))
    with pytest.raises(IntegrityError):
        conn.execute(sql("INSERT INTO preferences (text, rule) VALUES ('x', 'sometimes')"))
