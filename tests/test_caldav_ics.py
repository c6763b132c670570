"""The iCalendar side of CalDAV: both shapes of a free-busy answer, and reading what calendar apps write.

The answers here are texts in the shapes servers send (Radicale 3.9 and most servers: FREEBUSY
periods; older Radicale: one VFREEBUSY per busy interval); the live server is in test_caldav_backend.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import icalendar
import pytest

from scheduler_agent.calendar.caldav.ics import (
    Attendee,
    booking_ics,
    booking_uid,
    changed_ics,
    parse_freebusy,
    read_occurrence,
)

START = datetime(2027, 3, 1, tzinfo=UTC)
END = START + timedelta(days=7)


def answer(*blocks: str) -> str:
    return "BEGIN:VCALENDAR\r\nVERSION:2.0\r\nPRODID:x\r\n" + "".join(blocks) + "END:VCALENDAR\r\n"


def block(*lines: str) -> str:
    return "BEGIN:VFREEBUSY\r\n" + "".join(f"{line}\r\n" for line in lines) + "END:VFREEBUSY\r\n"


def at(day: int, hour: int, minute: int = 0) -> datetime:
    return datetime(2027, 3, day, hour, minute, tzinfo=UTC)


def test_freebusy_periods_are_busy_unless_free_and_are_clipped_to_the_range() -> None:
    text = answer(
        block(
            "DTSTART:20270301T000000Z",
            "DTEND:20270308T000000Z",
            "FREEBUSY;FBTYPE=BUSY:20270302T100000Z/20270302T110000Z,20270303T090000Z/PT30M",
            "FREEBUSY;FBTYPE=FREE:20270304T100000Z/20270304T110000Z",
            "FREEBUSY;FBTYPE=BUSY-TENTATIVE:20270228T230000Z/20270301T010000Z",
        )
    )
    assert parse_freebusy(text, START, END) == [
        (START, at(1, 1)),
        (at(2, 10), at(2, 11)),
        (at(3, 9), at(3, 9, 30)),
    ]


def test_one_vfreebusy_per_busy_interval_as_older_radicale_answers() -> None:
    text = answer(
        block("DTSTART:20270302T100000Z", "DTEND:20270302T110000Z"),
        block("DTSTART:20270305T150000Z", "DTEND:20270305T153000Z"),
    )
    assert parse_freebusy(text, START, END) == [(at(2, 10), at(2, 11)), (at(5, 15), at(5, 15, 30))]


def test_a_lone_vfreebusy_of_the_range_itself_is_all_free() -> None:
    text = answer(block("DTSTART:20270301T000000Z", "DTEND:20270308T000000Z"))
    assert parse_freebusy(text, START + timedelta(microseconds=250), END) == []


def test_a_freebusy_answer_that_is_not_icalendar_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse_freebusy("<html>Service unavailable</html>", START, END)


def test_all_day_and_floating_times_are_read_in_the_persons_zone() -> None:
    event = icalendar.Event()
    event.add("UID", "x")
    event.add("SUMMARY", "Holiday")
    event.add("DTSTART", datetime(2027, 7, 1).date())
    london = ZoneInfo("Europe/London")
    read = read_occurrence(event, london)
    assert (read.start, read.end) == (datetime(2027, 6, 30, 23, tzinfo=UTC), datetime(2027, 7, 1, 23, tzinfo=UTC))
    floating = icalendar.Event()
    floating.add("UID", "y")
    floating.add("DTSTART", datetime(2027, 7, 1, 9))
    floating.add("DURATION", timedelta(minutes=45))
    floating.add("TRANSP", "TRANSPARENT")
    read = read_occurrence(floating, london)
    assert (read.start, read.end, read.busy, read.title) == (
        datetime(2027, 7, 1, 8, tzinfo=UTC),
        datetime(2027, 7, 1, 8, 45, tzinfo=UTC),
        False,
        "(no title)",
    )


def test_a_booking_and_its_move_keep_the_uid_and_raise_the_sequence() -> None:
    assert booking_uid("toolu_a") == booking_uid("toolu_a") != booking_uid("toolu_b")
    text = booking_ics(
        uid=booking_uid("toolu_a"),
        tool_use_id="toolu_a",
        title="Plan",
        start=at(2, 10),
        end=at(2, 10, 30),
        tz="America/New_York",
        organizer=Attendee("Jordan Lee", "jordan@example.com"),
        attendees=[Attendee("Priya Raman", "priya@example.com")],
        invites=True,
        stamp=START,
    )
    assert "TZID:America/New_York" in text
    assert "DTSTART;TZID=America/New_York:20270302T050000" in text
    moved = changed_ics(text, tool_use_id="toolu_m", stamp=START, tz="America/New_York", start=at(2, 15), end=at(2, 16))
    [event] = icalendar.Calendar.from_ical(moved).walk("VEVENT")
    assert str(event["UID"]) == booking_uid("toolu_a")
    assert (event.decoded("DTSTART"), int(event["SEQUENCE"]), str(event["X-SCHEDULER-AGENT-CALL"])) == (
        at(2, 15),
        1,
        "toolu_m",
    )
    repeating = text.replace("SEQUENCE:0", "SEQUENCE:0\r\nRRULE:FREQ=WEEKLY")
    with pytest.raises(ValueError, match="only a single event"):
        changed_ics(repeating, tool_use_id="toolu_c", stamp=START, tz="America/New_York", cancel=True)
