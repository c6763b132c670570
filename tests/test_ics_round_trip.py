"""`calendar export` then `import` (or `subscribe`) adds nothing: UIDs kept, and each event's key here.

An imported or subscribed event is exported under the UID it came with; an event made here under a
stable UID of its own (`event-N-<made>@scheduler-agent`). Each carries its key (X-SCHEDULER-AGENT-EVENT),
so this calendar recognises its own events whatever origin the file comes back through.
"""

from __future__ import annotations

import re
from pathlib import Path

from sqlalchemy import Connection
from sqlalchemy import text as sql
from test_feeds import feed_server
from test_ics import WEEKLY_STANDUP, busy, event_count, ics, imported, invoke, write
from test_ics_migrations import demo_before

from scheduler_agent.calendar.ics import export_calendar, person_named, read_ics
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.storage import db

ORPHANS = Path(__file__).parent / "data" / "ics" / "reference" / "orphan-overrides.ics"


def priya_ics(tmp_path: Path) -> Path:
    source = ics(
        WEEKLY_STANDUP,
        "UID:review@t\nSUMMARY:Review\nDTSTART:20261019T130000Z\nDURATION:PT1H",
    )
    return write(tmp_path, source)


def export_priya(demo_db: Path, out: Path) -> str:
    result = invoke("export", "--person", "priya", "--out", str(out), "--db", str(demo_db))
    assert result.exit_code == 0, result.output
    return out.read_bytes().decode()


def test_import_export_import_adds_nothing_and_keeps_uids(demo_db: Path, tmp_path: Path) -> None:
    imported(invoke("import", str(priya_ics(tmp_path)), "--person", "priya", "--db", str(demo_db)))
    imported(invoke("import", str(ORPHANS), "--person", "priya", "--db", str(demo_db)))
    count = event_count(demo_db)
    before = busy(demo_db, "priya", "2026-08-24", "2026-12-01")
    text = export_priya(demo_db, tmp_path / "priya.ics")
    assert "UID:standup@t\r\n" in text  # an imported series keeps its UID
    assert "UID:review@t\r\n" in text
    assert text.count("UID:series@t\r\n") == 2  # two overrides without their series: each with its RECURRENCE-ID
    assert "RECURRENCE-ID:20261006T090000Z\r\n" in text
    local = re.findall(r"UID:(event-\d+-\d{8}T\d{6}Z-[0-9a-f]{8}@scheduler-agent)\r\n", text)
    assert len(local) == 14  # Priya's demo events, made here
    again = export_priya(demo_db, tmp_path / "again.ics")
    assert re.findall(r"UID:(\S+)\r\n", again) == re.findall(r"UID:(\S+)\r\n", text)  # stable from export to export

    out = imported(invoke("import", str(tmp_path / "priya.ics"), "--person", "priya", "--db", str(demo_db)))
    assert out.splitlines()[0] == (
        "Imported 18 events (1 recurring) for Priya Raman (priya) from priya.ics: 0 new, 18 already there."
    )
    assert event_count(demo_db) == count
    assert busy(demo_db, "priya", "2026-08-24", "2026-12-01") == before


def test_an_export_imported_for_someone_else_or_subscribed_to_adds_nothing(demo_db: Path, tmp_path: Path) -> None:
    imported(invoke("import", str(priya_ics(tmp_path)), "--person", "priya", "--db", str(demo_db)))
    count = event_count(demo_db)
    text = export_priya(demo_db, tmp_path / "priya.ics")
    out = imported(invoke("import", str(tmp_path / "priya.ics"), "--person", "aiko", "--db", str(demo_db)))
    assert ": 0 new, 16 already there." in out  # the events are this calendar's own, whoever it is given to
    assert event_count(demo_db) == count
    with feed_server() as (url, feed):
        feed.body = text
        result = invoke("subscribe", url, "--person", "priya", "--allow-http", "--allow-private", "--db", str(demo_db))
        assert result.exit_code == 0, result.output
    assert event_count(demo_db) == count


def test_a_subscribed_event_keeps_its_uid_and_comes_back_as_nothing_new(demo_db: Path, tmp_path: Path) -> None:
    with feed_server() as (url, feed):
        feed.body = ics(WEEKLY_STANDUP)
        result = invoke("subscribe", url, "--person", "priya", "--allow-http", "--allow-private", "--db", str(demo_db))
        assert result.exit_code == 0, result.output
    count = event_count(demo_db)
    text = export_priya(demo_db, tmp_path / "priya.ics")
    assert "UID:standup@t\r\n" in text
    out = imported(invoke("import", str(tmp_path / "priya.ics"), "--person", "priya", "--db", str(demo_db)))
    assert ": 0 new, 15 already there." in out  # a file, not the feed: still the same events
    assert event_count(demo_db) == count


def test_another_calendar_imports_the_export_as_new_events(demo_db: Path, tmp_path: Path) -> None:
    """Another demo calendar has events of the same ids, made in the same second: its token differs."""
    export_priya(demo_db, tmp_path / "priya.ics")
    other = tmp_path / "other.db"
    assert invoke("seed-demo", "--db", str(other)).exit_code == 0
    count = event_count(other)
    out = imported(invoke("import", str(tmp_path / "priya.ics"), "--person", "priya", "--db", str(other)))
    assert ": 14 new." in out
    assert event_count(other) == count + 14


def test_a_calendar_made_before_m039_gets_its_token_and_its_export_comes_back_as_nothing_new(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    demo_before("m039_calendar_identity", path).close()
    conn = db.connect(path)
    try:
        (token,) = conn.execute(sql("SELECT token FROM calendar_identity")).fetchone()
    finally:
        conn.close()
    assert re.fullmatch(r"[0-9a-f]{8}", token)
    text = export_priya(path, tmp_path / "priya.ics")
    assert f"-{token}\r\n" in text
    count = event_count(path)
    out = imported(invoke("import", str(tmp_path / "priya.ics"), "--person", "priya", "--db", str(path)))
    assert ": 0 new, 14 already there." in out
    assert event_count(path) == count


def test_the_round_trip_holds_on_each_database(any_conn: Connection) -> None:
    """The token, the keys and their lookup are plain SQL: on PostgreSQL as on SQLite."""
    owner = get_owner(any_conn)
    priya = person_named(any_conn, "priya")
    exported = export_calendar(any_conn, priya)
    read = read_ics(exported.text, name="priya.ics", owner=owner, person=priya)
    counts = import_events(any_conn, "priya", read.events, read.dropped)
    assert (counts.new, counts.unchanged) == (0, exported.events)
