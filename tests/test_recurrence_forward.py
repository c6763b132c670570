"""A far window of a daily or weekly series is expanded from near it (calendar/forward.py), and gives exactly the
occurrences the walk from DTSTART gives: rules, zones, all-day and floating times, long events, EXDATEs, overrides."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from scheduler_agent.calendar import recurrence
from scheduler_agent.calendar.forward import forwarded
from scheduler_agent.calendar.recurrence import _parse, digest, expand

LONDON_TZ = """BEGIN:VTIMEZONE
TZID:Europe/London
BEGIN:STANDARD
DTSTART:19701025T020000
TZOFFSETFROM:+0100
TZOFFSETTO:+0000
RRULE:FREQ=YEARLY;BYMONTH=10;BYDAY=-1SU
END:STANDARD
BEGIN:DAYLIGHT
DTSTART:19700329T010000
TZOFFSETFROM:+0000
TZOFFSETTO:+0100
RRULE:FREQ=YEARLY;BYMONTH=3;BYDAY=-1SU
END:DAYLIGHT
END:VTIMEZONE
"""


def calendar(*events: str, zone: str = LONDON_TZ) -> str:
    body = "".join(f"BEGIN:VEVENT\n{event.strip()}\nEND:VEVENT\n" for event in events)
    return f"BEGIN:VCALENDAR\nVERSION:2.0\nPRODID:-//test//EN\n{zone}{body}END:VCALENDAR\n".replace("\n", "\r\n")


SERIES = {
    "daily across the clocks' changes": calendar(
        "UID:a\nDTSTART;TZID=Europe/London:20240105T093000\nDTEND;TZID=Europe/London:20240105T100000\nRRULE:FREQ=DAILY"
    ),
    "every other week, two days, an EXDATE and an override far ahead": calendar(
        "UID:b\nDTSTART;TZID=Europe/London:20240103T140000\nDTEND;TZID=Europe/London:20240103T150000\n"
        "RRULE:FREQ=WEEKLY;INTERVAL=2;BYDAY=WE,FR\nEXDATE;TZID=Europe/London:20330420T140000",
        "UID:b\nRECURRENCE-ID;TZID=Europe/London:20330406T140000\n"
        "DTSTART;TZID=Europe/London:20330406T170000\nDTEND;TZID=Europe/London:20330406T180000",
    ),
    "weekly on Mondays from a Sunday DTSTART (off the rule)": calendar(
        "UID:c\nDTSTART;TZID=Europe/London:20240107T080000\nDTEND;TZID=Europe/London:20240107T083000\n"
        "RRULE:FREQ=WEEKLY;BYDAY=MO"
    ),
    "every third day, all day": calendar(
        "UID:d\nDTSTART;VALUE=DATE:20240302\nDTEND;VALUE=DATE:20240303\nRRULE:FREQ=DAILY;INTERVAL=3"
    ),
    "three days long, weekly": calendar("UID:e\nDTSTART:20240610T220000Z\nDTEND:20240613T060000Z\nRRULE:FREQ=WEEKLY"),
    "weekly until 2030": calendar(
        "UID:f\nDTSTART:20240610T120000Z\nDTEND:20240610T130000Z\nRRULE:FREQ=WEEKLY;UNTIL=20300101T000000Z"
    ),
    "floating, weekdays": calendar(
        "UID:g\nDTSTART:20250106T070000\nDTEND:20250106T073000\nRRULE:FREQ=DAILY;BYDAY=MO,TU,WE,TH,FR"
    ),
    "every other week from Sunday, weeks from Sunday": calendar(
        "UID:h\nDTSTART;TZID=Europe/London:20240107T120000\nDTEND;TZID=Europe/London:20240107T130000\n"
        "RRULE:FREQ=WEEKLY;INTERVAL=2;WKST=SU;BYDAY=SU,MO"
    ),
    "the last weekday of each week, by BYSETPOS": calendar(
        "UID:i\nDTSTART:20240105T160000Z\nDTEND:20240105T170000Z\nRRULE:FREQ=WEEKLY;BYDAY=MO,TU,WE,TH,FR;BYSETPOS=-1"
    ),
    "moved this and all after (not forwarded)": calendar(
        "UID:j\nDTSTART:20240101T090000Z\nDTEND:20240101T100000Z\nRRULE:FREQ=WEEKLY",
        "UID:j\nRECURRENCE-ID;RANGE=THISANDFUTURE:20250106T090000Z\nDTSTART:20250106T110000Z\nDTEND:20250106T120000Z",
    ),
}

WINDOWS = [datetime(2026, 9, 1, tzinfo=UTC) + timedelta(days=379 * number + 3) for number in range(10)]


@pytest.mark.parametrize("name", SERIES)
def test_a_far_window_gives_the_occurrences_the_walk_from_dtstart_gives(
    name: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    text, seen = SERIES[name], 0
    for start in [*WINDOWS, datetime(2033, 4, 3, tzinfo=UTC), datetime(2033, 4, 17, tzinfo=UTC)]:
        end = start + timedelta(days=8)
        near = expand(text, "Europe/London", "Europe/London", start, end)
        monkeypatch.setattr(recurrence, "FAST_FORWARD", False)
        walked = expand(text, "Europe/London", "Europe/London", start, end)
        monkeypatch.setattr(recurrence, "FAST_FORWARD", True)
        assert near == walked, f"{name}: {start:%Y-%m-%d}"
        seen += len([o for o in walked if o.start.year >= 2030])
    assert seen or name == "weekly until 2030"  # the comparison is of far occurrences, not of empty lists


def test_the_series_it_applies_to_are_forwarded_and_the_others_are_not() -> None:
    far = datetime(2036, 8, 25, tzinfo=UTC)

    def moved(name: str, start: datetime = far) -> bool:
        parsed = _parse(digest(SERIES[name], "UTC", "UTC"), SERIES[name], "UTC", "UTC")
        return forwarded(parsed.calendar, parsed.rules, start) is not None

    assert moved("daily across the clocks' changes") and moved("every third day, all day")
    assert not moved("moved this and all after (not forwarded)")  # RANGE=THISANDFUTURE
    assert not moved("daily across the clocks' changes", datetime(2024, 2, 1, tzinfo=UTC))  # near: walked
    counted = calendar("UID:k\nDTSTART:20240101T090000Z\nDTEND:20240101T100000Z\nRRULE:FREQ=DAILY;COUNT=5000")
    parsed = _parse(digest(counted, "UTC", "UTC"), counted, "UTC", "UTC")
    assert forwarded(parsed.calendar, parsed.rules, far) is None  # COUNT counts from the first
