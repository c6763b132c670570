"""The import's shortcuts for the usual case give what the general path gives, on the inputs they do not take."""

from __future__ import annotations

from pathlib import Path

import pytest

from scheduler_agent.calendar.events import recurrence_columns
from scheduler_agent.calendar.ics.importing import import_file
from scheduler_agent.calendar.ics.scan import _NAME, IcsError, property_name, scan
from scheduler_agent.calendar.types import Recurrence
from scheduler_agent.storage import db

# Lines around the one-match check of a content line's name: what every line was judged by before it.
LINES = [
    "SUMMARY:Standup",
    "summary:lower case",
    'X-WR-CALNAME;X-A=1;X-B="a:b":Team',
    "DTSTART;TZID=Europe/London:20261005T090000",
    "SUMMARY;LANGUAGE=en",  # parameters and no ':' at all
    "SUMMARY",
    ";LANGUAGE=en:no name",
    ":no name",
    "SUM MARY:a space in the name",
    "SUMMARY_X:an underscore",
    "\u017fUMMARY:a long s, which upper-cases to S",
    "SUMM\u0131:a dotless i, which upper-cases to I",
    "K\u212aELVIN:a Kelvin sign",
    "\u00e9T\u00c9:accents",
    "X-\u00dfTRASSE:a sharp s, which upper-cases to SS",
]


def judged_before(line: str) -> bool:
    return ":" in line and _NAME.fullmatch(property_name(line)) is not None


@pytest.mark.parametrize("line", LINES)
def test_a_line_is_a_content_line_exactly_when_it_was_before(line: str) -> None:
    text = f"BEGIN:VCALENDAR\r\nVERSION:2.0\r\n{line}\r\nEND:VCALENDAR\r\n"
    if judged_before(line):
        scanned = scan(text, "cal.ics")
        assert [found for _, found in scanned.lines] == ["BEGIN:VCALENDAR", "VERSION:2.0", line, "END:VCALENDAR"]
    else:
        with pytest.raises(IcsError, match=r"cal\.ics line 3: .* is not an iCalendar content line"):
            scan(text, "cal.ics")


def test_the_lines_cover_both_answers() -> None:
    assert {judged_before(line) for line in LINES} == {True, False}
    assert judged_before("\u017fUMMARY:x")  # a name only upper-casing makes plain ASCII still counts


def calendar(*events: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:-//t//EN\r\n" + "".join(events) + "END:VCALENDAR\r\n"


def event(uid: str, *lines: str) -> str:
    return (
        "BEGIN:VEVENT\r\n"
        + f"UID:{uid}\r\nDTSTAMP:20260801T120000Z\r\n"
        + "".join(f"{x}\r\n" for x in lines)
        + "END:VEVENT\r\n"
    )


def test_an_override_of_a_single_event_is_stored_as_the_event_itself(demo_db: Path, tmp_path: Path) -> None:
    """The one event whose key changes when it is taken (an override standing for an event that does not
    repeat): it is stored under no RECURRENCE-ID, as the event it edits."""
    start = "DTSTART:20261005T090000Z"
    file = tmp_path / "edit.ics"
    file.write_text(
        calendar(
            event("single@t", "SUMMARY:Planned", start, "DTEND:20261005T100000Z"),
            event(
                "single@t",
                "SUMMARY:Moved",
                "RECURRENCE-ID:20261005T090000Z",
                "SEQUENCE:1",
                "DTSTART:20261005T110000Z",
                "DTEND:20261005T120000Z",
            ),
        )
    )
    conn = db.connect(demo_db)
    assert "1 new" in import_file(conn, file, "priya")
    rows = conn.execute(
        "SELECT e.title, e.start_utc, s.recurrence_id FROM events e JOIN event_sources s ON s.event_id = e.id "
        "WHERE s.uid = 'single@t'"
    ).fetchall()
    assert [tuple(row) for row in rows] == [("Moved", "2026-10-05T11:00:00Z", "")]
    assert "1 already there" in import_file(conn, file, "priya")  # found again under that same key


def test_an_event_with_only_exdates_is_stored_as_one_that_does_not_repeat(demo_db: Path, tmp_path: Path) -> None:
    file = tmp_path / "exdate.ics"
    file.write_text(
        calendar(
            event(
                "ex@t",
                "SUMMARY:Once",
                "DTSTART:20261006T090000Z",
                "DTEND:20261006T100000Z",
                "EXDATE:20261013T090000Z",
            ),
            event("plain@t", "SUMMARY:Plain", "DTSTART:20261007T090000Z", "DTEND:20261007T100000Z"),
        )
    )
    conn = db.connect(demo_db)
    assert "Imported 2 events (0 recurring)" in import_file(conn, file, "priya")
    rows = conn.execute(
        "SELECT s.uid, e.rrule, e.rdates, e.exdates FROM events e JOIN event_sources s ON s.event_id = e.id "
        "WHERE s.uid IN ('ex@t', 'plain@t') ORDER BY s.uid"
    ).fetchall()
    # EXDATEs alone do not make an event repeat (checked_row stores it as add_event does): both rows alike
    assert [tuple(row) for row in rows] == [("ex@t", None, "", ""), ("plain@t", None, "", "")]


def test_recurrence_columns_of_a_rule_alone_and_of_dates() -> None:
    from datetime import UTC, datetime

    later, earlier = datetime(2026, 10, 13, 9, tzinfo=UTC), datetime(2026, 10, 6, 9, tzinfo=UTC)
    assert recurrence_columns(Recurrence()) == (None, "", "")
    assert recurrence_columns(Recurrence("FREQ=DAILY")) == ("FREQ=DAILY", "", "")
    assert recurrence_columns(Recurrence(None, (later, earlier, later), ())) == (
        None,
        "2026-10-06T09:00:00Z 2026-10-13T09:00:00Z",
        "",
    )
    assert recurrence_columns(Recurrence("FREQ=DAILY", (), (later,))) == ("FREQ=DAILY", "", "2026-10-13T09:00:00Z")
