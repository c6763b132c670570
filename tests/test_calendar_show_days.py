"""`calendar show`'s text view (issue 33): an event under every day it covers, all-day events on their own dates,
each person's whole schedule in the header, and a --from/--to range as `--json` takes it."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner

from scheduler_agent.cli import app

runner = CliRunner()
STAMP = "DTSTAMP:20260801T000000Z"


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def ics(tmp_path: Path, name: str, *events: str) -> Path:
    path = tmp_path / name
    body = "".join(f"BEGIN:VEVENT\r\n{event}\r\n{STAMP}\r\nEND:VEVENT\r\n" for event in events)
    path.write_text(f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//test//EN\r\n{body}END:VCALENDAR\r\n")
    return path


def day_blocks(text: str) -> dict[str, list[str]]:
    """The lines under each day heading (`Thu 2026-08-27`)."""
    blocks: dict[str, list[str]] = {}
    current = None
    for line in text.splitlines():
        if line[:3] in {"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"} and len(line) == 14:
            current = line
            blocks[current] = []
        elif current is not None and line.startswith("  "):
            blocks[current].append(line)
    return blocks


def show(demo_db: Path, *args: str) -> str:
    result = invoke("calendar", "show", "--db", str(demo_db), "--today", "2026-08-24", *args)
    assert result.exit_code == 0, result.stderr
    return str(result.stdout)


def test_an_event_over_two_days_is_listed_under_both_with_its_end_day(demo_db: Path, tmp_path: Path) -> None:
    mine = ics(
        tmp_path,
        "mine.ics",
        "UID:workshop@t\r\nDTSTART:20260827T090000Z\r\nDTEND:20260828T170000Z\r\nSUMMARY:Workshop",
        "UID:night@t\r\nDTSTART:20260825T210000Z\r\nDTEND:20260826T010000Z\r\nSUMMARY:Night shift",
    )
    assert invoke("calendar", "import", str(mine), "--db", str(demo_db)).exit_code == 0
    days = day_blocks(show(demo_db, "--week", "2026-08-24"))
    assert any(line.startswith("  Thu 10:00 - Fri 18:00  Workshop") for line in days["Thu 2026-08-27"])
    assert any(line.startswith("  Thu 10:00 - Fri 18:00  Workshop") for line in days["Fri 2026-08-28"])
    assert any(line.startswith("  Tue 22:00 - Wed 02:00  Night shift") for line in days["Tue 2026-08-25"])
    assert any(line.startswith("  Tue 22:00 - Wed 02:00  Night shift") for line in days["Wed 2026-08-26"])


def test_an_all_day_event_is_all_day_on_its_own_date_whatever_the_owners_zone(demo_db: Path, tmp_path: Path) -> None:
    added = invoke(
        "calendar", "add-person", "ravi", "--name", "Ravi Iyer", "--tz", "Asia/Kolkata", "--db", str(demo_db)
    )
    assert added.exit_code == 0, added.stderr
    holiday = ics(
        tmp_path, "ravi.ics", "UID:h@t\r\nDTSTART;VALUE=DATE:20260828\r\nDTEND;VALUE=DATE:20260829\r\nSUMMARY:Holiday"
    )
    assert invoke("calendar", "import", str(holiday), "--person", "ravi", "--db", str(demo_db)).exit_code == 0
    days = day_blocks(show(demo_db, "--week", "2026-08-24", "--person", "ravi"))
    assert any(line.startswith("  all day") and "Holiday" in line for line in days["Fri 2026-08-28"])
    assert not any("Holiday" in line for line in days["Thu 2026-08-27"])  # 18:30 the day before, in London


def test_the_header_shows_each_persons_days_lunch_and_buffer(demo_db: Path) -> None:
    edited = invoke(
        "calendar",
        "edit-person",
        "you",
        "--day",
        "fri=off",
        "--lunch",
        "12:30-13:30",
        "--buffer",
        "10",
        "--db",
        str(demo_db),
    )
    assert edited.exit_code == 0, edited.stderr
    header = show(demo_db, "--week", "2026-08-24").splitlines()[1]
    assert header == (
        "  Jordan Lee (you): works 09:00-17:00 Europe/London; Fri off; lunch 12:30-13:30; "
        "10-minute buffer around meetings"
    )


def test_the_text_view_takes_a_range(demo_db: Path) -> None:
    text = show(demo_db, "--from", "2026-08-27T00:00", "--to", "2026-08-29T00:00")
    assert text.splitlines()[0] == "From Thu 2026-08-27 00:00 to Sat 2026-08-29 00:00, times in Europe/London"
    assert list(day_blocks(text)) == ["Thu 2026-08-27", "Fri 2026-08-28"]
    assert "Design review" in text
    assert "Weekly planning" not in text  # Monday's, outside the range


def test_a_week_and_a_from_together_are_refused_naming_both(demo_db: Path) -> None:
    result = invoke("calendar", "show", "--db", str(demo_db), "--week", "2026-08-31", "--from", "2026-08-24T00:00")
    assert result.exit_code == 1
    assert result.stderr == "Error: --week and --from both say where the range begins: give one of them\n"


def test_a_to_alone_is_taken_from_the_start_of_the_week(demo_db: Path) -> None:
    text = show(demo_db, "--week", "2026-08-24", "--to", "2026-08-26T00:00")
    assert list(day_blocks(text)) == ["Mon 2026-08-24", "Tue 2026-08-25"]
