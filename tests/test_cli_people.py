"""`calendar prefs`, `edit-person`, `remove-person`, `set-owner` changes, and `calendar show` after a move
or a cancellation, through Typer's runner: the output, the exit code, the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from click.testing import CliRunner, Result
from helpers import demo_clock

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.cli import app
from scheduler_agent.storage import db

runner = CliRunner()
TODAY = ["--today", "2026-08-27"]


def calendar(*args: str) -> Result:
    return runner.invoke(app, ["calendar", *args])


def test_prefs_add_list_remove(demo_db: Path) -> None:
    at = ["--db", str(demo_db)]
    assert calendar("prefs", "list", *at).stdout == (
        "No preferences yet: add one with `scheduler-agent calendar prefs add TEXT`.\n"
    )
    added = calendar("prefs", "add", "No meetings before 10am", "--not-before", "10:00", *at)
    assert added.exit_code == 0
    assert added.stdout == (
        "Added preference #1: No meetings before 10am (checked by the tools: no meeting starts before 10:00).\n"
    )
    assert calendar("prefs", "add", "--no-days", "fri", *at).stdout == (
        "Added preference #2: no meetings on Fri (checked by the tools: no meetings on Fri).\n"
    )
    assert calendar("prefs", "list", *at).stdout == (
        "#1  No meetings before 10am  [checked: no meeting starts before 10:00]\n"
        "#2  no meetings on Fri  [checked: no meetings on Fri]\n"
    )
    assert calendar("prefs", "remove", "1", *at).stdout == "Removed preference #1: No meetings before 10am.\n"
    missing = calendar("prefs", "remove", "1", *at)
    assert missing.exit_code == 1
    assert missing.stderr.startswith("Error: there is no preference #1 (the preferences are #2)")
    two = calendar("prefs", "add", "--not-before", "10:00", "--max-per-day", "3", *at)
    assert two.exit_code == 1
    assert "give one rule per `prefs add`" in two.stderr
    assert "Traceback" not in two.stderr + two.stdout


def test_edit_person_changes_only_what_is_given(demo_db: Path) -> None:
    at = ["--db", str(demo_db)]
    edited = calendar(
        "edit-person", "priya", "--day", "fri=off", "--day", "mon=10:00-16:00", "--lunch", "12:30-13:30", *at
    )
    assert edited.exit_code == 0, edited.stderr
    assert edited.stdout == (
        "priya: Priya Raman, 09:00-17:00 Europe/London; Mon 10:00-16:00; Fri off; lunch 12:30-13:30.\n"
    )
    again = calendar("edit-person", "priya", "--buffer", "10", "--lunch", "none", "--off", "2026-09-03", *at)
    assert again.stdout == (
        "priya: Priya Raman, 09:00-17:00 Europe/London; Mon 10:00-16:00; Fri off; 10-minute buffer around meetings; "
        "off on 2026-09-03.\n"
    )
    bad = calendar("edit-person", "priya", "--day", "sat=10:00-12:00", *at)
    assert bad.exit_code == 1
    assert bad.stderr.startswith("Error: --day 'sat=10:00-12:00' is not WEEKDAY=HOURS")
    nobody = calendar("edit-person", "sam", "--buffer", "5", *at)
    assert nobody.stderr.startswith("Error: no one has the key 'sam': the people are aiko, marco, priya")


def test_set_owner_changes_the_zone_and_keeps_the_rest(demo_db: Path) -> None:
    at = ["--db", str(demo_db)]
    assert calendar("set-owner", "--tz", "America/New_York", *at).stdout == (
        "Owner: Jordan Lee, 09:00-17:00 America/New_York.\n"
    )
    assert calendar("set-owner", "--hours", "08:00-16:00", "--day", "wed=off", *at).stdout == (
        "Owner: Jordan Lee, 08:00-16:00 America/New_York; Wed off.\n"
    )
    row = sqlite3.connect(demo_db).execute("SELECT name, tz, work_start, days FROM people WHERE key = 'you'").fetchone()
    assert row == ("Jordan Lee", "America/New_York", "08:00", "wed=off")


def test_a_new_owner_needs_a_name_and_a_zone(tmp_path: Path) -> None:
    at = ["--db", str(tmp_path / "new.db")]
    missing = calendar("set-owner", "--tz", "Europe/London", *at)
    assert missing.exit_code == 1
    assert "a new owner needs --name and --tz" in missing.stderr
    made = calendar("set-owner", "--name", "Sam Doe", "--tz", "Europe/London", *at)
    assert made.stdout == "Owner: Sam Doe, 09:00-17:00 Europe/London.\n"


def test_remove_person_refuses_while_meetings_remain(demo_db: Path) -> None:
    at = ["--db", str(demo_db), *TODAY]
    refused = calendar("remove-person", "aiko", *at)
    assert refused.exit_code == 1
    assert refused.stderr.startswith(
        "Error: Aiko Tanaka (aiko) still has 3 future meeting(s) (#10, #18, #28): cancel them first with "
        "`calendar cancel ID`, or run again with --cancel-meetings to cancel them all"
    )
    assert sqlite3.connect(demo_db).execute("SELECT count(*) FROM people WHERE key = 'aiko'").fetchone() == (1,)
    removed = calendar("remove-person", "aiko", "--cancel-meetings", *at)
    assert removed.exit_code == 0, removed.stderr
    assert removed.stdout == "Removed aiko; cancelled #10, #18, #28.\n"
    conn = sqlite3.connect(demo_db)
    assert conn.execute("SELECT count(*) FROM people WHERE key = 'aiko'").fetchone() == (0,)
    assert conn.execute("SELECT id FROM events WHERE id IN (5, 10, 18, 28) ORDER BY id").fetchall() == [
        (5,)
    ]  # the past one stays, without her
    assert conn.execute("SELECT count(*) FROM event_attendees WHERE person_key = 'aiko'").fetchone() == (0,)


def test_calendar_show_reflects_moves_and_cancellations(demo_db: Path) -> None:

    tools = CalendarTools(db.connect(demo_db), demo_clock())
    tools.run("move_event", {"event_id": 12, "start": "2026-08-31T14:00", "minutes": 60}, "toolu_m", Deadline.after(5))
    tools.run("cancel_event", {"event_id": 22}, "toolu_c", Deadline.after(5))
    shown = calendar("show", "--week", "2026-08-31", "--db", str(demo_db), *TODAY).stdout
    assert "  14:00-15:00  Budget review  (you)  #12" in shown
    assert "10:30-12:00  Budget review" not in shown
    assert "Lunch with investors" not in shown


def test_add_event_with_also_invites_everyone(demo_db: Path) -> None:
    booked = calendar(
        "add-event", "--with", "priya", "--also", "aiko", "--start", "2026-08-31T14:00", "--minutes", "60",
        "--db", str(demo_db), *TODAY,
    )  # fmt: skip
    assert booked.exit_code == 0, booked.stderr
    assert booked.stdout.startswith("Booked 'Meeting with Priya Raman and Aiko Tanaka' on Mon 2026-08-31 14:00-15:00")
    clash = calendar(
        "add-event", "--with", "marco", "--also", "aiko", "--start", "2026-08-31T14:30", "--db", str(demo_db), *TODAY
    )
    assert clash.exit_code == 1
    assert "is not free: it overlaps 'Meeting with Priya Raman and Aiko Tanaka'" in clash.stderr


def test_a_recorded_cassette_carries_preferences_and_real_hours_and_replays(
    demo_db: Path,
    api,
    tmp_path: Path,
    monkeypatch,  # type: ignore[no-untyped-def]
) -> None:
    from scheduler_agent.playback.cassette_file import read_setup
    from scheduler_agent.testing.scripted_server import Reply, text, tool_use

    at = ["--db", str(demo_db)]
    assert calendar("prefs", "add", "No meetings before 10am", "--not-before", "10:00", *at).exit_code == 0
    assert (
        calendar("edit-person", "priya", "--lunch", "14:00-14:30", "--buffer", "5", "--day", "wed=off", *at).exit_code
        == 0
    )
    find = tool_use("toolu_rp_1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})
    api([Reply([find], "tool_use"), Reply([text("Monday 14:30.")])])
    path = tmp_path / "session.yaml"
    live = runner.invoke(app, ["ask", "When is Priya free?", "--record", str(path), *at, *TODAY])
    assert live.exit_code == 0, live.stderr
    assert "- Mon 2026-08-31 14:30-15:00" in live.stderr  # after her lunch; no morning window (the rule)
    assert "09:00-09:30" not in live.stderr
    calendar_setup = read_setup(path)["calendar"]
    assert calendar_setup["preferences"] == [
        {"text": "No meetings before 10am", "rule": "not_before", "value": "10:00"}
    ]
    [priya] = [person for person in calendar_setup["people"] if person["key"] == "priya"]
    assert (priya["lunch"], priya["buffer"], priya["days"]) == ("14:00-14:30", 5, "wed=off")
    monkeypatch.delenv("ANTHROPIC_API_KEY")
    monkeypatch.delenv("ANTHROPIC_BASE_URL")
    replayed = runner.invoke(app, ["replay", str(path)])  # a fresh calendar from the fixture: the same requests
    assert replayed.exit_code == 0, replayed.stderr
    assert "- Mon 2026-08-31 14:30-15:00" in replayed.stderr
