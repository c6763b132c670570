"""The owner and the people the agent books with, in SQLite."""

from __future__ import annotations

import re
import sqlite3
from datetime import time

from scheduler_agent.calendar.types import (
    KEY_PATTERN,
    OWNER_KEY,
    SET_OWNER_HINT,
    CalendarError,
    Person,
    check_hours,
    check_name,
    check_tz,
    person_from_row,
)
from scheduler_agent.storage.db import transaction


def get_owner(conn: sqlite3.Connection) -> Person:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (OWNER_KEY,)).fetchone()
    if row is None:
        raise CalendarError(f"this calendar has no owner yet: {SET_OWNER_HINT}")
    return person_from_row(row)


def set_owner(conn: sqlite3.Connection, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Create or replace the owner (key 'you')."""
    owner = new_person(OWNER_KEY, name, tz, work_start, work_end)
    with transaction(conn):
        upsert_person(conn, owner)
    return owner


def add_person(conn: sqlite3.Connection, key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    """Add someone the owner meets. The key is short, lowercase, unique (e.g. 'priya')."""
    if key == OWNER_KEY:
        raise CalendarError(f"the key {OWNER_KEY!r} is the owner's: use set-owner, or pick another key")
    if not KEY_PATTERN.fullmatch(key):
        suggestion = re.sub(r"[^a-z0-9_-]", "", key.lower().replace(" ", "-"))[:32] or "priya"
        raise CalendarError(f"key {key!r} must be 1-32 lowercase letters, digits, '-' or '_': e.g. {suggestion!r}")
    person = new_person(key, name, tz, work_start, work_end)
    with transaction(conn):
        existing = conn.execute("SELECT name FROM people WHERE key = ?", (key,)).fetchone()
        if existing is not None:
            raise CalendarError(f"key {key!r} is already taken by {existing['name']}: choose another key")
        upsert_person(conn, person)
    return person


def new_person(key: str, name: str, tz: str, work_start: time, work_end: time) -> Person:
    check_hours(work_start, work_end)
    return Person(key, check_name(name), check_tz(tz), work_start, work_end)


def upsert_person(conn: sqlite3.Connection, person: Person) -> None:
    conn.execute(
        "INSERT INTO people (key, name, tz, work_start, work_end) VALUES (?, ?, ?, ?, ?) "
        "ON CONFLICT (key) DO UPDATE SET name = excluded.name, tz = excluded.tz, "
        "work_start = excluded.work_start, work_end = excluded.work_end",
        (person.key, person.name, person.tz, f"{person.work_start:%H:%M}", f"{person.work_end:%H:%M}"),
    )


def list_people(conn: sqlite3.Connection) -> list[Person]:
    """Everyone but the owner, by key."""
    rows = conn.execute("SELECT * FROM people WHERE key <> ? ORDER BY key", (OWNER_KEY,))
    return [person_from_row(row) for row in rows]


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
