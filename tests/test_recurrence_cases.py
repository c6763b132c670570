"""Each recurrence case the hand-written expansion got wrong, with a file of its own under tests/data/ics/,
imported through `calendar import` and read back through `events_for` (the busy time the agent sees)."""

from __future__ import annotations

import time as clock
from datetime import UTC, datetime
from pathlib import Path

import pytest
from click.testing import CliRunner
from sqlalchemy import text as sql
from test_ics import busy, event_count

from scheduler_agent.calendar import series
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.storage import db

DATA = Path(__file__).parent / "data" / "ics"
runner = CliRunner()


def load(db: Path, name: str, person: str = "priya") -> str:
    result = runner.invoke(calendar_app, ["import", str(DATA / name), "--person", person, "--db", str(db)])
    assert result.exit_code == 0, result.output
    return result.stdout


def test_range_thisandfuture_moves_every_later_occurrence(demo_db: Path) -> None:
    load(demo_db, "thisandfuture.ics")
    assert busy(demo_db, "priya", "2026-10-01", "2026-11-30") == [
        ("Sync", "Mon 2026-10-05 10:00", "11:00"),
        ("Sync", "Mon 2026-10-12 10:00", "11:00"),
        ("Sync (later)", "Mon 2026-10-19 15:00", "16:00"),  # from the RECURRENCE-ID on: 5 hours later
        ("Sync (later)", "Mon 2026-10-26 15:00", "16:00"),
        ("Sync (later)", "Mon 2026-11-02 15:00", "16:00"),
        ("Sync (later)", "Mon 2026-11-09 15:00", "16:00"),
    ]


def test_a_stale_copy_with_a_lower_sequence_is_dropped_and_not_busy(demo_db: Path) -> None:
    """Two copies of one series (the library's issue 148 case): SEQUENCE 2 moved it to 09:00 and took out
    Wednesday; the SEQUENCE 1 copy at 08:00 (with a later DTSTAMP) is dropped, none of its hours busy."""
    out = load(demo_db, "sequence.ics")
    assert "Left out 1 older copy of an event" in out
    days = ["Mon 2026-10-05", "Tue 2026-10-06", "Thu 2026-10-08", "Fri 2026-10-09"]
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-10") == [("Review", f"{day} 09:00", "10:00") for day in days]


def test_a_date_time_recurrence_id_replaces_a_day_of_an_all_day_series_once(demo_db: Path) -> None:
    load(demo_db, "allday-override.ics")
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-08") == [
        ("Off", "Mon 2026-10-05 00:00", "00:00"),
        ("Off (morning only)", "Tue 2026-10-06 09:00", "12:00"),  # not the whole day as well
        ("Off", "Wed 2026-10-07 00:00", "00:00"),
    ]


def test_rdate_periods_are_busy_even_with_no_dtend(demo_db: Path) -> None:
    out = load(demo_db, "rdate-period.ics")
    assert "1 recurring" in out
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-10") == [
        ("Office hours", "Tue 2026-10-06 14:00", "16:00"),  # PT2H from 13:00Z (BST)
        ("Office hours", "Thu 2026-10-08 11:00", "11:30"),  # an explicit end
    ]


def test_a_series_in_a_vtimezone_defined_in_the_file_keeps_its_wall_clock(demo_db: Path) -> None:
    load(demo_db, "custom-tz.ics")
    assert busy(demo_db, "priya", "2026-10-19", "2026-11-06") == [
        ("Berlin standup", "Mon 2026-10-19 08:00", "08:30"),  # 09:00 CEST
        ("Berlin standup", "Mon 2026-10-26 08:00", "08:30"),  # 09:00 CET, after both zones changed
        ("Berlin standup", "Mon 2026-11-02 08:00", "08:30"),
    ]


def test_x_wr_timezone_repeats_in_that_zone_and_reads_floating_times_there(demo_db: Path) -> None:
    load(demo_db, "x-wr-timezone.ics")
    # 14:00Z is 10:00 in New York on 10-26 (EDT); the series stays at 10:00 New York after 11-01 (EST).
    assert busy(demo_db, "priya", "2026-10-26", "2026-11-10") == [
        ("NY weekly", "Mon 2026-10-26 14:00", "15:00"),
        ("NY lunch", "Tue 2026-10-27 16:00", "17:00"),  # floating 12:00 read in New York (EDT)
        ("NY weekly", "Mon 2026-11-02 15:00", "16:00"),  # 10:00 EST
        ("NY weekly", "Mon 2026-11-09 15:00", "16:00"),
    ]


def test_several_vcalendars_in_one_file_each_with_its_own_settings(demo_db: Path) -> None:
    assert ": 2 new." in load(demo_db, "several.ics")
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-08") == [
        ("From the first", "Tue 2026-10-06 09:00", "09:30"),
        ("From the second", "Wed 2026-10-07 01:00", "02:00"),  # floating 09:00 in Tokyo's X-WR-TIMEZONE
    ]


def test_the_same_uid_edited_twice_keeps_the_highest_sequence_then_the_latest_stamp(demo_db: Path) -> None:
    out = load(demo_db, "edited-twice.ics")
    assert "Imported 2 events" in out
    assert "Left out 3 older copies of an event" in out
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-08") == [
        ("Planning v3", "Tue 2026-10-06 14:00", "15:00"),  # SEQUENCE 3, though its DTSTAMP is the oldest
        ("Lunch late", "Wed 2026-10-07 14:00", "15:00"),  # one SEQUENCE: the later LAST-MODIFIED
    ]


def test_a_dense_rule_is_skipped_at_import_with_a_clear_text_and_the_week_still_shows(demo_db: Path) -> None:
    said = load(demo_db, "dense.ics")
    [skipped] = [line for line in said.splitlines() if line.startswith("Skipped dense.ics line")]
    assert "Every second" in skipped
    assert "repeats up to 86,400 times a day" in skipped
    began = clock.monotonic()
    result = runner.invoke(
        calendar_app,
        ["show", "--person", "priya", "--week", "2026-10-05", "--db", str(demo_db), "--today", "2026-10-01"],
    )
    took = clock.monotonic() - began
    assert result.exit_code == 0, result.output  # it was stored before, and then no week of priya's could be shown
    assert "Every second" not in result.stdout
    assert took < 10  # not a speed goal: it must not hang (it took 15 s before the cap)


@pytest.mark.parametrize("name", sorted(path.name for path in DATA.glob("*.ics")))
def test_importing_each_file_again_adds_nothing(demo_db: Path, name: str) -> None:
    load(demo_db, name)
    count = event_count(demo_db)
    again = load(demo_db, name)
    assert " 0 new" in again
    assert event_count(demo_db) == count


@pytest.mark.parametrize("name", ["thisandfuture.ics", "allday-override.ics", "custom-tz.ics", "x-wr-timezone.ics"])
def test_the_materialised_horizon_gives_what_the_library_gives_when_asked(demo_db: Path, name: str) -> None:
    load(demo_db, name)
    conn = db.connect(demo_db)
    with db.transaction(conn):  # the horizon as a write on 2026-10-15 makes it (import uses the real time)
        rows = conn.execute(sql("SELECT event_id, components, zone, day_zone FROM event_series")).fetchall()
        for row in rows:
            series.store_series(conn, *tuple(row), now=datetime(2026, 10, 15, tzinfo=UTC))
    assert conn.execute(sql("SELECT count(*) FROM occurrences")).fetchone()[0] > 0
    conn.close()
    before = busy(demo_db, "priya", "2026-10-01", "2026-12-01")
    conn = db.connect(demo_db)
    with db.transaction(conn):  # forget the horizon: every window is expanded by the library on the spot
        conn.execute(sql("UPDATE event_series SET expanded_from = NULL, expanded_until = NULL"))
    conn.close()
    assert busy(demo_db, "priya", "2026-10-01", "2026-12-01") == before
    assert before
