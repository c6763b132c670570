"""The import's shortcuts for the usual case give what the general path gives, on the inputs they do not take."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
from sqlalchemy import text as sql

from scheduler_agent.calendar.events import recurrence_columns
from scheduler_agent.calendar.ics.importing import import_file
from scheduler_agent.calendar.ics.scan import _NAME, IcsError, _scan_lines, _well_formed, property_name, scan
from scheduler_agent.calendar.ics.values import EARLIEST, LATEST, outside
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
        assert [found for _, found in scanned.numbered().lines] == [
            "BEGIN:VCALENDAR",
            "VERSION:2.0",
            line,
            "END:VCALENDAR",
        ]
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


USUAL = (
    "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nBEGIN:VEVENT\r\nUID:a@t\r\nDTSTART:20261005T090000Z\r\n"
    "DTEND:20261005T100000Z\r\nSUMMARY:A long summary\r\n  folded once\r\n\tand twice\r\nBEGIN:VALARM\r\n"
    "TRIGGER:-PT5M\r\nEND:VALARM\r\nEND:VEVENT\r\nBEGIN:VEVENT\r\nUID:b@t\r\nDTSTART:20261006T090000Z\r\n"
    "END:VEVENT\r\nEND:VCALENDAR\r\n"
)
# Files of every shape the whole-text check may meet: the ones it takes, and each kind it must leave to the
# line-by-line scan (which then accepts the file or names the line at fault).
SHAPES = {
    "usual": USUAL,
    "LF lines": USUAL.replace("\r\n", "\n"),
    "CRLF and LF mixed": USUAL.replace("\r\nEND:VEVENT", "\nEND:VEVENT"),
    "no line break at the end": USUAL.removesuffix("\r\n"),
    "blank lines at the end": USUAL + "\r\n\r\n",
    "two calendars": USUAL + USUAL,
    "lower-case begin and end": USUAL.replace("BEGIN:VEVENT", "begin:vevent").replace("END:VEVENT", "end:VEvent"),
    "a folded BEGIN": USUAL.replace("BEGIN:VALARM", "BEGIN:VAL\r\n ARM"),
    "a blank line inside": USUAL.replace("UID:b@t\r\n", "UID:b@t\r\n\r\n"),
    "a line of spaces": USUAL.replace("UID:b@t\r\n", "UID:b@t\r\n\u3000\r\n"),
    "a fold after a blank line": USUAL.replace("UID:b@t\r\n", "UID:b@t\r\n\r\n more\r\n"),
    "a lone CR": USUAL.replace("SUMMARY:A long summary", "SUMMARY:A long\rsummary"),
    "a form feed": USUAL.replace("SUMMARY:A long summary", "SUMMARY:A long\fsummary"),
    "a line separator": USUAL.replace("SUMMARY:A long summary", "SUMMARY:A long\u2028summary"),
    "a line with no colon": USUAL.replace("UID:b@t", "UID;X=1"),
    "a name with a space": USUAL.replace("UID:b@t", "U ID:b@t"),
    "a non-ASCII name": USUAL.replace("UID:b@t", "\u017fUMMARY:b@t"),
    "BEGIN with a parameter": USUAL.replace("BEGIN:VALARM", "BEGIN;X=1:VALARM"),
    "a line after END:VCALENDAR": USUAL + "X-AFTER:1\r\n",
    "a line between two calendars": USUAL + "X-BETWEEN:1\r\n" + USUAL,
    "a VEVENT after END:VCALENDAR": USUAL + "BEGIN:VEVENT\r\nEND:VEVENT\r\n",
    "END:VCALENDAR twice": USUAL + "END:VCALENDAR\r\n",
    "an unclosed VEVENT": USUAL.replace("END:VEVENT\r\nEND:VCALENDAR", "END:VCALENDAR"),
    "END of the wrong component": USUAL.replace("END:VALARM", "END:VEVENT"),
    "starts with a folded line": " " + USUAL,
    "starts with a blank line": "\r\n" + USUAL,
    "starts with something else": "VERSION:2.0\r\n" + USUAL,
    "BEGIN:VCALENDAR with spaces": USUAL.replace("BEGIN:VCALENDAR", "BEGIN:VCALENDAR  ", 1),
    "BEGIN:VCALENDAR folded": USUAL.replace("BEGIN:VCALENDAR", "BEGIN:VCAL\r\n ENDAR", 1),
    "empty": "",
    "only line breaks": "\r\n\r\n",
    "not iCalendar": "hello\r\n",
}


def outcome(judge: object, text: str) -> object:
    try:
        return judge(text)  # type: ignore[operator]
    except IcsError as exc:
        return str(exc)


@pytest.mark.parametrize("shape", SHAPES)
def test_the_whole_text_check_agrees_with_the_line_by_line_scan(shape: str) -> None:
    text = SHAPES[shape]
    by_line = outcome(lambda t: len(_scan_lines(t, "cal.ics").vevents), text)
    assert outcome(lambda t: scan(t, "cal.ics").count, text) == by_line  # the same count, or the same message
    quick = _well_formed(text)
    if quick is not None:
        assert quick == by_line  # what the shortcut takes, the scan takes too, with as many VEVENTs


def test_the_whole_text_check_takes_the_usual_files() -> None:
    taken = {shape for shape, text in SHAPES.items() if _well_formed(text) is not None}
    assert taken == {
        "usual",
        "LF lines",
        "CRLF and LF mixed",
        "no line break at the end",
        "blank lines at the end",
        "two calendars",
        "lower-case begin and end",
        "a folded BEGIN",
        "BEGIN with a parameter",
        "BEGIN:VCALENDAR with spaces",
        "BEGIN:VCALENDAR folded",
    }


def test_a_file_the_shortcut_took_is_numbered_when_a_message_needs_it(demo_db: Path, tmp_path: Path) -> None:
    file = tmp_path / "late.ics"
    file.write_text(USUAL.replace("DTSTART:20261006T090000Z", "DTSTART:20261006T090000Z\r\nDTEND:20261006T080000Z"))
    assert _well_formed(file.read_text()) is not None
    summary = import_file(db.connect(demo_db), file, "priya")
    assert "Skipped late.ics line 17: event (no SUMMARY) (UID b@t): DTEND before DTSTART" in summary


@pytest.mark.parametrize("year", [999, 1000, 1001, 9997, 9998, 9999])
@pytest.mark.parametrize("zone", ["Pacific/Kiritimati", "Etc/GMT+12", "UTC", "America/New_York"])
def test_outside_at_a_glance_agrees_with_the_time_in_utc(year: int, zone: str) -> None:
    """`outside` answers from the local year for years well inside the range: the same as in UTC."""
    for month, day, hour in [(1, 1, 0), (1, 1, 12), (12, 31, 12), (12, 31, 23)]:
        moment = datetime(year, month, day, hour, tzinfo=ZoneInfo(zone))
        try:
            expected = not EARLIEST <= moment.astimezone(UTC) < LATEST
        except OverflowError:
            expected = True
        assert outside(moment) == expected


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
        sql(
            "SELECT e.title, e.start_utc, s.recurrence_id FROM events e JOIN event_sources s ON s.event_id = e.id "
            "WHERE s.uid = 'single@t'"
        )
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
        sql(
            "SELECT s.uid, e.rrule, e.rdates, e.exdates FROM events e JOIN event_sources s ON s.event_id = e.id "
            "WHERE s.uid IN ('ex@t', 'plain@t') ORDER BY s.uid"
        )
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
