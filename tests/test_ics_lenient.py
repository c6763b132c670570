"""Lenient import: the good events in, each bad one named on a line of its own, one transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ics import busy, event_count, ics

from scheduler_agent.calendar import series
from scheduler_agent.cli.calendar import calendar_app

SLOPPY = Path(__file__).parent / "data" / "ics" / "sloppy.ics"
runner = CliRunner()


def test_one_bad_event_no_longer_refuses_the_file(demo_db: Path) -> None:
    result = runner.invoke(calendar_app, ["import", str(SLOPPY), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == (
        "Imported 3 events (0 recurring) for Priya Raman (priya) from sloppy.ics: 3 new; 1 warning (below)."
    )
    assert lines[1].startswith("Skipped sloppy.ics line 10: event 'No start' (UID nostart@t): no DTSTART")
    assert lines[2].startswith("Skipped sloppy.ics line 25: event 'Backwards' (UID back@t): DTEND before DTSTART")
    assert lines[3] == "Skipped 2: 2 that could not be read (above)."
    # A zone defined nowhere is read as floating time, named, not skipped.
    assert lines[4].startswith("Warning: sloppy.ics line 15: event 'Odd zone' (UID tz@t): time zone ")
    assert "'Western/Central Europe' is neither defined in the file" in lines[4]
    titles = [title for title, *_ in busy(demo_db, "priya", "2026-10-06", "2026-10-08")]
    assert titles == ["Odd zone", "Fine", "Also fine"]


def test_strict_keeps_all_or_nothing(demo_db: Path) -> None:
    before = event_count(demo_db)
    result = runner.invoke(calendar_app, ["import", str(SLOPPY), "--person", "priya", "--db", str(demo_db), "--strict"])
    assert result.exit_code == 1
    assert "No start" in result.stderr
    assert "(1 other event in the file has problems too)" in result.stderr
    assert "nothing was imported" in result.stderr
    assert event_count(demo_db) == before


def test_an_interrupted_import_leaves_nothing_behind(demo_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Ctrl-C while the second event is being stored: the first is not in the calendar either."""
    before = event_count(demo_db)
    calls = []
    real = series.store_series

    def interrupted(*args: object, **kwargs: object) -> None:
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr("scheduler_agent.calendar.events.store_series", interrupted)
    text = (Path(__file__).parent / "data" / "ics" / "thisandfuture.ics").read_text() + (
        Path(__file__).parent / "data" / "ics" / "custom-tz.ics"
    ).read_text()
    path = demo_db.parent / "two.ics"
    path.write_text(text)
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code != 0
    assert len(calls) == 2
    assert event_count(demo_db) == before


def test_reimport_picks_up_a_changed_sequence(demo_db: Path, tmp_path: Path) -> None:
    first = SLOPPY.read_bytes().decode()
    path = tmp_path / "cal.ics"
    path.write_bytes(first.encode())
    runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    count = event_count(demo_db)
    edited = first.replace("SUMMARY:Fine\r\n", "SUMMARY:Fine, moved\r\nSEQUENCE:1\r\n").replace(
        "DTSTART:20261006T130000Z", "DTSTART:20261006T150000Z"
    )
    path.write_bytes(edited.encode())
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    assert ": 0 new, 1 updated, 2 already there; 1 warning (below)." in result.stdout
    assert event_count(demo_db) == count
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-07") == [
        ("Odd zone", "Tue 2026-10-06 10:00", "11:00"),
        ("Fine, moved", "Tue 2026-10-06 16:00", "17:00"),
    ]


GOOD = "UID:good@t\nSUMMARY:Fine\nDTSTART:20261006T130000Z\nDURATION:PT1H"
AT_NINE = "DTSTART:20261006T090000Z\nDTEND:20261006T100000Z\n"
# Values that hung the import (dateutil loops for ever on INTERVAL=0) or ended it with an internal error.
OUT_OF_BOUNDS = [
    (AT_NINE + "RRULE:FREQ=DAILY;INTERVAL=0", "INTERVAL=0: RFC 5545 says it is a positive whole number"),
    (AT_NINE + "RRULE:FREQ=DAILY;INTERVAL=-1", "INTERVAL=-1: RFC 5545 says it is a positive whole number"),
    (AT_NINE + "RRULE:FREQ=DAILY;COUNT=-1", "COUNT=-1: RFC 5545 says it is a positive whole number"),
    (AT_NINE + "RRULE:FREQ=DAILY;COUNT=0", "COUNT=0: RFC 5545 says it is a positive whole number"),
    (AT_NINE + "RRULE:FREQ=MONTHLY;BYMONTHDAY=40", "BYMONTHDAY=40: RFC 5545 allows 1..31 or -31..-1 only"),
    (AT_NINE + "RRULE:FREQ=YEARLY;BYMONTH=13", "BYMONTH=13: RFC 5545 allows 1..12 only"),
    (AT_NINE + "RRULE:FREQ=MONTHLY;BYDAY=9MO", "BYDAY=9MO: give a day"),
    (AT_NINE + "RRULE:FREQ=DAILY;BYMONTH=2;BYMONTHDAY=30", "gives no date at all"),
    ("DTSTART:20261006T090000Z\nDURATION:P99999999W", "DURATION 'P99999999W' ends it outside the years 1000 to 9998"),
    ("DTSTART;VALUE=DATE:99991231", "DTSTART '99991231' is outside the years 1000 to 9998"),
    ("DTSTART;TZID=Europe/Berlin:00010101T000000\nDURATION:PT1H", "DTSTART '00010101T000000' is outside the years"),
    ("DTSTART:00010101T000000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY", "DTSTART '00010101T000000Z' is outside the years"),
    (AT_NINE + "RDATE;VALUE=PERIOD:20261007T090000Z/P99999999W", "the period RDATE"),
    (AT_NINE + "RRULE:FREQ=DAILY;COUNT=3\nEXDATE:99991231T230000Z", "EXDATE '99991231T230000Z' is outside the years"),
    (AT_NINE + "RECURRENCE-ID:00010101T000000Z", "RECURRENCE-ID '00010101T000000Z' is outside the years"),
]
BOUND_IDS = [
    "interval-0",
    "interval-negative",
    "count-negative",
    "count-0",
    "bymonthday-40",
    "bymonth-13",
    "byday-9mo",
    "no-day-fits",
    "huge-duration",
    "date-9999",
    "year-1-berlin",
    "year-1-rule",
    "huge-period",
    "exdate-9999",
    "recurrence-id-year-1",
]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("bad", "why"), OUT_OF_BOUNDS, ids=BOUND_IDS)
def test_a_rule_or_time_out_of_bounds_is_skipped_and_named(demo_db: Path, tmp_path: Path, bad: str, why: str) -> None:
    path = tmp_path / "cal.ics"
    path.write_text(ics(GOOD, "UID:bad@t\nSUMMARY:Bad\n" + bad), encoding="utf-8", newline="")
    before = event_count(demo_db)
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Imported 1 event (0 recurring) for Priya Raman (priya) from cal.ics: 1 new."
    assert lines[1].startswith("Skipped cal.ics line "), lines[1]
    assert "event 'Bad' (UID bad@t): " in lines[1]
    assert why in lines[1]
    assert event_count(demo_db) == before + 1
    assert [title for title, *_ in busy(demo_db, "priya", "2026-10-06", "2026-10-07")] == ["Fine"]


@pytest.mark.timeout(10)
@pytest.mark.parametrize(("bad", "why"), OUT_OF_BOUNDS, ids=BOUND_IDS)
def test_strict_refuses_a_file_with_a_rule_or_time_out_of_bounds(
    demo_db: Path, tmp_path: Path, bad: str, why: str
) -> None:
    path = tmp_path / "cal.ics"
    path.write_text(ics(GOOD, "UID:bad@t\nSUMMARY:Bad\n" + bad), encoding="utf-8", newline="")
    before = event_count(demo_db)
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db), "--strict"])
    assert result.exit_code == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert why in result.stderr
    assert result.stderr.strip().endswith("; nothing was imported")
    assert "internal error" not in result.stderr
    assert event_count(demo_db) == before
