"""The owner and the people the agent books with, in SQLite."""

from __future__ import annotations

import re
from dataclasses import replace
from datetime import UTC, date, datetime, time

from sqlalchemy import Connection, text

from scheduler_agent.calendar.events import DELETE_EVENTS
from scheduler_agent.calendar.types import (
    KEY_PATTERN,
    OWNER_KEY,
    PERSON_COLUMNS,
    SET_OWNER_HINT,
    CalendarError,
    Hours,
    Person,
    check_buffer,
    check_hours,
    check_name,
    check_tz,
    days_text,
    person_from_row,
    person_from_values,
    to_utc_text,
)
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.statement import Statement

# Every tool call reads the owner and the people: run on the driver (storage/statement.py), parsed once per row.
_OWNER = Statement(f"SELECT {', '.join(PERSON_COLUMNS)} FROM people WHERE key = :key")
_PEOPLE = Statement(f"SELECT {', '.join(PERSON_COLUMNS)} FROM people WHERE key <> :key ORDER BY key")


def get_owner(conn: Connection) -> Person:
    row = _OWNER.first(conn, {"key": OWNER_KEY})
    if row is None:
        raise CalendarError(f"this calendar has no owner yet: {SET_OWNER_HINT}")
    return person_from_values(row)


def set_owner(conn: Connection, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Create or replace the owner (key 'you')."""
    owner = new_person(OWNER_KEY, name, tz, work_start, work_end)
    with transaction(conn):
        upsert_person(conn, owner)
    return owner


def add_person(conn: Connection, key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Add someone the owner meets. The key is short, lowercase, unique (e.g. 'priya')."""
    if key == OWNER_KEY:
        raise CalendarError(f"the key {OWNER_KEY!r} is the owner's: use set-owner, or pick another key")
    if not KEY_PATTERN.fullmatch(key):
        suggestion = re.sub(r"[^a-z0-9_-]", "", key.lower().replace(" ", "-"))[:32] or "priya"
        shown = repr(key) if len(key) <= 40 else f"{key[:37]!r}... ({len(key):,} characters)"  # not echoed whole
        raise CalendarError(f"key {shown} must be 1-32 lowercase letters, digits, '-' or '_': e.g. {suggestion!r}")
    person = new_person(key, name, tz, work_start, work_end)
    with transaction(conn):
        existing = conn.execute(text("SELECT name FROM people WHERE key = :key"), {"key": key}).fetchone()
        if existing is not None:
            raise CalendarError(f"key {key!r} is already taken by {existing.name}: choose another key")
        upsert_person(conn, person)
    return person


def new_person(key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    check_hours(work_start, work_end)
    return Person(key, check_name(name), check_tz(tz), work_start, work_end)


def upsert_person(conn: Connection, person: Person) -> None:
    lunch = f"{person.lunch[0]:%H:%M}-{person.lunch[1]:%H:%M}" if person.lunch else ""
    conn.execute(
        text(
            "INSERT INTO people (key, name, tz, work_start, work_end, days, days_off, buffer_minutes, lunch) "
            "VALUES (:key, :name, :tz, :work_start, :work_end, :days, :days_off, :buffer_minutes, :lunch) "
            "ON CONFLICT (key) DO UPDATE SET name = excluded.name, tz = excluded.tz, "
            "work_start = excluded.work_start, work_end = excluded.work_end, days = excluded.days, "
            "days_off = excluded.days_off, buffer_minutes = excluded.buffer_minutes, lunch = excluded.lunch"
        ),
        {
            "key": person.key,
            "name": person.name,
            "tz": person.tz,
            "work_start": f"{person.work_start:%H:%M}",
            "work_end": f"{person.work_end:%H:%M}",
            "days": days_text(person.days),
            "days_off": " ".join(day.isoformat() for day in person.days_off),
            "buffer_minutes": person.buffer_minutes,
            "lunch": lunch,
        },
    )


def checked(person: Person) -> Person:
    """`person` if every field is valid, else CalendarError naming the first that is not."""
    check_hours(person.work_start, person.work_end)
    for _, hours in person.days:
        if hours is not None:
            check_hours(*hours)
    if person.lunch is not None:
        check_hours(*person.lunch, "lunch")
    check_buffer(person.buffer_minutes)
    return replace(person, name=check_name(person.name), tz=check_tz(person.tz))


def edit_person(
    conn: Connection,
    key: str,
    *,
    name: str | None = None,
    tz: str | None = None,
    hours: Hours | None = None,
    days: tuple[tuple[int, Hours | None], ...] | None = None,
    days_off: tuple[date, ...] | None = None,
    buffer_minutes: int | None = None,
    lunch: Hours | bool | None = True,
) -> Person:
    """Change some of what is stored about `key` (the owner too); what is not given stays.

    `days` are merged into the weekdays already set; `lunch` False removes the break (True: unchanged).
    """
    with transaction(conn):
        row = conn.execute(text("SELECT * FROM people WHERE key = :key"), {"key": key}).fetchone()
        if row is None:
            raise CalendarError(_unknown_key(conn, key))
        person = person_from_row(row)
        changes: dict[str, object] = {}
        if name is not None:
            changes["name"] = name
        if tz is not None:
            changes["tz"] = tz
        if hours is not None:
            changes["work_start"], changes["work_end"] = hours
        if days is not None:
            changes["days"] = tuple(sorted({**dict(person.days), **dict(days)}.items()))
        if days_off is not None:
            changes["days_off"] = days_off
        if buffer_minutes is not None:
            changes["buffer_minutes"] = buffer_minutes
        if lunch is False:
            changes["lunch"] = None
        elif lunch is not True:
            changes["lunch"] = lunch
        edited = checked(replace(person, **changes))  # type: ignore[arg-type]
        upsert_person(conn, edited)
    return edited


def future_events(conn: Connection, key: str, now: datetime) -> list[int]:
    """The ids of `key`'s events that end after `now` (a repeating one counts while it has no end)."""
    rows = conn.execute(
        text(
            "SELECT DISTINCT e.id FROM events e JOIN event_attendees a ON a.event_id = e.id AND a.person_key = :key "
            "WHERE e.end_utc > :now OR e.rrule IS NOT NULL OR e.rdates <> '' ORDER BY e.id"
        ),
        {"key": key, "now": to_utc_text(now.astimezone(UTC))},
    )
    return [row[0] for row in rows]


def remove_person(conn: Connection, key: str, now: datetime, *, cancel_meetings: bool = False) -> list[int]:
    """Remove `key` from the calendar; return the ids of the meetings cancelled with them.

    Refused (CalendarError) while they have future meetings, unless `cancel_meetings`: then each of those
    is cancelled for everyone. Their past events and imported busy time go with them.
    """
    if key == OWNER_KEY:
        raise CalendarError("the owner cannot be removed: change them with `calendar set-owner`")
    with transaction(conn):
        row = conn.execute(text("SELECT name FROM people WHERE key = :key"), {"key": key}).fetchone()
        if row is None:
            raise CalendarError(_unknown_key(conn, key))
        upcoming = future_events(conn, key, now)
        if upcoming and not cancel_meetings:
            ids = ", ".join(f"#{event_id}" for event_id in upcoming)
            raise CalendarError(
                f"{row.name} ({key}) still has {len(upcoming)} future meeting(s) ({ids}): cancel them first "
                "with `calendar cancel ID`, or run again with --cancel-meetings to cancel them all"
            )
        conn.execute(DELETE_EVENTS, {"ids": list(upcoming)})
        # Their past meetings with others stay, without them; events that were theirs alone go.
        conn.execute(text("DELETE FROM event_attendees WHERE person_key = :key"), {"key": key})
        conn.execute(text("DELETE FROM events WHERE id NOT IN (SELECT event_id FROM event_attendees)"))
        conn.execute(text("DELETE FROM event_sources WHERE person_key = :key"), {"key": key})
        conn.execute(text("DELETE FROM people WHERE key = :key"), {"key": key})
    return upcoming


def _unknown_key(conn: Connection, key: str) -> str:
    known = ", ".join(person.key for person in list_people(conn)) or "nobody yet"
    return f"no one has the key {key!r}: the people are {known} (`calendar people` lists them)"


def list_people(conn: Connection) -> list[Person]:
    """Everyone but the owner, by key."""
    return [person_from_values(row) for row in _PEOPLE.rows(conn, {"key": OWNER_KEY})]


def match_people(conn: Connection, text: str) -> list[Person]:
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


def find_person(conn: Connection, text: str) -> Person | None:
    """The one person `text` names, or None when no one (or more than one) fits."""
    matches = match_people(conn, text)
    return matches[0] if len(matches) == 1 else None


def names_owner(owner: Person, text: str) -> bool:
    wanted = " ".join(text.split()).casefold()
    return wanted in {OWNER_KEY, "me", "myself", owner.name.casefold(), owner.name.split()[0].casefold()}
