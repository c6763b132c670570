"""A repeat rule too dense for a week's search is skipped where it comes in, with a named line: one event
never makes a person unbookable (it used to import, and then every search with that person failed)."""

from __future__ import annotations

from pathlib import Path

from click.testing import CliRunner
from helpers import demo_clock
from test_ics import ics

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.recurrence import MAX_PER_DAY
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.storage import db

runner = CliRunner()
EVERY_HOUR = ",".join(str(hour) for hour in range(24))
EVERY_MINUTE = ",".join(str(minute) for minute in range(60))
DENSE = (
    "UID:dense@t\nSUMMARY:Every minute\nDTSTART:20260901T000000Z\nDURATION:PT1M\n"
    f"RRULE:FREQ=DAILY;BYHOUR={EVERY_HOUR};BYMINUTE={EVERY_MINUTE}"
)
TEN_AN_HOUR = (  # 240 a day: as dense as a stored rule may be
    "UID:ten@t\nSUMMARY:Pings\nDTSTART:20260901T000000Z\nDURATION:PT1M\n"
    f"RRULE:FREQ=DAILY;BYHOUR={EVERY_HOUR};BYMINUTE=0,6,12,18,24,30,36,42,48,54"
)
LUNCH = "UID:l@t\nSUMMARY:Lunch\nDTSTART:20260901T120000Z\nDURATION:PT1H"


def free_slots(path: Path) -> str:
    """What the model reads from a search of priya's week of 2026-09-07 (an error text included)."""
    conn = db.connect(path)
    try:
        return CalendarTools(conn, demo_clock()).find_free_slots("priya", "2026-09-07", 30)
    except ToolError as exc:
        return str(exc)
    finally:
        conn.close()


def test_a_rule_too_dense_for_a_weeks_search_is_skipped_with_a_named_line(demo_db: Path, tmp_path: Path) -> None:
    path = tmp_path / "dense.ics"
    path.write_text(ics(LUNCH, DENSE))
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code == 0, result.stderr
    skipped = [line for line in result.stdout.splitlines() if line.startswith("Skipped dense.ics line")]
    assert len(skipped) == 1
    assert "event 'Every minute' (UID dense@t)" in skipped[0]
    assert f"repeats up to 1,440 times a day, more than the {MAX_PER_DAY} a week's search can expand" in skipped[0]
    assert "cannot be used" not in free_slots(demo_db)  # priya stays bookable


def test_the_densest_rule_kept_still_lets_every_week_be_searched(demo_db: Path, tmp_path: Path) -> None:
    path = tmp_path / "pings.ics"
    path.write_text(ics(TEN_AN_HOUR))
    result = runner.invoke(calendar_app, ["import", str(path), "--person", "priya", "--db", str(demo_db)])
    assert result.exit_code == 0, result.stderr
    assert "Skipped" not in result.stdout
    text = free_slots(demo_db)
    assert "cannot be used" not in text
    assert "its longest free stretch is 5 minutes" in text  # searched: a ping every six minutes
