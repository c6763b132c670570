"""The three lessons of the scheduling tools replay, and leave the calendar they teach about."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from scheduler_agent.agent.events import Event, RequestSent
from scheduler_agent.agent.types import JSON
from scheduler_agent.lessons.catalogue import cassettes_dir
from scheduler_agent.lessons.scripts import LESSONS
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.playback.replay import Replayed, replay


def replayed(name: str, tmp_path: Path) -> tuple[Replayed, list[JSON], sqlite3.Connection]:
    requests: list[JSON] = []

    def listen(event: Event) -> None:
        if isinstance(event, RequestSent):
            requests.append(event.request)

    result = replay(cassettes_dir() / f"{name}.yaml", report=listen, keep_db=tmp_path)
    assert result.exit_code == 0
    return result, requests, sqlite3.connect(tmp_path / "calendar.db")


def results(messages: list[JSON]) -> list[JSON]:
    return [b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


def test_reschedule_moves_the_meeting_instead_of_booking_a_second(tmp_path: Path) -> None:
    result, _, conn = replayed("reschedule", tmp_path)
    moved = results(result.messages)[-1]
    assert "is_error" not in moved
    assert moved["content"].startswith(
        "Moved 'Meeting with Priya Raman' from Mon 2026-08-31 14:00-14:30 to Mon 2026-08-31 14:00-14:45"
    )
    meetings = conn.execute(
        "SELECT id, start_utc, end_utc FROM events WHERE title = 'Meeting with Priya Raman'"
    ).fetchall()
    assert meetings == [(29, "2026-08-31T13:00:00Z", "2026-08-31T13:45:00Z")]  # one event, 45 minutes
    kinds = conn.execute("SELECT kind FROM bookings ORDER BY rowid").fetchall()
    assert kinds == [("create_event",), ("move_event",)]


def test_team_meeting_finds_the_one_common_window_and_invites_all_three(tmp_path: Path) -> None:
    result, _, conn = replayed("team_meeting", tmp_path)
    found, booked = results(result.messages)
    assert [line for line in found["content"].splitlines() if line.startswith("- ")] == ["- Mon 2026-08-31 14:00-15:00"]
    assert "is_error" not in booked
    [(event_id,)] = conn.execute("SELECT id FROM events WHERE title = 'Team sync'").fetchall()
    keys = conn.execute("SELECT person_key FROM event_attendees WHERE event_id = ? ORDER BY 1", (event_id,)).fetchall()
    assert keys == [("aiko",), ("priya",), ("you",)]


def test_standing_rule_is_in_every_request_and_the_tools_keep_it(tmp_path: Path) -> None:
    setup = read_setup(cassettes_dir() / "standing_rule.yaml")
    assert setup["calendar"]["preferences"] == [
        {"text": "No meetings before 10am", "rule": "not_before", "value": "10:00"}
    ]
    assert setup["kind"] == "scripted"
    assert "The replies are scripted" in setup["lesson"]
    result, requests, conn = replayed("standing_rule", tmp_path)
    assert len(requests) == 4
    for request in requests:
        assert (
            "- #1 No meetings before 10am [the tools check this: no meeting starts before 10:00]" in request["system"]
        )
    found, refused, booked = results(result.messages)
    assert "Wed 2026-09-02 09:15" not in found["content"]
    assert refused["is_error"] is True
    assert refused["content"].startswith("09:15 is before your 10:00 rule (preference #1: 'No meetings before 10am').")
    assert "is_error" not in booked
    final = result.messages[-1]["content"][0]["text"]
    assert final.startswith("[A scripted reply.]")
    assert conn.execute("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'").fetchone() == (1,)


def test_the_lessons_are_in_the_catalogue() -> None:
    assert {"reschedule", "team_meeting", "standing_rule"} <= set(LESSONS)


def test_dump_array_shows_where_the_preference_is() -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    shown = CliRunner().invoke(app, ["demo", "standing_rule", "--dump-array"])
    assert shown.exit_code == 0, shown.stderr
    system = shown.stderr[shown.stderr.index("=== system prompt (iteration 1) ===") :]
    system = system[: system.index("=== iteration 1")]
    assert "Standing preferences of Jordan Lee (set with `calendar prefs`; follow them in every booking):" in system
    assert system.count("=== system prompt") == 1  # the same prompt in every request of the turn
