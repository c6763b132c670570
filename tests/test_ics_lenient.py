"""Lenient import: the good events in, each bad one named on a line of its own, one transaction."""

from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner
from test_ics import busy, event_count

from scheduler_agent.calendar import series
from scheduler_agent.cli.calendar import calendar_app

SLOPPY = Path(__file__).parent / "data" / "ics" / "sloppy.ics"
runner = CliRunner()


def test_one_bad_event_no_longer_refuses_the_file(demo_db: Path) -> None:
    result = runner.invoke(calendar_app, ["import", str(SLOPPY), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Imported 2 events (0 recurring) for Priya Raman (priya) from sloppy.ics: 2 new."
    assert lines[1].startswith("Skipped sloppy.ics line 10: event 'No start' (UID nostart@t): no DTSTART")
    assert lines[2].startswith("Skipped sloppy.ics line 18: event 'Odd zone' (UID tz@t): unknown time zone")
    assert "'Western/Central Europe'" in lines[2]
    assert lines[3].startswith("Skipped sloppy.ics line 25: event 'Backwards' (UID back@t): DTEND before DTSTART")
    assert lines[4] == "Skipped 3: 3 that could not be read (above)."
    assert [title for title, *_ in busy(demo_db, "priya", "2026-10-06", "2026-10-08")] == ["Fine", "Also fine"]


def test_strict_keeps_all_or_nothing(demo_db: Path) -> None:
    before = event_count(demo_db)
    result = runner.invoke(calendar_app, ["import", str(SLOPPY), "--person", "priya", "--db", str(demo_db), "--strict"])
    assert result.exit_code == 1
    assert "No start" in result.stderr
    assert "(2 other events in the file have problems too)" in result.stderr
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
    assert ": 0 new, 1 updated, 1 already there." in result.stdout
    assert event_count(demo_db) == count
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-07") == [("Fine, moved", "Tue 2026-10-06 16:00", "17:00")]
