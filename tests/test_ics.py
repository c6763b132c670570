"""`calendar import` / `calendar export`: iCalendar files in every time-zone form, repeating events
expanded into busy time, all-or-nothing imports, and a round trip."""

from __future__ import annotations

import re
import subprocess
import sys
from datetime import UTC, date, datetime, time
from pathlib import Path
from zoneinfo import ZoneInfo

import icalendar
import pytest
from click.testing import CliRunner, Result
from helpers import demo_clock
from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.slots import week_span
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.storage import db as database

runner = CliRunner()
LONDON = ZoneInfo("Europe/London")
AUGUST = demo_clock()  # the demo clock
CANONICAL = [
    "- Mon 2026-08-31 09:00-09:30",
    "- Mon 2026-08-31 14:00-15:00",
    "- Wed 2026-09-02 09:15-09:45",
]


def invoke(*args: str) -> Result:
    return runner.invoke(calendar_app, list(args))


def ics(*events: str) -> str:
    """A VCALENDAR around `events` (each the lines between BEGIN:VEVENT and END:VEVENT), CRLF as RFC 5545 says."""
    lines = ["BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//tests//EN"]
    for event in events:
        lines += ["BEGIN:VEVENT", *event.strip().splitlines(), "END:VEVENT"]
    lines.append("END:VCALENDAR")
    return "\r\n".join(lines) + "\r\n"


def write(tmp_path: Path, text: str, name: str = "cal.ics") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8", newline="")
    return path


def connect(path: Path) -> Connection:
    return database.connect(path)


def busy(path: Path, person: str, first: str, last: str) -> list[tuple[str, str, str]]:
    """`person`'s busy time from day `first` to day `last` (London), as (title, start, end) in London time."""
    conn = connect(path)
    try:
        start = datetime.fromisoformat(first).replace(tzinfo=LONDON)
        end = datetime.fromisoformat(last).replace(tzinfo=LONDON)
        return [
            (e.title, f"{e.start.astimezone(LONDON):%a %Y-%m-%d %H:%M}", f"{e.end.astimezone(LONDON):%H:%M}")
            for e in events_for(conn, person, start, end)
        ]
    finally:
        conn.close()


def event_count(path: Path) -> int:
    conn = connect(path)
    try:
        count: int = conn.execute(sql("SELECT count(*) FROM events")).fetchone()[0]
        return count
    finally:
        conn.close()


def imported(result: Result) -> str:
    assert result.exit_code == 0, result.output
    return result.stdout


def assert_one_line_error(result: Result, *parts: str) -> None:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.startswith("Error: ")
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.output
    for part in parts:
        assert part in result.stderr, result.stderr


def free_slots(path: Path, week: str, clock: Clock = AUGUST, person: str = "priya") -> list[str]:
    conn = connect(path)
    try:
        text = CalendarTools(conn, clock).find_free_slots(person, week, 30)
    finally:
        conn.close()
    return [line for line in text.splitlines() if line.startswith("- ")]


# --- time zones -----------------------------------------------------------------------------


def test_each_kind_of_time_becomes_the_right_busy_time(demo_db: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ics(
            "UID:tzid@t\nSUMMARY:In New York\nDTSTART;TZID=America/New_York:20261005T100000\n"
            "DTEND;TZID=America/New_York:20261005T110000",
            "UID:utc@t\nSUMMARY:In UTC\nDTSTART:20261006T130000Z\nDURATION:PT90M",
            "UID:floating@t\nSUMMARY:Floating\nDTSTART:20261007T100000\nDTEND:20261007T103000",
            "UID:allday@t\nSUMMARY:Day off\nDTSTART;VALUE=DATE:20261008\nDTEND;VALUE=DATE:20261009",
            "UID:allday-no-end@t\nSUMMARY:Another day off\nDTSTART;VALUE=DATE:20261009",
        ),
    )
    out = imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))

    assert out.splitlines() == [
        "Imported 5 events (0 recurring) for Priya Raman (priya) from cal.ics: 5 new.",
        "1 event had floating times (no time zone): read as Europe/London, the owner's zone.",
    ]
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-10") == [
        ("In New York", "Mon 2026-10-05 15:00", "16:00"),  # 10:00 EDT
        ("In UTC", "Tue 2026-10-06 14:00", "15:30"),  # 13:00Z is 14:00 BST
        ("Floating", "Wed 2026-10-07 10:00", "10:30"),  # the owner's wall clock
        ("Day off", "Thu 2026-10-08 00:00", "00:00"),  # the whole day in Priya's zone
        ("Another day off", "Fri 2026-10-09 00:00", "00:00"),  # a date and no end: one day
    ]
    assert busy(demo_db, "you", "2026-10-05", "2026-10-10") == []  # Priya's time, not the owner's


def test_an_all_day_event_is_the_whole_day_in_the_persons_own_zone(demo_db: Path, tmp_path: Path) -> None:
    path = write(tmp_path, ics("UID:off@t\nSUMMARY:Holiday\nDTSTART;VALUE=DATE:20261008"))
    imported(invoke("import", str(path), "--person", "Aiko", "--db", str(demo_db)))  # America/New_York
    assert busy(demo_db, "aiko", "2026-10-08", "2026-10-10") == [("Holiday", "Thu 2026-10-08 05:00", "05:00")]


def test_importing_for_the_owner_by_default_or_by_name(demo_db: Path, tmp_path: Path) -> None:
    path = write(tmp_path, ics("UID:mine@t\nSUMMARY:Dentist\nDTSTART:20261006T130000Z\nDURATION:PT1H"))
    assert "for Jordan Lee (you)" in imported(invoke("import", str(path), "--db", str(demo_db)))
    assert "already there" in imported(invoke("import", str(path), "--person", "Jordan Lee", "--db", str(demo_db)))
    assert busy(demo_db, "you", "2026-10-06", "2026-10-07") == [("Dentist", "Tue 2026-10-06 14:00", "15:00")]


def test_a_duration_counts_real_hours_and_calendar_days_across_the_dst_change(demo_db: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ics(
            "UID:night@t\nSUMMARY:Night shift\nDTSTART;TZID=Europe/London:20261025T003000\nDURATION:PT2H",
            "UID:day@t\nSUMMARY:Day\nDTSTART;TZID=Europe/London:20261024T120000\nDURATION:P1D",
        ),
    )
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    conn = connect(demo_db)
    found = events_for(conn, "priya", datetime(2026, 10, 24, tzinfo=UTC), datetime(2026, 10, 26, tzinfo=UTC))
    conn.close()
    assert [(e.title, e.start, e.end) for e in found] == [
        ("Day", datetime(2026, 10, 24, 11, 0, tzinfo=UTC), datetime(2026, 10, 25, 12, 0, tzinfo=UTC)),  # 12:00 to 12:00
        ("Night shift", datetime(2026, 10, 24, 23, 30, tzinfo=UTC), datetime(2026, 10, 25, 1, 30, tzinfo=UTC)),  # 2 h
    ]


def test_a_windows_zone_name_is_understood(demo_db: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ics("UID:w@t\nSUMMARY:Outlook\nDTSTART;TZID=GMT Standard Time:20261005T100000\nDURATION:PT1H"),
    )
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-06") == [("Outlook", "Mon 2026-10-05 10:00", "11:00")]


# --- repeating events -----------------------------------------------------------------------

WEEKLY_STANDUP = (
    "UID:standup@t\nSUMMARY:Standup\nDTSTART;TZID=Europe/London:20261012T090000\n"
    "DTEND;TZID=Europe/London:20261012T093000\nRRULE:FREQ=WEEKLY;BYDAY=MO;UNTIL=20261130T235959Z\n"
    "EXDATE;TZID=Europe/London:20261102T090000"
)


def test_a_weekly_rule_keeps_its_local_time_across_the_dst_change_and_skips_its_exdate(
    demo_db: Path, tmp_path: Path
) -> None:
    path = write(tmp_path, ics(WEEKLY_STANDUP))
    out = imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert out == "Imported 1 event (1 recurring) for Priya Raman (priya) from cal.ics: 1 new.\n"

    assert busy(demo_db, "priya", "2026-10-01", "2026-12-31") == [
        ("Standup", "Mon 2026-10-12 09:00", "09:30"),
        ("Standup", "Mon 2026-10-19 09:00", "09:30"),  # BST: 08:00Z
        ("Standup", "Mon 2026-10-26 09:00", "09:30"),  # after 2026-10-25, GMT: 09:00Z, still 09:00 local
        ("Standup", "Mon 2026-11-09 09:00", "09:30"),  # 11-02 is an EXDATE
        ("Standup", "Mon 2026-11-16 09:00", "09:30"),
        ("Standup", "Mon 2026-11-23 09:00", "09:30"),
        ("Standup", "Mon 2026-11-30 09:00", "09:30"),
    ]
    conn = connect(demo_db)
    occurrences = events_for(conn, "priya", *week_span(date(2026, 10, 19), "Europe/London"))
    after = events_for(conn, "priya", *week_span(date(2026, 10, 26), "Europe/London"))
    conn.close()
    assert [e.start for e in occurrences] == [datetime(2026, 10, 19, 8, 0, tzinfo=UTC)]
    assert [e.start for e in after] == [datetime(2026, 10, 26, 9, 0, tzinfo=UTC)]
    assert occurrences[0].id == after[0].id
    assert after[0].recurring  # one event, many occurrences

    october = Clock.pinned_at(date(2026, 10, 1), time(9, 0), "Europe/London")
    assert free_slots(demo_db, "2026-10-26", october)[0] == "- Mon 2026-10-26 09:30-17:00"  # the standup is busy
    assert free_slots(demo_db, "2026-11-02", october)[0] == "- Mon 2026-11-02 09:00-17:00"  # the excluded Monday


def test_a_repeating_busy_block_removes_the_canonical_window(demo_db: Path, tmp_path: Path) -> None:
    assert free_slots(demo_db, "2026-08-31") == CANONICAL
    path = write(
        tmp_path,
        ics(
            "UID:focus@t\nSUMMARY:Focus time\nDTSTART;TZID=Europe/London:20260803T140000\n"
            "DTEND;TZID=Europe/London:20260803T150000\nRRULE:FREQ=WEEKLY;BYDAY=MO"
        ),
    )
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))

    assert free_slots(demo_db, "2026-08-31") == [CANONICAL[0], CANONICAL[2]]
    conn = connect(demo_db)
    with pytest.raises(ToolError) as raised:  # the conflict check sees the occurrence too
        CalendarTools(conn, AUGUST).create_event("priya", "2026-08-31T14:00", 30)
    conn.close()
    assert "'Focus time' (Mon 2026-08-31 14:00-15:00; priya)" in str(raised.value)
    shown = invoke("show", "--person", "priya", "--week", "2026-08-31", "--db", str(demo_db), "--today", "2026-08-27")
    assert any(line.startswith("  14:00-15:00  Focus time  (priya)  #") for line in shown.stdout.splitlines())
    assert "(repeats)" in shown.stdout


def test_a_moved_occurrence_replaces_the_one_its_recurrence_id_names(demo_db: Path, tmp_path: Path) -> None:
    moved = (
        "UID:standup@t\nSUMMARY:Standup (moved)\nRECURRENCE-ID;TZID=Europe/London:20261019T090000\n"
        "DTSTART;TZID=Europe/London:20261020T110000\nDTEND;TZID=Europe/London:20261020T113000"
    )
    cancelled = "UID:standup@t\nSTATUS:CANCELLED\nRECURRENCE-ID;TZID=Europe/London:20261026T090000"
    path = write(tmp_path, ics(WEEKLY_STANDUP, moved, cancelled))
    out = imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    # One series: the overrides are its components, and the library applies them.
    assert out.splitlines() == ["Imported 1 event (1 recurring) for Priya Raman (priya) from cal.ics: 1 new."]
    assert busy(demo_db, "priya", "2026-10-12", "2026-11-03") == [
        ("Standup", "Mon 2026-10-12 09:00", "09:30"),
        ("Standup (moved)", "Tue 2026-10-20 11:00", "11:30"),
    ]


def test_rdates_add_occurrences(demo_db: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ics(
            "UID:r@t\nSUMMARY:Review\nDTSTART:20261005T130000Z\nDURATION:PT1H\nRDATE:20261007T150000Z,20261009T080000Z"
        ),
    )
    assert "(1 recurring)" in imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-10") == [
        ("Review", "Mon 2026-10-05 14:00", "15:00"),
        ("Review", "Wed 2026-10-07 16:00", "17:00"),
        ("Review", "Fri 2026-10-09 09:00", "10:00"),
    ]


def test_an_all_day_rule_with_a_date_until_repeats_whole_days(demo_db: Path, tmp_path: Path) -> None:
    path = write(tmp_path, ics("UID:gym@t\nSUMMARY:Away\nDTSTART;VALUE=DATE:20261023\nRRULE:FREQ=DAILY;UNTIL=20261026"))
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert busy(demo_db, "priya", "2026-10-20", "2026-10-31") == [
        ("Away", "Fri 2026-10-23 00:00", "00:00"),
        ("Away", "Sat 2026-10-24 00:00", "00:00"),
        ("Away", "Sun 2026-10-25 00:00", "00:00"),  # 25 hours long: the clocks go back
        ("Away", "Mon 2026-10-26 00:00", "00:00"),  # UNTIL is inclusive
    ]


def test_an_endless_rule_is_expanded_only_over_the_range_asked_about(demo_db: Path, tmp_path: Path) -> None:
    path = write(tmp_path, ics("UID:d@t\nSUMMARY:Daily\nDTSTART:20200106T090000Z\nDURATION:PT15M\nRRULE:FREQ=DAILY"))
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert len(busy(demo_db, "priya", "2031-03-03", "2031-03-10")) == 7


# --- lenient, strict, and files that are not iCalendar ------------------------------------------

GOOD = "UID:good@t\nSUMMARY:Fine\nDTSTART:20261006T130000Z\nDURATION:PT1H"
NOT_ICALENDAR = [
    ("Subject,Start Date\nStandup,2026-10-06\n", ["cal.ics line 1:", "not an iCalendar file", "'Subject,Start"]),
    ("", ["cal.ics is empty"]),
    (ics(GOOD).replace("END:VEVENT\r\n", ""), ["cal.ics line 9:", "END:VCALENDAR closes BEGIN:VEVENT of line 4"]),
    (ics(GOOD).replace("END:VCALENDAR\r\n", ""), ["cal.ics line 1:", "BEGIN:VCALENDAR is never closed"]),
]


@pytest.mark.parametrize(
    ("text", "parts"), NOT_ICALENDAR, ids=["csv", "empty", "unclosed-vevent", "unclosed-vcalendar"]
)
@pytest.mark.parametrize("mode", [[], ["--strict"]], ids=["lenient", "strict"])
def test_a_file_that_is_not_icalendar_is_refused_in_one_line_and_nothing_is_imported(
    demo_db: Path, tmp_path: Path, text: str, parts: list[str], mode: list[str]
) -> None:
    before = event_count(demo_db)
    result = invoke("import", str(write(tmp_path, text)), "--person", "priya", "--db", str(demo_db), *mode)
    assert_one_line_error(result, *parts, "nothing was imported")
    assert event_count(demo_db) == before


@pytest.mark.parametrize(
    ("text", "parts"),
    [
        (
            ics(GOOD, "UID:bad-start@t\nSUMMARY:Broken start\nDTSTART:2026083"),
            ["cal.ics line 13:", "'Broken start'", "UID bad-start@t", "DTSTART '2026083'", "write it like"],
        ),
        (
            ics(GOOD, "UID:no-start@t\nSUMMARY:No start\nDURATION:PT1H"),
            ["cal.ics line 10:", "'No start'", "UID no-start@t", "no DTSTART"],
        ),
        (
            ics(GOOD, "UID:long@t\nSUMMARY:Odd length\nDTSTART:20261006T100000Z\nDURATION:PT1X"),
            ["cal.ics line 14:", "'Odd length'", "DURATION 'PT1X'", "write it like PT1H30M"],
        ),
        (
            ics(GOOD, "UID:back@t\nSUMMARY:Backwards\nDTSTART:20261006T100000Z\nDTEND:20261006T090000Z"),
            ["'Backwards'", "ends (DTEND '20261006T090000Z') before it starts"],
        ),
        (
            ics(GOOD, "UID:rule@t\nSUMMARY:Odd rule\nDTSTART:20261006T100000Z\nDURATION:PT1H\nRRULE:FREQ=FORTNIGHTLY"),
            ["cal.ics line 15:", "'Odd rule'", "RRULE 'FREQ=FORTNIGHTLY'"],
        ),
        (
            ics(GOOD, "UID:two@t\nSUMMARY:Both\nDTSTART:20261006T100000Z\nDTEND:20261006T110000Z\nDURATION:PT1H"),
            ["'Both'", "both DTEND and DURATION"],
        ),
    ],
    ids=["bad-dtstart", "no-dtstart", "bad-duration", "backwards", "bad-rrule", "dtend-and-duration"],
)
def test_strict_refuses_the_file_for_one_bad_event_naming_it_and_imports_nothing(
    demo_db: Path, tmp_path: Path, text: str, parts: list[str]
) -> None:
    before = event_count(demo_db)
    result = invoke("import", str(write(tmp_path, text)), "--person", "priya", "--db", str(demo_db), "--strict")
    assert_one_line_error(result, *parts, "nothing was imported")
    assert event_count(demo_db) == before  # the good event before it is not in either


def test_strict_counts_every_problem_but_names_the_first(demo_db: Path, tmp_path: Path) -> None:
    text = ics("UID:a@t\nSUMMARY:A\nDTSTART:nope", "UID:b@t\nSUMMARY:B", "UID:c@t\nSUMMARY:C\nDTSTART:x")
    result = invoke("import", str(write(tmp_path, text)), "--db", str(demo_db), "--strict")
    assert_one_line_error(result, "'A'", "(2 other events in the file have problems too)")


def test_files_and_people_that_are_not_there(demo_db: Path, tmp_path: Path) -> None:
    assert_one_line_error(
        invoke("import", str(tmp_path / "missing.ics"), "--db", str(demo_db)), "cannot read", "missing.ics"
    )
    path = write(tmp_path, ics(GOOD))
    assert_one_line_error(
        invoke("import", str(path), "--person", "zed", "--db", str(demo_db)),
        "no one called 'zed'",
        "priya (Priya Raman)",
        "calendar add-person",
    )
    latin = tmp_path / "latin.ics"
    latin.write_bytes(ics("UID:l@t\nSUMMARY:Caf\xe9\nDTSTART:20261006T130000Z").encode("latin-1"))
    assert_one_line_error(invoke("import", str(latin), "--db", str(demo_db)), "not UTF-8", "save it as UTF-8")
    assert_one_line_error(invoke("import", str(path), "--db", str(tmp_path / "new.db")), "calendar set-owner")


# --- skipping, re-importing -----------------------------------------------------------------


def test_cancelled_free_and_zero_length_events_are_skipped_and_counted(demo_db: Path, tmp_path: Path) -> None:
    path = write(
        tmp_path,
        ics(
            GOOD,
            "UID:c@t\nSUMMARY:Called off\nSTATUS:CANCELLED\nDTSTART:20261006T100000Z\nDURATION:PT1H",
            "UID:f@t\nSUMMARY:Reminder\nTRANSP:TRANSPARENT\nDTSTART:20261006T100000Z\nDURATION:PT1H",
            "UID:z@t\nSUMMARY:Deadline\nDTSTART:20261006T170000Z",
        ),
    )
    out = imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert out.splitlines() == [
        "Imported 1 event (0 recurring) for Priya Raman (priya) from cal.ics: 1 new.",
        "Skipped 3: 1 cancelled, 1 transparent (marked free), 1 with no length (no DTEND or DURATION).",
    ]
    assert [title for title, *_ in busy(demo_db, "priya", "2026-10-06", "2026-10-07")] == ["Fine"]


def test_importing_again_updates_in_place_and_never_duplicates(demo_db: Path, tmp_path: Path) -> None:
    path = write(tmp_path, ics(GOOD, WEEKLY_STANDUP), "first.ics")
    imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    count = event_count(demo_db)
    again = imported(invoke("import", str(path), "--person", "priya", "--db", str(demo_db)))
    assert again == "Imported 2 events (1 recurring) for Priya Raman (priya) from first.ics: 0 new, 2 already there.\n"
    assert event_count(demo_db) == count

    moved = ics(GOOD.replace("T130000Z", "T150000Z"), WEEKLY_STANDUP)
    out = imported(invoke("import", str(write(tmp_path, moved)), "--person", "priya", "--db", str(demo_db)))
    assert ": 0 new, 1 updated, 1 already there." in out
    assert event_count(demo_db) == count
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-07") == [("Fine", "Tue 2026-10-06 16:00", "17:00")]

    called_off = ics(GOOD + "\nSTATUS:CANCELLED", WEEKLY_STANDUP)
    out = imported(invoke("import", str(write(tmp_path, called_off)), "--person", "priya", "--db", str(demo_db)))
    assert "1 removed (cancelled or free in the file now)" in out
    assert event_count(demo_db) == count - 1

    # The same file for someone else is their busy time, not a duplicate of Priya's.
    assert ": 2 new." in imported(invoke("import", str(path), "--person", "marco", "--db", str(demo_db)))
    assert event_count(demo_db) == count - 1 + 2


def test_cancelling_a_repeating_event_says_every_occurrence_goes(demo_db: Path, tmp_path: Path) -> None:
    imported(invoke("import", str(write(tmp_path, ics(WEEKLY_STANDUP))), "--person", "priya", "--db", str(demo_db)))
    event_id = event_count(demo_db)
    result = invoke("cancel", str(event_id), "--db", str(demo_db))
    assert result.exit_code == 0, result.output
    assert result.stdout.startswith("Cancelled 'Standup' every occurrence from Mon 2026-10-12 09:00-09:30")
    assert busy(demo_db, "priya", "2026-10-01", "2026-12-31") == []


# --- export ---------------------------------------------------------------------------------


def test_export_writes_rfc5545_that_icalendar_reads_back(demo_db: Path, tmp_path: Path) -> None:
    imported(invoke("import", str(write(tmp_path, ics(WEEKLY_STANDUP))), "--person", "priya", "--db", str(demo_db)))
    result = invoke("export", "--person", "priya", "--db", str(demo_db))
    assert result.exit_code == 0, result.output
    assert result.stdout_bytes.count(b"\r\n") == result.stdout_bytes.count(b"\n")  # CRLF, as RFC 5545 says
    text = result.stdout.replace("\n", "\r\n")  # the runner's .stdout folds CRLF to LF
    assert text.startswith("BEGIN:VCALENDAR\r\n")
    assert "PRODID:-//scheduler-agent//scheduler-agent//EN\r\n" in text
    assert "VERSION:2.0\r\n" in text
    assert "BEGIN:VTIMEZONE\r\nTZID:Europe/London\r\n" in text  # every TZID used has its VTIMEZONE
    assert re.search(r"\r\nUID:event-1-\d{8}T\d{6}Z-[0-9a-f]{8}@scheduler-agent\r\n", text)  # Weekly planning
    assert "DTSTART:20260824T090000Z\r\n" in text
    assert 'ATTENDEE;CN="Priya Raman":mailto:priya@scheduler-agent.invalid\r\n' in text
    assert "DTSTART;TZID=Europe/London:20261012T090000\r\n" in text
    assert "RRULE:FREQ=WEEKLY;UNTIL=20261130T235959Z;BYDAY=MO\r\n" in text
    assert "EXDATE;TZID=Europe/London:20261102T090000\r\n" in text
    calendar = icalendar.Calendar.from_ical(text)
    events = calendar.walk("VEVENT")
    assert all(not event.errors and event.get("DTSTAMP") for event in events)
    assert len(events) == 15  # Priya's 14 demo events and the standup
    assert "Hiring sync" not in text  # the owner's alone


def test_export_round_trip_gives_the_same_busy_time(demo_db: Path, tmp_path: Path) -> None:
    source = ics(
        WEEKLY_STANDUP,
        "UID:off@t\nSUMMARY:Day off\nDTSTART;VALUE=DATE:20261028\nRRULE:FREQ=WEEKLY;COUNT=2",
        "UID:ny@t\nSUMMARY:NY call\nDTSTART;TZID=America/New_York:20261027T100000\nDURATION:PT45M",
        "UID:r@t\nSUMMARY:Review\nDTSTART:20261019T130000Z\nDURATION:PT1H\nRDATE:20261029T150000Z",
    )
    imported(invoke("import", str(write(tmp_path, source)), "--person", "priya", "--db", str(demo_db)))
    out = tmp_path / "priya.ics"
    exported = invoke("export", "--person", "priya", "--out", str(out), "--db", str(demo_db))
    assert exported.stdout == f"Exported 18 event(s) (3 recurring) for Priya Raman (priya) to {out}.\n"

    fresh = tmp_path / "fresh.db"
    assert invoke("set-owner", "--name", "Jordan Lee", "--tz", "Europe/London", "--db", str(fresh)).exit_code == 0
    added = invoke("add-person", "priya", "--name", "Priya Raman", "--tz", "Europe/London", "--db", str(fresh))
    assert added.exit_code == 0
    assert ": 18 new." in imported(invoke("import", str(out), "--person", "priya", "--db", str(fresh)))

    for first, last in [("2026-08-31", "2026-09-05"), ("2026-10-19", "2026-11-07")]:
        assert busy(fresh, "priya", first, last) == busy(demo_db, "priya", first, last)
    assert len(busy(fresh, "priya", "2026-10-26", "2026-10-31")) == 4  # standup, NY call, day off, review
    # Exporting the copy gives the same file but for the event ids and stamps.
    again = invoke("export", "--person", "priya", "--db", str(fresh)).stdout
    assert again.count("BEGIN:VEVENT") == 18


def test_export_to_an_unwritable_place_is_one_line(demo_db: Path, tmp_path: Path) -> None:
    missing = tmp_path / "no" / "such"
    result = invoke("export", "--out", str(missing / "dir.ics"), "--db", str(demo_db))
    assert_one_line_error(result, f"the folder {missing} does not exist", "makes no folders for a path you give")
    assert not missing.exists()
    result = invoke("export", "--out", "/proc/dir.ics", "--db", str(demo_db))  # a folder no one can write in, root too
    assert_one_line_error(result, "cannot write /proc/dir.ics", "--out")


def test_the_cli_loads_icalendar_only_for_import_and_export() -> None:
    code = "import sys, scheduler_agent.cli.app, scheduler_agent.cli.calendar; print('icalendar' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"


def test_seeding_the_demo_is_unchanged_by_all_this(tmp_path: Path) -> None:
    conn = connect(tmp_path / "demo.db")
    seed_demo(conn)
    row = conn.execute(
        sql("SELECT count(*), count(tz), sum(all_day), count(rrule), sum(rdates <> ''), sum(exdates <> '') FROM events")
    ).fetchone()
    conn.close()
    assert tuple(row) == (28, 0, 0, 0, 0, 0)
