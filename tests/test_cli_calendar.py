"""`scheduler-agent calendar ...` through Typer's runner: stdout, stderr, exit codes, the database."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner, Result

from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.cli.options import default_db_path

runner = CliRunner()
TODAY = ["--today", "2026-08-27"]


@pytest.fixture
def db(tmp_path: Path) -> Path:
    (tmp_path / "data").mkdir()  # a folder the person gives must exist: none is made for it
    return tmp_path / "data" / "calendar.db"


def invoke(*args: str) -> Result:
    return runner.invoke(calendar_app, list(args))


def seeded(db: Path) -> Path:
    assert invoke("seed-demo", "--db", str(db)).exit_code == 0
    return db


def rows(db: Path, sql: str) -> list[tuple[object, ...]]:
    conn = sqlite3.connect(db)
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def assert_person_error(result: Result, *parts: str) -> None:
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1  # one line
    assert "Traceback" not in result.output
    for part in parts:
        assert part in result.stderr


def test_seed_demo_is_idempotent(db: Path) -> None:
    first = invoke("seed-demo", "--db", str(db))
    assert first.exit_code == 0
    assert "Jordan Lee" in first.stdout
    count = rows(db, "SELECT count(*) FROM events")[0][0]
    assert f"{count} event(s) added" in first.stdout

    second = invoke("seed-demo", "--db", str(db))
    assert second.exit_code == 0
    assert "0 event(s) added" in second.stdout
    assert rows(db, "SELECT count(*) FROM events")[0][0] == count


def test_the_database_defaults_to_the_users_data_directory_or_the_env() -> None:
    assert invoke("seed-demo").exit_code == 0
    assert default_db_path().exists()


def test_db_from_the_environment(db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCHEDULER_AGENT_DB", str(db))
    assert invoke("seed-demo").exit_code == 0
    assert db.exists()


def test_people_lists_the_owner_first(db: Path) -> None:
    result = invoke("people", "--db", str(seeded(db)))
    assert result.exit_code == 0
    assert result.stdout.splitlines() == [
        "you    Jordan Lee, 09:00-17:00 Europe/London  (owner)",
        "aiko   Aiko Tanaka, 09:00-17:00 America/New_York",
        "marco  Marco Rossi, 09:00-17:00 Europe/Rome",
        "priya  Priya Raman, 09:00-17:00 Europe/London",
    ]


def test_show_gives_the_weeks_events_and_free_windows(db: Path) -> None:
    result = invoke("show", "--person", "priya", "--week", "2026-08-31", "--db", str(seeded(db)), *TODAY)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Week of Mon 2026-08-31, times in Europe/London"
    assert "Mon 2026-08-31" in lines
    assert any(line.startswith("  09:30-10:30  Weekly planning  (you, marco, priya)") for line in lines)
    assert any("Customer onboarding workshop  (priya)" in line for line in lines)  # Priya's alone
    assert any("1:1 with Aiko  (you, aiko)" in line for line in lines)  # the owner's, with someone else
    assert lines[-4:] == [
        "Free windows of at least 30 minutes for you and priya:",
        "  Mon 2026-08-31 09:00-09:30",
        "  Mon 2026-08-31 14:00-15:00",
        "  Wed 2026-09-02 09:15-09:45",
    ]


def test_show_without_a_person_is_the_owners_current_week(db: Path) -> None:
    result = invoke("show", "--db", str(seeded(db)), "--today", "2026-08-27T09:00")
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Week of Mon 2026-08-24, times in Europe/London\n")
    assert "Design review" in result.stdout
    assert "User interviews" not in result.stdout  # Priya's alone
    assert "Free windows" not in result.stdout


def test_show_explains_an_empty_week(db: Path) -> None:
    result = invoke("show", "--person", "priya", "--week", "2026-08-31", "--minutes", "90", "--db", str(seeded(db)))
    assert result.exit_code == 0
    assert "No free 90-minute windows for priya and you in the week of Mon 2026-08-31" in result.stdout


def test_add_event_books_through_the_tools_checks(db: Path) -> None:
    result = invoke(
        "add-event",
        "--with",
        "Priya",
        "--start",
        "2026-08-31T14:00",
        "--title",
        "Roadmap",
        "--db",
        str(seeded(db)),
        *TODAY,
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Booked 'Roadmap' on Mon 2026-08-31 14:00-14:30 (Europe/London)")
    assert rows(db, "SELECT title, start_utc, end_utc FROM events WHERE title = 'Roadmap'") == [
        ("Roadmap", "2026-08-31T13:00:00Z", "2026-08-31T13:30:00Z")
    ]


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["--with", "priya", "--start", "2026-08-31T10:00"], ["overlaps 'Weekly planning'", "09:00-09:30"]),
        (["--with", "sam", "--start", "2026-08-31T14:00"], ["No one called 'sam'", "priya (Priya Raman)"]),
        (["--with", "priya", "--start", "tomorrow"], ["start 'tomorrow' is not a time", "YYYY-MM-DDTHH:MM"]),
        (["--with", "priya", "--start", "2026-08-26T14:00"], ["is in the past", "now is Thu 2026-08-27 09:00"]),
        (["--with", "priya", "--start", "2026-08-31T14:00", "--minutes", "1"], ["minutes 1 is out of range"]),
    ],
)
def test_add_event_errors_are_one_line(db: Path, args: list[str], parts: list[str]) -> None:
    seeded(db)
    before = rows(db, "SELECT count(*) FROM events")
    assert_person_error(invoke("add-event", *args, "--db", str(db), *TODAY), *parts)
    assert rows(db, "SELECT count(*) FROM events") == before


def test_a_new_calendar_from_scratch(db: Path) -> None:
    # a read-only command never creates the file (a mistyped --db would give an empty calendar)
    assert_person_error(invoke("people", "--db", str(db)), f"no database at {db}", "--db")
    assert not db.exists()
    result = invoke(
        "set-owner", "--name", "Ana Silva", "--tz", "America/Sao_Paulo", "--hours", "08:00-16:00", "--db", str(db)
    )
    assert result.exit_code == 0
    assert result.stdout == "Owner: Ana Silva, 08:00-16:00 America/Sao_Paulo.\n"
    result = invoke("add-person", "li", "--name", "Li Wei", "--tz", "Asia/Shanghai", "--db", str(db))
    assert result.exit_code == 0
    assert result.stdout == "Added li: Li Wei, 09:00-17:00 Asia/Shanghai.\n"
    assert rows(db, "SELECT key, name, tz, work_start, work_end FROM people ORDER BY key") == [
        ("li", "Li Wei", "Asia/Shanghai", "09:00", "17:00"),
        ("you", "Ana Silva", "America/Sao_Paulo", "08:00", "16:00"),
    ]


@pytest.mark.parametrize(
    ("args", "parts"),
    [
        (["set-owner", "--name", "Ana", "--tz", "Nowhere/City"], ["'Nowhere/City' is unknown", "Europe/London"]),
        (["set-owner", "--name", "Ana", "--tz", "UTC", "--hours", "9 to 5"], ["'9 to 5'", "HH:MM-HH:MM"]),
        (["add-person", "Li Wei", "--name", "Li Wei", "--tz", "UTC"], ["key 'Li Wei'", "'li-wei'"]),
        (["add-person", "li", "--name", "Li", "--tz", "UTC", "--hours", "18:00-08:00"], ["end before they start"]),
        (["show", "--today", "27/08/2026"], ["--today '27/08/2026' is not a date", "YYYY-MM-DD"]),
        (["show", "--week", "next"], ["week 'next' is not a date", "YYYY-MM-DD"]),
        (["show", "--week", "0002-01-01"], ["week '0002-01-01' is outside the calendar", "years 1000 to 9998"]),
        (["add-person", "li", "--name", "L" * 101, "--tz", "UTC"], ["101 characters long", "at most 100"]),
        (["add-person", "K" * 5000, "--name", "Li", "--tz", "UTC"], ["... (5,000 characters) must be 1-32"]),
        (["show", "--person", "sam"], ["No one called 'sam'", "or add the person with `scheduler-agent calendar"]),
        (["add-person", "li", "--name", "Li", "--tz", "UTC", "--hours", "09:00-09:00"], ["09:00-09:00 are empty"]),
        (["edit-person", "priya", "--lunch", "13:00-12:00"], ["lunch 13:00-12:00 end before", "e.g. 12:00-13:00"]),
        (["edit-person", "priya", "--lunch", "noon"], ["lunch 'noon' are not a range", "e.g. 12:00-13:00"]),
    ],
)
def test_person_facing_errors(db: Path, args: list[str], parts: list[str]) -> None:
    seeded(db)
    result = invoke(*args, "--db", str(db))
    assert_person_error(result, *parts)
    assert "the user" not in result.stderr  # the model's word for the person reading this
    assert "working hours" not in result.stderr or "--hours" in args  # lunch is not called working hours
    assert len(result.stderr) < 400  # what was typed is quoted, not echoed whole


def test_a_database_that_cannot_be_opened(tmp_path: Path) -> None:
    (tmp_path / "taken").write_text("not a folder")
    assert_person_error(invoke("people", "--db", str(tmp_path / "taken" / "c.db")), "no database at", "--db")
    assert_person_error(invoke("seed-demo", "--db", str(tmp_path / "taken" / "c.db")), "cannot open", "--db PATH")


def test_a_pinned_clock_is_the_owners_wall_clock(db: Path) -> None:
    # --today 2026-08-27 is 09:00 in London (08:00 UTC): a start at 09:00 London is not in the past.
    seeded(db)
    result = invoke("add-event", "--with", "priya", "--start", "2026-08-27T09:00", "--db", str(db), *TODAY)
    assert result.exit_code == 0, result.output


def test_cancel_deletes_the_event_and_says_what_it_was(db: Path) -> None:
    seeded(db)
    booked = invoke(
        "add-event", "--with", "priya", "--start", "2026-08-31T14:00", "--title", "Roadmap", "--db", str(db), *TODAY
    )
    [(event_id,)] = rows(db, "SELECT id FROM events WHERE title = 'Roadmap'")
    assert booked.stdout.endswith(f"Event id: {event_id}.\n")
    result = invoke("cancel", str(event_id), "--db", str(db))
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        f"Cancelled 'Roadmap' on Mon 2026-08-31 14:00-14:30 (Europe/London) for you, priya. Event id: {event_id}.\n"
    )
    assert rows(db, f"SELECT count(*) FROM events WHERE id = {event_id}") == [(0,)]
    assert rows(db, f"SELECT count(*) FROM event_attendees WHERE event_id = {event_id}") == [(0,)]
    # The slot is free again.
    show = invoke("show", "--person", "priya", "--week", "2026-08-31", "--db", str(db), *TODAY)
    assert "  Mon 2026-08-31 14:00-15:00" in show.stdout.splitlines()


def test_cancel_an_unknown_event(db: Path) -> None:
    seeded(db)
    before = rows(db, "SELECT count(*) FROM events")
    newest = rows(db, "SELECT max(id) FROM events")[0][0]
    assert_person_error(
        invoke("cancel", "999", "--db", str(db)),
        f"there is no event with id 999 (ids go up to {newest})",
        "calendar show --week YYYY-MM-DD",
    )
    assert rows(db, "SELECT count(*) FROM events") == before


def test_import_and_export_are_calendar_commands(db: Path) -> None:
    listed = invoke("--help").stdout
    assert "import" in listed
    assert "iCalendar" in listed
    assert "export" in listed
    result = invoke("export", "--person", "nobody", "--db", str(seeded(db)))
    assert_person_error(result, "no one called 'nobody'", "aiko (Aiko Tanaka)")


def test_what_a_person_typed_cannot_take_over_the_terminal_and_json_keeps_it_exactly(db: Path) -> None:
    seeded(db)
    title = "Review \x1b]0;owned\x07\x1b[2J \u202eslides"  # a window title, a cleared screen, text turned around
    start = ["--start", "2026-08-31T14:00"]
    booked = invoke("add-event", "--with", "priya", *start, "--title", title, "--db", str(db), *TODAY)
    assert booked.exit_code == 0, booked.output
    added = invoke("add-person", "sam", "--name", "Sam \u202eOkafor\x1b[31m", "--tz", "UTC", "--db", str(db))
    assert added.exit_code == 0, added.output
    shown = [
        booked.stdout,
        added.stdout,
        invoke("show", "--person", "priya", "--week", "2026-08-31", "--db", str(db), *TODAY).stdout,
        invoke("people", "--db", str(db)).stdout,
    ]
    for text in shown:
        assert "\x1b" not in text and "\x07" not in text and "\u202e" not in text
    assert "Review ␛]0;owned␇␛[2J <U+202E>slides" in shown[2]
    assert "Sam <U+202E>Okafor␛[31m" in shown[3]
    as_json = invoke("people", "--json", "--db", str(db))
    assert "Sam \u202eOkafor\\u001b[31m" in as_json.stdout  # --json prints what is stored, JSON-escaped
