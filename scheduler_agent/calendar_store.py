"""The calendar in SQLite: the owner, the people, their events.

Times go in and come out as aware datetimes; they are stored in UTC as
`YYYY-MM-DDTHH:MM:SSZ`, so comparing the text compares the times. The owner is the person
keyed `you`. Errors a person (or the model) can fix are `CalendarError`, one actionable line.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, time, timedelta
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from scheduler_agent.db import transaction

OWNER_KEY = "you"
SET_OWNER_HINT = (
    "run `scheduler-agent calendar set-owner --name NAME --tz ZONE --hours 09:00-17:00`, "
    "or `scheduler-agent calendar seed-demo` for the demo calendar"
)
_KEY = re.compile(r"[a-z0-9_-]{1,32}")
_HOURS = re.compile(r"\s*(\d{1,2}:\d{2})\s*-\s*(\d{1,2}:\d{2})\s*")
_UTC_FORMAT = "%Y-%m-%dT%H:%M:%SZ"


class CalendarError(Exception):
    """A problem a person can fix; the message is one line that says what to do."""


@dataclass(frozen=True)
class Person:
    key: str
    name: str
    tz: str
    work_start: time
    work_end: time

    @property
    def is_owner(self) -> bool:
        return self.key == OWNER_KEY

    @property
    def hours(self) -> str:
        """`09:00-17:00 Europe/London`."""
        return f"{self.work_start:%H:%M}-{self.work_end:%H:%M} {self.tz}"


@dataclass(frozen=True)
class Event:
    id: int
    title: str
    start: datetime  # aware, UTC
    end: datetime
    attendees: tuple[str, ...]  # person keys, the owner ('you') first


# --- values -------------------------------------------------------------------------------


def to_utc_text(moment: datetime) -> str:
    if moment.tzinfo is None:
        raise ValueError(f"{moment.isoformat()} has no time zone; give an aware datetime")
    return moment.astimezone(UTC).strftime(_UTC_FORMAT)


def from_utc_text(text: str) -> datetime:
    return datetime.strptime(text, _UTC_FORMAT).replace(tzinfo=UTC)


def check_tz(tz: str) -> str:
    """Return `tz` if it names an IANA time zone, else raise CalendarError."""
    try:
        ZoneInfo(tz)
    except (ZoneInfoNotFoundError, ValueError):
        raise CalendarError(
            f"time zone {tz!r} is unknown: use an IANA name such as Europe/London or America/New_York"
        ) from None
    return tz


def parse_hours(text: str) -> tuple[time, time]:
    """`09:00-17:00` → (09:00, 17:00); raise CalendarError for anything else or an empty range."""
    match = _HOURS.fullmatch(text)
    try:
        if match is None:
            raise ValueError(text)
        start, end = (time.fromisoformat(part.zfill(5)) for part in match.groups())
    except ValueError:
        raise CalendarError(f"working hours {text!r} are not a range: use HH:MM-HH:MM, e.g. 09:00-17:00") from None
    return check_hours(start, end)


def check_hours(start: time, end: time) -> tuple[time, time]:
    if start.second or start.microsecond or end.second or end.microsecond:
        raise CalendarError(f"working hours {start}-{end} must be whole minutes, e.g. 09:00-17:00")
    if start >= end:
        raise CalendarError(
            f"working hours {start:%H:%M}-{end:%H:%M} end before they start: "
            "give the start first, within one day, e.g. 09:00-17:00"
        )
    return start, end


def _check_name(name: str) -> str:
    cleaned = " ".join(name.split())
    if not cleaned:
        raise CalendarError("the name is empty: give the person's full name, e.g. --name 'Priya Raman'")
    return cleaned


def _person(row: sqlite3.Row) -> Person:
    return Person(
        key=row["key"],
        name=row["name"],
        tz=row["tz"],
        work_start=time.fromisoformat(row["work_start"]),
        work_end=time.fromisoformat(row["work_end"]),
    )


# --- people -------------------------------------------------------------------------------


def get_owner(conn: sqlite3.Connection) -> Person:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (OWNER_KEY,)).fetchone()
    if row is None:
        raise CalendarError(f"this calendar has no owner yet: {SET_OWNER_HINT}")
    return _person(row)


def set_owner(conn: sqlite3.Connection, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Create or replace the owner (key 'you')."""
    owner = _new_person(OWNER_KEY, name, tz, work_start, work_end)
    with transaction(conn):
        _upsert(conn, owner)
    return owner


def add_person(conn: sqlite3.Connection, key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Add someone the owner meets. The key is short, lowercase, unique (e.g. 'priya')."""
    if key == OWNER_KEY:
        raise CalendarError(f"the key {OWNER_KEY!r} is the owner's: use set-owner, or pick another key")
    if not _KEY.fullmatch(key):
        suggestion = re.sub(r"[^a-z0-9_-]", "", key.lower().replace(" ", "-"))[:32] or "priya"
        raise CalendarError(f"key {key!r} must be 1-32 lowercase letters, digits, '-' or '_': e.g. {suggestion!r}")
    person = _new_person(key, name, tz, work_start, work_end)
    with transaction(conn):
        existing = conn.execute("SELECT name FROM people WHERE key = ?", (key,)).fetchone()
        if existing is not None:
            raise CalendarError(f"key {key!r} is already taken by {existing['name']}: choose another key")
        _upsert(conn, person)
    return person


def _new_person(key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    check_hours(work_start, work_end)
    return Person(key, _check_name(name), check_tz(tz), work_start, work_end)


def _upsert(conn: sqlite3.Connection, person: Person) -> None:
    conn.execute(
        "INSERT INTO people (key, name, tz, work_start, work_end) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET name = excluded.name, tz = excluded.tz, "
        "work_start = excluded.work_start, work_end = excluded.work_end",
        (person.key, person.name, person.tz, f"{person.work_start:%H:%M}", f"{person.work_end:%H:%M}"),
    )


def list_people(conn: sqlite3.Connection) -> list[Person]:
    """Everyone but the owner, by key."""
    rows = conn.execute("SELECT * FROM people WHERE key <> ? ORDER BY key", (OWNER_KEY,))
    return [_person(row) for row in rows]


def match_people(conn: sqlite3.Connection, text: str) -> list[Person]:
    """The people (not the owner) `text` names: by key, else full name, else first name; any case."""
    wanted = " ".join(text.split()).casefold()
    people = list_people(conn)
    for matches in (
        [p for p in people if p.key == wanted],
        [p for p in people if p.name.casefold() == wanted],
        [p for p in people if p.name.split()[0].casefold() == wanted],
    ):
        if matches:
            return matches
    return []


def find_person(conn: sqlite3.Connection, text: str) -> Person | None:
    """The one person `text` names, or None when no one (or more than one) fits."""
    matches = match_people(conn, text)
    return matches[0] if len(matches) == 1 else None


def names_owner(owner: Person, text: str) -> bool:
    wanted = " ".join(text.split()).casefold()
    return wanted in {OWNER_KEY, "me", "myself", owner.name.casefold(), owner.name.split()[0].casefold()}


# --- events -------------------------------------------------------------------------------


def add_event(
    conn: sqlite3.Connection,
    title: str,
    start: datetime,
    end: datetime,
    attendees: Iterable[str],
    event_id: int | None = None,
) -> Event:
    """Insert an event (with `event_id` when a fixture gives one); no checks of availability here."""
    keys = _attendee_order(attendees)
    title = " ".join(title.split())
    if not title:
        raise CalendarError("the event title is empty: give a short title, e.g. 'Design review'")
    if not keys:
        raise CalendarError("an event needs at least one attendee: give person keys, e.g. ['you', 'priya']")
    start_text, end_text = to_utc_text(start), to_utc_text(end)
    if start_text >= end_text:
        raise CalendarError(f"the event ends ({end.isoformat()}) before it starts ({start.isoformat()})")
    with transaction(conn):
        placeholders = ", ".join("?" for _ in keys)
        known = {row[0] for row in conn.execute(f"SELECT key FROM people WHERE key IN ({placeholders})", keys)}
        unknown = [key for key in keys if key not in known]
        if unknown:
            raise CalendarError(
                f"unknown attendee key(s): {', '.join(unknown)}; add them with `calendar add-person` first"
            )
        cursor = conn.execute(
            "INSERT INTO events (id, title, start_utc, end_utc) VALUES (?, ?, ?, ?)",
            (event_id, title, start_text, end_text),
        )
        event_id = cursor.lastrowid
        assert event_id is not None
        conn.executemany(
            "INSERT INTO event_attendees (event_id, person_key) VALUES (?, ?)",
            [(event_id, key) for key in keys],
        )
    return Event(event_id, title, from_utc_text(start_text), from_utc_text(end_text), keys)


def cancel_event(conn: sqlite3.Connection, event_id: int) -> Event:
    """Delete an event and return it as it was; its attendees go with it.

    A bookings record of the call that made it stays, with its event_id set to NULL: a
    resumed round still answers with it instead of booking again.
    """
    with transaction(conn):
        event = get_event(conn, event_id)
        if event is None:
            newest = conn.execute("SELECT max(id) FROM events").fetchone()[0]
            hint = "the calendar has no events" if newest is None else f"ids go up to {newest}"
            raise CalendarError(
                f"there is no event with id {event_id} ({hint}): "
                "`scheduler-agent calendar show --week YYYY-MM-DD` lists events with their ids (#N)"
            )
        conn.execute("DELETE FROM events WHERE id = ?", (event_id,))
    return event


def _attendee_order(keys: Iterable[str]) -> tuple[str, ...]:
    unique = set(keys)
    return tuple(sorted(unique, key=lambda key: (key != OWNER_KEY, key)))


def events_for(conn: sqlite3.Connection, person_key: str, start_utc: datetime, end_utc: datetime) -> list[Event]:
    """`person_key`'s events that overlap [start_utc, end_utc), by start time."""
    rows = conn.execute(
        "SELECT e.id, e.title, e.start_utc, e.end_utc, group_concat(all_a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id AND a.person_key = ? "
        "JOIN event_attendees all_a ON all_a.event_id = e.id "
        "WHERE e.start_utc < ? AND e.end_utc > ? "
        "GROUP BY e.id ORDER BY e.start_utc, e.id",
        (person_key, to_utc_text(end_utc), to_utc_text(start_utc)),
    )
    return [_event(row) for row in rows]


def get_event(conn: sqlite3.Connection, event_id: int) -> Event | None:
    row = conn.execute(
        "SELECT e.id, e.title, e.start_utc, e.end_utc, group_concat(a.person_key, ' ') AS keys "
        "FROM events e JOIN event_attendees a ON a.event_id = e.id WHERE e.id = ? GROUP BY e.id",
        (event_id,),
    ).fetchone()
    return None if row is None else _event(row)


def _event(row: sqlite3.Row) -> Event:
    return Event(
        id=row["id"],
        title=row["title"],
        start=from_utc_text(row["start_utc"]),
        end=from_utc_text(row["end_utc"]),
        attendees=_attendee_order(row["keys"].split()),
    )


# --- bookings: what each create_event call booked -------------------------------------


@dataclass(frozen=True)
class Booking:
    tool_use_id: str
    event_id: int | None  # None once the event was cancelled
    result: str  # the tool_result text the call answered with


def booking_for(conn: sqlite3.Connection, tool_use_id: str) -> Booking | None:
    """The booking recorded for call `tool_use_id`, if that call booked anything."""
    row = conn.execute(
        "SELECT tool_use_id, event_id, result FROM bookings WHERE tool_use_id = ?", (tool_use_id,)
    ).fetchone()
    return None if row is None else Booking(row["tool_use_id"], row["event_id"], row["result"])


def record_booking(conn: sqlite3.Connection, tool_use_id: str, event_id: int, result: str) -> Booking:
    """Record what call `tool_use_id` booked; call it inside the transaction that inserted the event."""
    conn.execute(
        "INSERT INTO bookings (tool_use_id, event_id, result) VALUES (?, ?, ?)", (tool_use_id, event_id, result)
    )
    return Booking(tool_use_id, event_id, result)


# --- fixtures -----------------------------------------------------------------------------


def demo_fixture() -> dict[str, Any]:
    """The demo calendar shipped with the package (plain JSON, embedded in cassettes as their setup)."""
    source = resources.files("scheduler_agent") / "data" / "demo_calendar.json"
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


def seed_demo(conn: sqlite3.Connection) -> int:
    """Put the demo calendar in (idempotent); return how many events were added."""
    return load_fixture(conn, demo_fixture())


def load_fixture(conn: sqlite3.Connection, data: Mapping[str, Any]) -> int:
    """Put a fixture's owner, people and events in, in one transaction; idempotent.

    Returns how many events were added (0 when all were already there).

    A row already there and equal is left alone; an event already there (same title, times
    and attendees) is not added twice. An owner or person already there with other details
    is an error: a fixture never overwrites someone's real calendar.

    Format: {"owner": {"name", "tz", "hours": "09:00-17:00"},
             "people": [{"key", "name", "tz", "hours"}],
             "events": [{"id"?, "title", "start": ISO with offset, "minutes", "attendees": [keys]}]}
    """
    owner_spec = data["owner"]
    owner = _new_person(OWNER_KEY, owner_spec["name"], owner_spec["tz"], *parse_hours(owner_spec["hours"]))
    people = [
        _new_person(spec["key"], spec["name"], spec["tz"], *parse_hours(spec["hours"]))
        for spec in data.get("people", [])
    ]
    added = 0
    with transaction(conn):
        for person in [owner, *people]:
            _ensure_person(conn, person)
        for spec in data.get("events", []):
            start = _fixture_start(spec["start"])
            end = start + timedelta(minutes=int(spec["minutes"]))
            if not _event_exists(conn, spec["title"], start, end, spec["attendees"]):
                add_event(conn, spec["title"], start, end, spec["attendees"], spec.get("id"))
                added += 1
    return added


def export_fixture(conn: sqlite3.Connection) -> dict[str, Any]:
    """The whole calendar in the fixture format, event ids kept: `load_fixture` on a new file rebuilds it
    exactly, so a recorded session replays with the same tool results (event ids included)."""
    owner = get_owner(conn)

    def spec(person: Person) -> dict[str, str]:
        return {"name": person.name, "tz": person.tz, "hours": f"{person.work_start:%H:%M}-{person.work_end:%H:%M}"}

    rows = conn.execute("SELECT id FROM events ORDER BY id").fetchall()
    events = []
    for (event_id,) in rows:
        event = get_event(conn, event_id)
        assert event is not None
        minutes = int((event.end - event.start).total_seconds() // 60)
        start = event.start.astimezone(ZoneInfo(owner.tz)).isoformat(timespec="minutes")
        events.append(
            {
                "id": event.id,
                "title": event.title,
                "start": start,
                "minutes": minutes,
                "attendees": list(event.attendees),
            }
        )
    return {
        "owner": spec(owner),
        "people": [{"key": person.key, **spec(person)} for person in list_people(conn)],
        "events": events,
    }


def _ensure_person(conn: sqlite3.Connection, person: Person) -> None:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (person.key,)).fetchone()
    if row is None:
        _upsert(conn, person)
    elif _person(row) != person:
        raise CalendarError(
            f"this calendar already has {person.key!r} as {_person(row).name} ({_person(row).hours}), "
            f"not {person.name} ({person.hours}): load the fixture into a new file with --db PATH"
        )


def _fixture_start(text: str) -> datetime:
    start = datetime.fromisoformat(text)
    if start.tzinfo is None:
        raise CalendarError(f"fixture event start {text!r} has no offset: write it like 2026-08-31T09:30+01:00")
    return start


def _event_exists(
    conn: sqlite3.Connection, title: str, start: datetime, end: datetime, attendees: Sequence[str]
) -> bool:
    rows = conn.execute(
        "SELECT e.id, group_concat(a.person_key, ' ') AS keys FROM events e "
        "JOIN event_attendees a ON a.event_id = e.id "
        "WHERE e.title = ? AND e.start_utc = ? AND e.end_utc = ? GROUP BY e.id",
        (" ".join(title.split()), to_utc_text(start), to_utc_text(end)),
    )
    wanted = set(attendees)
    return any(set(row["keys"].split()) == wanted for row in rows)
