"""Whole calendars as plain data: the demo calendar, and the fixture a cassette carries."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

from scheduler_agent.calendar.events import add_event, event_records
from scheduler_agent.calendar.people import get_owner, list_people, new_person, upsert_person
from scheduler_agent.calendar.types import (
    OWNER_KEY,
    CalendarError,
    Person,
    Recurrence,
    parse_hours,
    person_from_row,
    to_utc_text,
)
from scheduler_agent.storage.db import transaction


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
             "events": [{"id"?, "title", "start": ISO with offset, "minutes", "attendees": [keys],
                         "tz"?, "all_day"?, "rrule"?, "rdates"?: [ISO], "exdates"?: [ISO]}]}
    The optional keys are there only for an event that has them (a repeating one, an imported one).
    """
    owner_spec = data["owner"]
    owner = new_person(OWNER_KEY, owner_spec["name"], owner_spec["tz"], *parse_hours(owner_spec["hours"]))
    people = [
        new_person(spec["key"], spec["name"], spec["tz"], *parse_hours(spec["hours"]))
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
                recurrence = Recurrence(
                    spec.get("rrule"),
                    tuple(_fixture_start(text) for text in spec.get("rdates", [])),
                    tuple(_fixture_start(text) for text in spec.get("exdates", [])),
                )
                add_event(
                    conn,
                    spec["title"],
                    start,
                    end,
                    spec["attendees"],
                    spec.get("id"),
                    tz=spec.get("tz"),
                    all_day=bool(spec.get("all_day", False)),
                    recurrence=recurrence,
                )
                added += 1
    return added


def export_fixture(conn: sqlite3.Connection) -> dict[str, Any]:
    """The whole calendar in the fixture format, event ids kept: `load_fixture` on a new file rebuilds it
    exactly, so a recorded session replays with the same tool results (event ids included)."""
    owner = get_owner(conn)

    def spec(person: Person) -> dict[str, str]:
        return {"name": person.name, "tz": person.tz, "hours": f"{person.work_start:%H:%M}-{person.work_end:%H:%M}"}

    def moment(value: datetime) -> str:
        return value.astimezone(ZoneInfo(owner.tz)).isoformat(timespec="minutes")

    events = []
    for record in event_records(conn):
        event = record.event
        minutes = int((event.end - event.start).total_seconds() // 60)
        entry: dict[str, Any] = {
            "id": event.id,
            "title": event.title,
            "start": moment(event.start),
            "minutes": minutes,
            "attendees": list(event.attendees),
        }
        if record.tz is not None:
            entry["tz"] = record.tz
        if record.all_day:
            entry["all_day"] = True
        repeat = record.recurrence
        if repeat.rule is not None:
            entry["rrule"] = repeat.rule
        if repeat.rdates:
            entry["rdates"] = [moment(value) for value in repeat.rdates]
        if repeat.exdates:
            entry["exdates"] = [moment(value) for value in repeat.exdates]
        events.append(entry)
    return {
        "owner": spec(owner),
        "people": [{"key": person.key, **spec(person)} for person in list_people(conn)],
        "events": events,
    }


def _ensure_person(conn: sqlite3.Connection, person: Person) -> None:
    row = conn.execute("SELECT * FROM people WHERE key = ?", (person.key,)).fetchone()
    if row is None:
        upsert_person(conn, person)
    elif person_from_row(row) != person:
        raise CalendarError(
            f"this calendar already has {person.key!r} as {person_from_row(row).name} ({person_from_row(row).hours}), "
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
