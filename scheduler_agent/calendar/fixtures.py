"""Whole calendars as plain data: the demo calendar, and the fixture a cassette carries."""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import datetime, timedelta
from importlib import resources
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import Connection, text

from scheduler_agent.calendar.events import add_event, event_records
from scheduler_agent.calendar.people import checked, get_owner, list_people, upsert_person
from scheduler_agent.calendar.prefs import add_preference, list_preferences
from scheduler_agent.calendar.series import components_of
from scheduler_agent.calendar.types import (
    OWNER_KEY,
    CalendarError,
    Person,
    Recurrence,
    days_text,
    format_hours,
    parse_dates_off,
    parse_days,
    parse_hours,
    person_from_row,
    to_utc_text,
)
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.dialect import per_dialect


def demo_fixture() -> dict[str, Any]:
    """The demo calendar shipped with the package (plain JSON, embedded in cassettes as their setup)."""
    source = resources.files("scheduler_agent") / "data" / "demo_calendar.json"
    data: dict[str, Any] = json.loads(source.read_text(encoding="utf-8"))
    return data


def seed_demo(conn: Connection) -> int:
    """Put the demo calendar in (idempotent); return how many events were added."""
    return load_fixture(conn, demo_fixture())


def load_fixture(conn: Connection, data: Mapping[str, Any]) -> int:
    """Put a fixture's owner, people and events in, in one transaction; idempotent.

    Returns how many events were added (0 when all were already there).

    A row already there and equal is left alone; an event already there (same title, times
    and attendees) is not added twice. An owner or person already there with other details
    is an error: a fixture never overwrites someone's real calendar.

    Format: {"owner": {"name", "tz", "hours": "09:00-17:00", "days"?, "days_off"?, "buffer"?, "lunch"?},
             "people": [{"key", "name", "tz", "hours", ...the same optional keys}],
             "preferences"?: [{"text", "rule"?, "value"?}],
             "events": [{"id"?, "title", "start": ISO with offset, "minutes", "attendees": [keys],
                         "tz"?, "all_day"?, "rrule"?, "rdates"?: [ISO], "exdates"?: [ISO],
                         "ics"?: VCALENDAR text, "zones"?: [floating zone, day zone]}]}
    The optional keys are there only for a person or event that has them: "days" like "mon=10:00-16:00
    fri=off", "days_off" a list of dates, "buffer" minutes, "lunch" "12:30-13:30"; an event's repeat, zone,
    or (an imported one) its whole component. Preferences are added when the calendar has none yet (a
    cassette's fixture goes into a new file).
    """
    owner = _person(OWNER_KEY, data["owner"])
    people = [_person(spec["key"], spec) for spec in data.get("people", [])]
    added = 0
    with transaction(conn):
        for person in [owner, *people]:
            _ensure_person(conn, person)
        if data.get("preferences") and not list_preferences(conn):
            for preference in data["preferences"]:
                add_preference(conn, preference["text"], preference.get("rule", ""), preference.get("value", ""))
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
                    components=(spec["ics"], *spec["zones"]) if "ics" in spec else None,
                )
                added += 1
    return added


def export_fixture(conn: Connection) -> dict[str, Any]:
    """The whole calendar in the fixture format, event ids kept: `load_fixture` on a new file rebuilds it
    exactly, so a recorded session replays with the same tool results (event ids included)."""
    owner = get_owner(conn)

    def spec(person: Person) -> dict[str, Any]:
        entry: dict[str, Any] = {
            "name": person.name,
            "tz": person.tz,
            "hours": f"{person.work_start:%H:%M}-{person.work_end:%H:%M}",
        }
        if person.days:
            entry["days"] = days_text(person.days)
        if person.days_off:
            entry["days_off"] = [day.isoformat() for day in person.days_off]
        if person.buffer_minutes:
            entry["buffer"] = person.buffer_minutes
        if person.lunch is not None:
            entry["lunch"] = format_hours(person.lunch)
        return entry

    def moment(value: datetime) -> str:
        return value.astimezone(ZoneInfo(owner.tz)).isoformat(timespec="minutes")

    events = []
    imported = {row[0] for row in conn.execute(text("SELECT event_id FROM event_sources"))}
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
        stored = components_of(conn, event.id) if event.id in imported else None
        if stored is not None:  # an imported series (a file's, a feed's): its overrides and zones as they came
            entry["ics"], entry["zones"] = stored[0], [stored[1], stored[2]]
        events.append(entry)
    fixture: dict[str, Any] = {
        "owner": spec(owner),
        "people": [{"key": person.key, **spec(person)} for person in list_people(conn)],
        "events": events,
    }
    preferences = [
        {"text": p.text, **({"rule": p.rule, "value": p.value} if p.rule else {})} for p in list_preferences(conn)
    ]
    if preferences:
        fixture["preferences"] = preferences
    return fixture


def _person(key: str, spec: Mapping[str, Any]) -> Person:
    start, end = parse_hours(spec["hours"])
    lunch = spec.get("lunch")
    person = Person(
        key,
        spec["name"],
        spec["tz"],
        start,
        end,
        days=parse_days(spec.get("days", "").split()),
        days_off=parse_dates_off(spec.get("days_off", [])),
        buffer_minutes=int(spec.get("buffer", 0)),
        lunch=parse_hours(lunch, "lunch") if lunch else None,
    )
    return checked(person)


def _ensure_person(conn: Connection, person: Person) -> None:
    row = conn.execute(text("SELECT * FROM people WHERE key = :key"), {"key": person.key}).fetchone()
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


# The events with this title and these times, and who attends each: single events and repeating ones each
# through their own index by time (m021's, m012's).
_SAME = "e.title = :title AND e.start_utc = :start AND e.end_utc = :end"
SAME_EVENT = per_dialect(
    "SELECT e.id, {aggregate_strings}(a.person_key, ' ') AS keys FROM events e "
    "JOIN event_attendees a ON a.event_id = e.id "
    f"WHERE e.id IN (SELECT e.id FROM events e WHERE {_SAME} AND e.rrule IS NULL AND e.rdates = '' "
    f"UNION ALL SELECT e.id FROM events e WHERE {_SAME} AND (e.rrule IS NOT NULL OR e.rdates <> '')) "
    "GROUP BY e.id"
)


def _event_exists(conn: Connection, title: str, start: datetime, end: datetime, attendees: Sequence[str]) -> bool:
    rows = conn.execute(
        SAME_EVENT[conn.dialect.name],
        {"title": " ".join(title.split()), "start": to_utc_text(start), "end": to_utc_text(end)},
    )
    wanted = set(attendees)
    return any(set(row._mapping["keys"].split()) == wanted for row in rows)
