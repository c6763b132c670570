"""Free windows: working hours in each person's own zone, daylight saving, events, the clock."""

from __future__ import annotations

import random
from datetime import UTC, date, datetime, time, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.slots import (
    Interval,
    NoWindowsReason,
    format_window,
    free_windows,
    intersect,
    monday_of,
    round_up,
    shared_working_hours,
    subtract,
    week_span,
)
from scheduler_agent.calendar.types import Person
from scheduler_agent.storage.db import connect

LONDON = ZoneInfo("Europe/London")
DEMO_NOW = datetime(2026, 8, 27, 9, 0, tzinfo=LONDON)  # Thu, the demo clock
EARLY = datetime(2026, 1, 1, tzinfo=UTC)  # long before any week tested here


def person(key: str, tz: str, hours: tuple[str, str] = ("09:00", "17:00")) -> Person:
    return Person(key, key.title(), tz, time.fromisoformat(hours[0]), time.fromisoformat(hours[1]))


OWNER = person("you", "Europe/London")


def london(day: str, at: str) -> datetime:
    return datetime.fromisoformat(f"{day}T{at}").replace(tzinfo=LONDON)


def shown(windows: list[Interval], tz: str = "Europe/London") -> list[str]:
    return [format_window(window, tz) for window in windows]


def test_the_demo_week_has_exactly_the_three_published_windows(tmp_path: Path) -> None:
    conn = connect(tmp_path / "calendar.db")
    seed_demo(conn)
    owner = get_owner(conn)
    priya = person("priya", "Europe/London")
    start, end = week_span(date(2026, 8, 31), owner.tz)
    busy = [(e.start, e.end) for key in ("you", "priya") for e in events_for(conn, key, start, end)]

    search = free_windows(owner, priya, busy, date(2026, 8, 31), 30, DEMO_NOW)

    assert shown(search.windows) == [
        "Mon 2026-08-31 09:00-09:30",
        "Mon 2026-08-31 14:00-15:00",
        "Wed 2026-09-02 09:15-09:45",
    ]
    assert search.reason is None
    assert search.searched_from is None  # the whole week is ahead of the clock
    # The 15-minute gap on Tuesday is too short for 30 minutes, long enough for 15.
    short = free_windows(owner, priya, busy, date(2026, 8, 31), 15, DEMO_NOW)
    assert "Tue 2026-09-01 14:45-15:00" in shown(short.windows)


def test_any_day_of_the_week_names_the_same_week() -> None:
    assert {monday_of(date(2026, 8, 31) + timedelta(days=n)) for n in range(7)} == {date(2026, 8, 31)}
    sunday = free_windows(OWNER, person("priya", "Europe/London"), [], date(2026, 9, 6), 30, DEMO_NOW)
    assert sunday.monday == date(2026, 8, 31)
    assert shown(sunday.windows)[0] == "Mon 2026-08-31 09:00-17:00"
    assert len(sunday.windows) == 5  # Monday to Friday, never the weekend


@pytest.mark.parametrize(
    ("week", "expected"),
    [
        # London on BST (UTC+1), New York on EDT (UTC-4): New York's 09:00 is 14:00 in London.
        (date(2026, 10, 19), "14:00-17:00"),
        # London back on GMT from Sun 25 Oct, New York on EDT until Sun 1 Nov: 13:00 in London.
        (date(2026, 10, 26), "13:00-17:00"),
    ],
)
def test_daylight_saving_moves_the_overlap_with_new_york(week: date, expected: str) -> None:
    new_york = person("aiko", "America/New_York")
    search = free_windows(OWNER, new_york, [], week, 30, EARLY)
    assert [window.split(" ", 2)[2] for window in shown(search.windows)] == [expected] * 5


def test_daylight_saving_ending_mid_week_in_cairo_shifts_the_overlap_on_friday() -> None:
    # Egypt leaves summer time at the end of Thu 2026-10-29: UTC+3 Mon-Thu, UTC+2 on Friday.
    cairo = person("omar", "Africa/Cairo")
    search = free_windows(OWNER, cairo, [], date(2026, 10, 26), 30, EARLY)
    assert shown(search.windows) == [
        "Mon 2026-10-26 09:00-14:00",
        "Tue 2026-10-27 09:00-14:00",
        "Wed 2026-10-28 09:00-14:00",
        "Thu 2026-10-29 09:00-14:00",
        "Fri 2026-10-30 09:00-15:00",
    ]


def test_shared_hours_follow_each_persons_own_weekdays() -> None:
    # Auckland's Monday starts on the owner's Sunday; its Saturday falls on the owner's Friday.
    auckland = person("mere", "Pacific/Auckland", ("07:00", "12:00"))
    friday = shared_working_hours(
        person("you", "America/Los_Angeles", ("09:00", "17:00")), auckland, date(2026, 9, 4), date(2026, 9, 4)
    )
    assert friday == []  # Friday 12:00 in Los Angeles is Saturday 07:00 in Auckland
    monday = shared_working_hours(person("you", "America/Los_Angeles"), auckland, date(2026, 8, 31), date(2026, 8, 31))
    assert shown(monday, "America/Los_Angeles") == ["Mon 2026-08-31 12:00-17:00"]


def test_events_of_either_person_are_subtracted() -> None:
    priya = person("priya", "Europe/London")
    busy = [
        (london("2026-08-31", "10:00"), london("2026-08-31", "11:00")),  # the owner's
        (london("2026-08-31", "10:30"), london("2026-08-31", "12:00")),  # Priya's, overlapping it
        (london("2026-08-31", "16:00"), london("2026-08-31", "18:00")),  # past the end of the day
    ]
    search = free_windows(OWNER, priya, busy, date(2026, 8, 31), 30, EARLY)
    assert shown(search.windows)[:2] == ["Mon 2026-08-31 09:00-10:00", "Mon 2026-08-31 12:00-16:00"]


def test_windows_begun_are_clipped_to_now_rounded_up_to_five_minutes() -> None:
    priya = person("priya", "Europe/London")
    now = london("2026-08-27", "09:02")
    search = free_windows(OWNER, priya, [], date(2026, 8, 27), 30, now)
    assert shown(search.windows) == ["Thu 2026-08-27 09:05-17:00", "Fri 2026-08-28 09:00-17:00"]
    assert search.searched_from == london("2026-08-27", "09:05")
    # 16:36 rounds up to 16:40, which leaves 20 minutes of Friday: too little for 30.
    late = free_windows(OWNER, priya, [], date(2026, 8, 28), 30, london("2026-08-28", "16:36"))
    assert late.windows == []
    assert late.reason is NoWindowsReason.WEEK_OVER


@pytest.mark.parametrize(
    ("moment", "expected"),
    [("09:00:00", "09:00"), ("09:00:01", "09:05"), ("09:04:59", "09:05"), ("23:58:00", "00:00")],
)
def test_round_up(moment: str, expected: str) -> None:
    rounded = round_up(datetime.fromisoformat(f"2026-08-27T{moment}+00:00"))
    assert f"{rounded:%H:%M}" == expected
    assert rounded.tzinfo is UTC


@pytest.mark.parametrize(
    ("other", "week", "minutes", "now", "reason"),
    [
        (person("kenji", "Asia/Tokyo"), date(2026, 8, 31), 30, DEMO_NOW, NoWindowsReason.NO_SHARED_HOURS),
        (person("aiko", "America/New_York"), date(2026, 8, 31), 240, DEMO_NOW, NoWindowsReason.SHARED_HOURS_TOO_SHORT),
        (person("priya", "Europe/London"), date(2026, 8, 17), 30, DEMO_NOW, NoWindowsReason.WEEK_OVER),
    ],
)
def test_the_reason_when_a_week_has_no_window(
    other: Person, week: date, minutes: int, now: datetime, reason: NoWindowsReason
) -> None:
    search = free_windows(OWNER, other, [], week, minutes, now)
    assert search.windows == []
    assert search.reason is reason


def test_a_fully_booked_week_says_so_and_keeps_the_shared_hours() -> None:
    priya = person("priya", "Europe/London")
    whole_week = [(london("2026-08-31", "00:00"), london("2026-09-05", "00:00"))]
    search = free_windows(OWNER, priya, whole_week, date(2026, 8, 31), 30, DEMO_NOW)
    assert search.windows == []
    assert search.reason is NoWindowsReason.FULLY_BOOKED
    assert search.longest_shared_minutes == 480
    assert search.longest_free is None


def test_a_week_of_short_gaps_reports_its_longest_free_stretch() -> None:
    priya = person("priya", "Europe/London")
    busy = [(london("2026-08-31", "00:00"), london("2026-09-05", "00:00"))]
    busy = subtract(busy, [(london("2026-09-01", "11:00"), london("2026-09-01", "11:20"))])
    search = free_windows(OWNER, priya, busy, date(2026, 8, 31), 30, DEMO_NOW)
    assert search.reason is NoWindowsReason.FULLY_BOOKED
    assert search.longest_free is not None
    assert shown([search.longest_free]) == ["Tue 2026-09-01 11:00-11:20"]


def test_interval_arithmetic() -> None:
    t = [london("2026-08-31", f"{h:02d}:00") for h in range(9, 18)]
    assert intersect([(t[0], t[4])], [(t[2], t[6]), (t[7], t[8])]) == [(t[2], t[4])]
    assert subtract([(t[0], t[8])], [(t[1], t[2]), (t[4], t[5])]) == [(t[0], t[1]), (t[2], t[4]), (t[5], t[8])]
    assert subtract([(t[0], t[2])], [(t[2], t[3])]) == [(t[0], t[2])]  # touching is not overlapping
    assert subtract([(t[1], t[2])], [(t[0], t[3])]) == []


def test_subtract_leaves_exactly_the_minutes_no_busy_interval_holds() -> None:
    """Against a model of minutes: random free and busy intervals (overlapping, touching, empty, unsorted, in
    two zones), each free interval's pieces are its minutes that no busy interval holds, split where any busy
    interval (an empty one too) begins or ends inside it."""
    rng = random.Random(38)
    base = datetime(2026, 8, 31, tzinfo=UTC)
    zones = (UTC, ZoneInfo("Europe/London"))

    def at(minute: int) -> datetime:
        return (base + timedelta(minutes=minute)).astimezone(rng.choice(zones))

    def interval(length: tuple[int, ...]) -> tuple[int, int]:
        start = rng.randint(0, 120)
        return start, start + rng.choice(length)

    for _ in range(3000):
        free = sorted({interval((1, 5, 30, 90)) for _ in range(rng.randint(0, 4))})
        busy = [interval((0, 1, 10, 45)) for _ in range(rng.randint(0, 12))]
        expected = []
        for start, end in free:
            held = {m for m in range(start, end) if not any(b <= m < e for b, e in busy)}
            cuts = {b for b, _ in busy} | {e for _, e in busy}
            piece: list[int] = []
            for minute in range(start, end + 1):
                if piece and (minute not in held or minute in cuts):
                    expected.append((piece[0], piece[-1] + 1))
                    piece = []
                if minute in held:
                    piece.append(minute)
        found = subtract([(at(s), at(e)) for s, e in free], [(at(b), at(e)) for b, e in busy])
        assert [(int((s - base).total_seconds() // 60), int((e - base).total_seconds() // 60)) for s, e in found] == (
            expected
        ), (free, busy)


def test_format_window_uses_the_zone_given() -> None:
    window = (datetime(2026, 8, 31, 13, tzinfo=UTC), datetime(2026, 8, 31, 14, tzinfo=UTC))
    assert format_window(window, "Europe/London") == "Mon 2026-08-31 14:00-15:00"
    assert format_window(window, "America/New_York") == "Mon 2026-08-31 09:00-10:00"


def plain_intersect(a: list[Interval], b: list[Interval]) -> list[Interval]:
    """`intersect` as it was, with max() and min()."""
    found = [(max(a0, b0), min(a1, b1)) for a0, a1 in a for b0, b1 in b]
    return sorted((start, end) for start, end in found if start < end)


def random_intervals(rng: random.Random, count: int, zone: ZoneInfo | None) -> list[Interval]:
    """Intervals on a few days around the end of DST in London, on a 15-minute grid so that ends touch and
    repeat: overlapping, nested, empty, backwards; in UTC, or some of them in `zone`."""
    base = datetime(2026, 10, 24, tzinfo=UTC)
    found = []
    for _ in range(count):
        start = base + timedelta(minutes=15 * rng.randrange(0, 4 * 24 * 3))
        end = start + timedelta(minutes=15 * rng.choice((-2, 0, 1, 1, 2, 4, 8, 20, 60)))
        if zone is not None and rng.random() < 0.4:
            start, end = start.astimezone(zone), end.astimezone(zone)
        found.append((start, end))
    return found


@pytest.mark.parametrize("zone", [None, LONDON], ids=["utc", "some-in-london"])
def test_intersect_gives_what_max_and_min_give(zone: ZoneInfo | None) -> None:
    """`intersect` compares instead of calling max() and min(): the same pieces, and the same datetime
    objects where two times are equal (max and min keep the first)."""
    rng = random.Random(5)
    found = 0
    for _ in range(400):
        a = sorted(random_intervals(rng, rng.randrange(0, 12), zone))
        b = sorted(random_intervals(rng, rng.randrange(0, 30), zone))
        both = intersect(a, b)
        expected = plain_intersect(a, b)
        assert both == expected, (a, b)
        assert [(s.tzinfo, e.tzinfo) for s, e in both] == [(s.tzinfo, e.tzinfo) for s, e in expected]
        found += len(both)
    assert found > 1000  # the cases really overlap
