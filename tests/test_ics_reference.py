"""Files read as the reference (`recurring-ical-events` over `icalendar`) reads them.

Each case is a small file in `tests/data/ics/reference/`, written for it: zones a file defines under any
name, zones it names and defines nowhere, VEVENTs outside any VCALENDAR, overrides without their series,
several RRULEs and an unreadable DTSTAMP. Each is read, none skipped; what is read with a warning is said.
The zones' names are unusual on purpose: icalendar remembers a VTIMEZONE by its TZID for the whole process.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import Connection
from sqlalchemy import text as sql
from test_ics import busy, connect, imported, invoke

FILES = Path(__file__).parent / "data" / "ics" / "reference"


def import_as_priya(demo_db: Path, name: str) -> list[str]:
    return imported(invoke("import", str(FILES / name), "--person", "priya", "--db", str(demo_db))).splitlines()


def stored_zone(path: Path, title: str) -> str | None:
    conn: Connection = connect(path)
    try:
        zone: str | None = conn.execute(sql("SELECT tz FROM events WHERE title = :title"), {"title": title}).fetchone()[
            0
        ]
        return zone
    finally:
        conn.close()


def test_a_zone_the_file_defines_is_read_by_its_rules_whatever_its_name(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "file-zones.ics")
    assert lines == ["Imported 2 events (1 recurring) for Priya Raman (priya) from file-zones.ics: 2 new."]
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-08") == [
        ("Localised zone", "Tue 2026-10-06 09:00", "10:00"),  # 10:00 CEST, by the file's rules
        ("Windows zone in the file", "Wed 2026-10-07 07:00", "08:00"),  # 10:00 at +04:00 as the file says, not +03:00
    ]
    after_the_change = busy(demo_db, "priya", "2026-10-26", "2026-10-31")
    assert after_the_change == [("Localised zone", "Tue 2026-10-27 09:00", "10:00")]  # 10:00 CET


def test_a_zone_whose_name_ends_in_a_space_is_still_the_files(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "padded-zone.ics")
    assert lines == ["Imported 2 events (1 recurring) for Priya Raman (priya) from padded-zone.ics: 2 new."]
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-15") == [
        ("Padded zone", "Tue 2026-10-06 07:30", "08:30"),  # 12:00 at +05:30
        ("Padded weekly", "Wed 2026-10-07 07:30", "08:00"),
        ("Padded weekly", "Wed 2026-10-14 07:30", "08:00"),
    ]


def test_a_windows_name_is_mapped_and_a_name_defined_nowhere_is_floating_time_with_a_warning(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "undefined-zones.ics")
    assert lines[0] == (
        "Imported 3 events (1 recurring) for Priya Raman (priya) from undefined-zones.ics: 3 new; 2 warnings (below)."
    )
    assert lines[1] == (
        "Warning: undefined-zones.ics line 11: event 'Foo zone' (UID foo@t): time zone 'FOO' is neither defined "
        "in the file (VTIMEZONE) nor an IANA or Windows name: its times are read as floating time in Europe/London, "
        "with no offset guessed from the name"
    )
    assert lines[2].startswith("Warning: undefined-zones.ics line 18: event 'Offset-like' (UID offset@t): ")
    assert "time zone 'GMT-05.00/-04.00' is neither defined" in lines[2]
    assert len(lines) == 3
    assert stored_zone(demo_db, "Tokyo") == "Asia/Tokyo"  # Tokyo Standard Time, by windows_to_olson
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-09") == [
        ("Tokyo", "Tue 2026-10-06 10:00", "11:00"),  # 18:00 in Tokyo
        ("Foo zone", "Tue 2026-10-06 10:00", "11:00"),  # the wall clock the file gives, in the owner's zone
        ("Offset-like", "Wed 2026-10-07 10:00", "10:30"),  # no -05:00 guessed from the name
        ("Offset-like", "Thu 2026-10-08 10:00", "10:30"),
    ]


def test_vevents_outside_any_vcalendar_are_read_with_one_warning(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "bare-events.ics")
    assert lines == [
        "Imported 3 events (0 recurring) for Priya Raman (priya) from bare-events.ics: 3 new; 1 warning (below).",
        "Warning: bare-events.ics line 1: 2 VEVENTs outside any VCALENDAR (BEGIN:VCALENDAR ... END:VCALENDAR): "
        "read as if inside one",
    ]
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-07") == [
        ("Before", "Tue 2026-10-06 10:00", "11:00"),
        ("Inside", "Tue 2026-10-06 12:00", "13:00"),
        ("After", "Tue 2026-10-06 14:00", "15:00"),
    ]


def test_overrides_without_their_series_are_single_events_not_expanded_by_their_own_rule(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "orphan-overrides.ics")
    assert lines == ["Imported 2 events (0 recurring) for Priya Raman (priya) from orphan-overrides.ics: 2 new."]
    assert busy(demo_db, "priya", "2026-10-06", "2026-10-12") == [
        ("Moved occurrence", "Tue 2026-10-06 15:00", "16:00"),  # once: its RRULE does not repeat it
        ("Another moved occurrence", "Thu 2026-10-08 16:00", "17:00"),
    ]


def test_several_rules_repeat_on_their_union_and_an_unreadable_dtstamp_skips_nothing(demo_db: Path) -> None:
    lines = import_as_priya(demo_db, "several-rules.ics")
    assert lines == [
        "Imported 2 events (1 recurring) for Priya Raman (priya) from several-rules.ics: 2 new; 1 warning (below).",
        "Warning: several-rules.ics line 13: event 'Bad stamp' (UID bad-stamp@t): DTSTAMP 'yesterday' cannot be "
        "read: left out, as it does not bear on busy time",
    ]
    assert busy(demo_db, "priya", "2026-10-05", "2026-10-19") == [
        ("Two rules", "Mon 2026-10-05 10:00", "11:00"),  # both rules
        ("Two rules", "Tue 2026-10-06 10:00", "11:00"),  # the daily one
        ("Two rules", "Wed 2026-10-07 10:00", "11:00"),
        ("Bad stamp", "Fri 2026-10-09 14:00", "15:00"),
        ("Two rules", "Mon 2026-10-12 10:00", "11:00"),  # the weekly one
    ]
