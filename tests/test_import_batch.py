"""The batched import path: what one transaction of `executemany` calls stores is what one event at a time did."""

from __future__ import annotations

import gc
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from sqlalchemy import text as sql

from scheduler_agent.calendar.events import event_records
from scheduler_agent.calendar.ics.importing import import_file
from scheduler_agent.calendar.ics.scan import IcsError
from scheduler_agent.calendar.imports import import_events
from scheduler_agent.calendar.types import ImportedEvent
from scheduler_agent.storage import db


def vevent(uid: str, day: int, title: str, extra: str = "") -> str:
    return (
        f"BEGIN:VEVENT\r\nUID:{uid}\r\nDTSTAMP:20260801T120000Z\r\nDTSTART:202610{day:02d}T090000Z\r\n"
        f"DTEND:202610{day:02d}T100000Z\r\nSUMMARY:{title}\r\n{extra}END:VEVENT\r\n"
    )


def calendar(*events: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" + "".join(events) + "END:VCALENDAR\r\n"


def test_a_batch_gets_ids_after_the_highest_attendees_and_sources(demo_db: Path, tmp_path: Path) -> None:
    conn = db.connect(demo_db)
    highest = conn.execute(sql("SELECT max(id) FROM events")).fetchone()[0]
    file = tmp_path / "a.ics"
    file.write_text(calendar(*(vevent(f"e{n}@t", 1 + n, f"Event {n}") for n in range(20))))
    assert "20 new" in import_file(conn, file, "priya")
    rows = conn.execute(
        sql(
            "SELECT e.id, e.title, a.person_key, s.uid, s.origin FROM events e JOIN event_attendees a ON "
            "a.event_id = e.id "
            "JOIN event_sources s ON s.event_id = e.id WHERE e.id > :highest ORDER BY e.id"
        ),
        {"highest": highest},
    ).fetchall()
    assert [tuple(row) for row in rows] == [(highest + 1 + n, f"Event {n}", "priya", f"e{n}@t", "") for n in range(20)]
    again = import_file(conn, file, "priya")  # the same file: found by its keys, nothing doubles
    assert "20 already there" in again
    assert "0 new" in again
    assert (
        conn.execute(sql("SELECT count(*) FROM events WHERE id > :highest"), {"highest": highest}).fetchone()[0] == 20
    )


def test_one_key_twice_in_a_batch_is_one_event_with_the_last_copy(demo_db: Path) -> None:
    conn = db.connect(demo_db)
    start = datetime(2026, 10, 5, 9, tzinfo=UTC)
    first = ImportedEvent("dup@t", None, "First copy", start, start + timedelta(hours=1), "UTC")
    second = ImportedEvent("dup@t", None, "Second copy", start, start + timedelta(hours=2), "UTC")
    counts = import_events(conn, "priya", [first, second], [("dup@t", None)])
    assert (counts.new, counts.updated, counts.removed) == (1, 1, 1)  # kept, then removed: it is cancelled
    assert not [r for r in event_records(conn, "priya") if "copy" in r.event.title]
    counts = import_events(conn, "priya", [first, second])
    assert [r.event.title for r in event_records(conn, "priya") if "copy" in r.event.title] == ["Second copy"]


def test_a_bad_event_in_a_batch_leaves_nothing_and_the_collector_is_back_on(demo_db: Path, tmp_path: Path) -> None:
    conn = db.connect(demo_db)
    before = conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0]
    file = tmp_path / "bad.ics"
    file.write_text(
        calendar(
            vevent("ok@t", 5, "Fine"), vevent("bad@t", 6, "Bad", "RRULE:FREQ=WEEKLY;COUNT=2;UNTIL=20261231T000000Z\r\n")
        )
    )
    with pytest.raises(IcsError):
        import_file(conn, file, "priya", strict=True)
    assert conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0] == before
    assert gc.isenabled()
    start = datetime(2026, 10, 5, 9, tzinfo=UTC)
    with pytest.raises(Exception, match="unknown attendee"):  # a batch for someone not in the calendar
        import_events(conn, "nobody", [ImportedEvent("x@t", None, "X", start, start + timedelta(hours=1), "UTC")])
    assert conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0] == before
