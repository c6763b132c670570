"""`calendar show --json` and `calendar people --json`: the calendar's truth, as the agent's tools see it."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

from click.testing import CliRunner

from scheduler_agent.calendar.events import add_event
from scheduler_agent.calendar.types import Recurrence
from scheduler_agent.cli import app
from scheduler_agent.storage import db

runner = CliRunner()


def test_show_json_lists_busy_intervals_with_repeats_expanded(demo_db: Path) -> None:
    conn = db.connect(demo_db)
    standup = add_event(
        conn,
        "Stand-up",
        datetime(2026, 10, 19, 8, 0, tzinfo=UTC),  # 09:00 London (BST)
        datetime(2026, 10, 19, 8, 15, tzinfo=UTC),
        ["you", "priya"],
        tz="Europe/London",
        recurrence=Recurrence("FREQ=WEEKLY;BYDAY=MO"),
    )
    conn.close()
    args = ["calendar", "show", "--person", "priya", "--from", "2026-10-19T00:00", "--to", "2026-11-03T00:00"]
    result = runner.invoke(app, [*args, "--json", "--db", str(demo_db)])
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)
    assert record["person"] == "priya"
    assert record["from"] == "2026-10-19T00:00:00+01:00"
    standups = [i for i in record["busy"] if i["series"] == standup.id]
    # three Mondays; the clocks change on 25 October, and the stand-up stays at 09:00 London time
    assert [(i["start"], i["end"]) for i in standups] == [
        ("2026-10-19T09:00:00+01:00", "2026-10-19T09:15:00+01:00"),
        ("2026-10-26T09:00:00+00:00", "2026-10-26T09:15:00+00:00"),
        ("2026-11-02T09:00:00+00:00", "2026-11-02T09:15:00+00:00"),
    ]
    assert all(i["title"] == "Stand-up" and i["id"].startswith(f"{standup.id}@") for i in standups)
    assert len({i["id"] for i in standups}) == 3


def test_show_json_without_a_range_is_the_week(demo_db: Path) -> None:
    base = ["calendar", "show", "--db", str(demo_db), "--today", "2026-08-27"]
    week = json.loads(runner.invoke(app, [*base, "--json"]).stdout)
    assert week["from"] == "2026-08-24T00:00:00+01:00"
    assert week["to"] == "2026-08-31T00:00:00+01:00"
    assert all(set(i) == {"id", "series", "title", "start", "end", "attendees"} for i in week["busy"])
    text = runner.invoke(app, [*base, "--from", "2026-08-24T00:00"])  # the text view takes a range too (issue 33)
    assert text.exit_code == 0, text.stderr
    assert text.stdout.startswith("From Mon 2026-08-24 00:00 to Mon 2026-08-31 00:00, times in Europe/London\n")
    bad = runner.invoke(app, [*base, "--json", "--from", "soon"])
    assert bad.exit_code == 1
    assert "--from 'soon' is not a date" in bad.stderr
    offset = runner.invoke(app, [*base, "--json", "--from", "2026-12-07T00:00+99:00"])  # offsets are taken
    assert offset.exit_code == 1
    assert "or with a UTC offset (2026-08-31T09:00Z, 2026-08-31T09:00+01:00)" in offset.stderr
    gap = runner.invoke(app, [*base, "--json", "--from", "2026-03-29T01:30"])  # London's clocks skip 01:00-02:00
    assert gap.exit_code == 1  # it was shown as +00:00, a time that never is on the owner's clock
    assert "--from '2026-03-29T01:30' does not exist in Europe/London: the clocks skip that hour" in gap.stderr
    both = runner.invoke(app, [*base, "--json", "--week", "2026-08-31", "--from", "2026-08-24T00:00"])
    assert both.exit_code == 1  # --week was dropped without a word
    assert both.stderr == "Error: --week and --from both say where the range begins: give one of them\n"
    to_only = json.loads(
        runner.invoke(app, [*base, "--json", "--week", "2026-08-31", "--to", "2026-09-01T00:00"]).stdout
    )
    assert (to_only["from"], to_only["to"]) == ("2026-08-31T00:00:00+01:00", "2026-09-01T00:00:00+01:00")


def test_people_json(demo_db: Path) -> None:
    people = json.loads(runner.invoke(app, ["calendar", "people", "--json", "--db", str(demo_db)]).stdout)
    assert people[0]["key"] == "you"
    assert people[0]["owner"] is True
    assert any(p["key"] == "priya" and p["name"] == "Priya Raman" and p["owner"] is False for p in people)


def test_read_only_calendar_commands_refuse_a_missing_db(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    for args in (["calendar", "people"], ["calendar", "show"]):
        result = runner.invoke(app, [*args, "--db", str(missing)])
        assert result.exit_code == 1
        assert f"no database at {missing}" in result.stderr
        assert "no owner" not in result.stderr
    assert not missing.exists()
