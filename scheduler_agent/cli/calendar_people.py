"""`scheduler-agent calendar seed-demo|people|set-owner|add-person|edit-person|remove-person`."""

from __future__ import annotations

import json
from datetime import datetime, time, timedelta

import click
from sqlalchemy import Connection, text

from scheduler_agent.calendar.busy import events_for
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.people import add_person, edit_person, get_owner, list_people, remove_person, set_owner
from scheduler_agent.calendar.slots import format_window, outside_hours
from scheduler_agent.calendar.types import (
    OWNER_KEY,
    CalendarError,
    Event,
    Person,
    check_buffer,
    parse_dates_off,
    parse_days,
    parse_hours,
)
from scheduler_agent.cli.caldav import save_contact
from scheduler_agent.cli.calendar import calendar_session, examples
from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.options import db_option, json_flag, today_option
from scheduler_agent.cli.person_options import PersonChanges, person_options
from scheduler_agent.cli.tables import table
from scheduler_agent.cli.terminal import say
from scheduler_agent.session.clock import clock_for
from scheduler_agent.storage.db import Location, transaction


@command("seed-demo", epilog=examples("seed-demo", "seed-demo --db demo.db"))
@db_option
def seed_demo_command(db: Location | None) -> None:
    """Put the demo calendar in (Jordan Lee and colleagues); running it again changes nothing."""
    with calendar_session(db, creates=True) as conn:
        added = seed_demo(conn)
        owner = get_owner(conn)
        say(
            f"Demo calendar ready: {owner.name} ({owner.hours}) and {len(list_people(conn))} people; "
            f"{added} event(s) added."
        )


@command("people", epilog=examples("people", "people --json"))
@db_option
@json_flag(help="A JSON array: key, name, tz, hours, owner.")
def people_command(db: Location | None, as_json: bool) -> None:
    """List the owner and the people the agent can book with."""
    with calendar_session(db) as conn:
        people = [get_owner(conn), *list_people(conn)]
        if as_json:
            rows = [{"key": p.key, "name": p.name, "tz": p.tz, "hours": p.hours, "owner": p.is_owner} for p in people]
            click.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        lines = [(p.key, f"{p.name}, {p.schedule}{'  (owner)' if p.is_owner else ''}") for p in people]
        for line in table(lines, "<<", gap="  "):
            say(line)


@command(
    "set-owner",
    epilog=examples(
        'set-owner --name "Ada Lovelace" --tz Europe/London --hours 09:00-17:00',
        "set-owner --day fri=off --lunch 12:30-13:30",
    ),
)
@person_options("owner")
@db_option
def set_owner_command(person: PersonChanges, db: Location | None) -> None:
    """Set who the calendar belongs to ('you'): name, time zone, working hours. Run again to change any of them."""
    with calendar_session(db, creates=True) as conn:
        exists = conn.execute(text("SELECT 1 FROM people WHERE key = :key"), {"key": OWNER_KEY}).fetchone() is not None
        if not exists:
            if person.name is None or person.tz is None:
                raise CalendarError("a new owner needs --name and --tz, e.g. --name 'Jordan Lee' --tz Europe/London")
            set_owner(conn, person.name, person.tz, *parse_hours(person.hours or "09:00-17:00"))
        owner = _edit(conn, OWNER_KEY, person)
        say(f"Owner: {owner.name}, {owner.schedule}.")


def _edit(conn: Connection, key: str, changes: PersonChanges) -> Person:
    lunch_value: tuple[time, time] | bool | None = True
    if changes.lunch is not None:
        lunch_value = False if changes.lunch.strip().lower() == "none" else parse_hours(changes.lunch, "lunch")
    return edit_person(
        conn,
        key,
        name=changes.name,
        tz=changes.tz,
        hours=parse_hours(changes.hours) if changes.hours is not None else None,
        days=parse_days(list(changes.day)) if changes.day else None,
        days_off=parse_dates_off(list(changes.off)) if changes.off else None,
        buffer_minutes=check_buffer(changes.buffer) if changes.buffer is not None else None,
        lunch=lunch_value,
    )


@command("add-person", epilog=examples('add-person priya --name "Priya Raman" --tz Asia/Kolkata --hours 10:00-18:00'))
@argument("key", help="Short lowercase key, e.g. priya.", metavar="KEY")
@person_options("new")
@db_option
def add_person_command(
    key: str, name: str, tz: str, hours: str, email: str | None, caldav: str | None, db: Location | None
) -> None:
    """Add someone the owner meets."""
    with calendar_session(db, creates=True) as conn:
        with transaction(conn):  # the person and their e-mail/CalDAV calendar, or neither
            person = add_person(conn, key, name, tz, *parse_hours(hours))
            contact = save_contact(conn, person.key, email, caldav)
        say(f"Added {person.key}: {person.name}, {person.hours}.")
        if contact:
            say(contact)


@command(
    "edit-person",
    epilog=examples(
        "edit-person priya --hours 10:00-18:00",
        "edit-person priya --day fri=off --buffer 10",
        "edit-person priya --email priya@example.com",
    ),
)
@argument("key", help="Whose details to change: their key (see `calendar people`).", metavar="KEY")
@person_options("edit")
@db_option
@today_option
def edit_person_command(key: str, person: PersonChanges, db: Location | None, today: str | None) -> None:
    """Change someone's name, zone, hours (per weekday too), days off, buffer, lunch, e-mail or CalDAV calendar;
    the rest stays. Their meetings that the new hours leave outside are listed (not moved)."""
    with calendar_session(db) as conn:
        before = next((p for p in list_people(conn) if p.key == key), None) or get_owner(conn)
        with transaction(conn):  # the details and the e-mail/CalDAV calendar, or neither
            changed = _edit(conn, key, person)
            contact = save_contact(conn, changed.key, person.email, person.caldav)
        say(f"{changed.key}: {changed.name}, {changed.schedule}.")
        if contact:
            say(contact)
        now = clock_for(conn, today).now()
        left_out = newly_outside(conn, before, changed, now) if before.key == changed.key else []
        if left_out:
            say(f"Now outside {changed.key}'s hours (in the next {OUTSIDE_WEEKS} weeks; nothing was moved):")
            for event in left_out:
                say(f"  #{event.id} {format_window((event.start, event.end), changed.tz)} {event.title}")


OUTSIDE_WEEKS = 8  # how far ahead edit-person looks for meetings the new hours leave outside


def newly_outside(conn: Connection, before: Person, after: Person, now: datetime) -> list[Event]:
    """`after`'s meetings from `now` to OUTSIDE_WEEKS ahead that fall outside their hours now and did not before."""
    events = events_for(conn, after.key, now, now + timedelta(weeks=OUTSIDE_WEEKS))
    already = {(e.id, e.start) for e in outside_hours(before, events)}
    return [e for e in outside_hours(after, events) if (e.id, e.start) not in already]


@command("remove-person", epilog=examples("remove-person marco", "remove-person marco --cancel-meetings"))
@argument("key", help="Who to remove: their key.", metavar="KEY")
@click.option("--cancel-meetings", is_flag=True, help="Cancel their future meetings too (for everyone attending).")
@db_option
@today_option
def remove_person_command(key: str, cancel_meetings: bool, db: Location | None, today: str | None) -> None:
    """Remove someone; refused while they have future meetings, unless --cancel-meetings."""
    with calendar_session(db) as conn:
        cancelled = remove_person(conn, key, clock_for(conn, today).now(), cancel_meetings=cancel_meetings)
        also = f"; cancelled {', '.join(f'#{i}' for i in cancelled)}" if cancelled else ""
        say(f"Removed {key}{also}.")
