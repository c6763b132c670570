"""`scheduler-agent calendar ...`: look at and change the calendar the agent books into.

Booking goes through the same code as the `create_event` tool, so a person and the model
meet the same checks. A problem a person can fix is one `Error: ...` line and exit 1.
`import` and `export` read and write iCalendar (.ics) files; they alone load `icalendar`.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo

import typer

from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.events import cancel_event, events_for
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.people import add_person, get_owner, list_people, set_owner
from scheduler_agent.calendar.slots import format_day, format_span, format_window, monday_of, week_span
from scheduler_agent.calendar.tools import DEFAULT_MINUTES, CalendarTools, check_minutes
from scheduler_agent.calendar.types import OWNER_KEY, CalendarError, Event, Person, parse_hours
from scheduler_agent.cli.caldav import CalDAVUrlOption, EmailOption, register, save_contact
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import DbOption, TodayOption, default_db_path
from scheduler_agent.storage.db import open_db, transaction

calendar_app = typer.Typer(
    name="calendar",
    help="Look at and change the calendar the agent books into (the owner, people, events).",
    no_args_is_help=True,
    add_completion=False,
)

NameOption = Annotated[str, typer.Option("--name", help="Full name, e.g. 'Priya Raman'.")]
TzOption = Annotated[str, typer.Option("--tz", help="IANA time zone, e.g. Europe/London.")]
HoursOption = Annotated[str, typer.Option("--hours", help="Working hours, local time, Monday to Friday.")]
MinutesOption = Annotated[int, typer.Option("--minutes", help="Meeting length in minutes (5-480).")]


def connect(db: Path | None) -> sqlite3.Connection:
    """Open the calendar at `db` (or the default file); CalendarError when it cannot be opened."""
    path = db if db is not None else default_db_path()
    try:
        return open_db(path)
    except (sqlite3.Error, OSError) as exc:
        raise CalendarError(
            f"cannot open the calendar database {path} ({exc}); give a writable file with --db PATH"
        ) from None


def clock_for(conn: sqlite3.Connection, today: str | None) -> Clock:
    """Real time, or the `--today` pin read as the owner's wall-clock time (ValueError if malformed)."""
    if today is None:
        return Clock()
    day, at = parse_pin(today)
    return Clock.pinned_at(day, at, get_owner(conn).tz)


@contextmanager
def _calendar(db: Path | None) -> Iterator[sqlite3.Connection]:
    """The open calendar for one command, with person-facing errors."""
    with person_facing():
        conn = connect(db)
        try:
            yield conn
        finally:
            conn.close()


@calendar_app.command("seed-demo")
def seed_demo_command(db: DbOption = None) -> None:
    """Put the demo calendar in (Jordan Lee and colleagues); running it again changes nothing."""
    with _calendar(db) as conn:
        added = seed_demo(conn)
        owner = get_owner(conn)
        typer.echo(
            f"Demo calendar ready: {owner.name} ({owner.hours}) and {len(list_people(conn))} people; "
            f"{added} event(s) added."
        )


@calendar_app.command("people")
def people_command(db: DbOption = None) -> None:
    """List the owner and the people the agent can book with."""
    with _calendar(db) as conn:
        people = [get_owner(conn), *list_people(conn)]
        width = max(len(person.key) for person in people)
        for person in people:
            mark = "  (owner)" if person.is_owner else ""
            typer.echo(f"{person.key:<{width}}  {person.name}, {person.hours}{mark}")


@calendar_app.command("set-owner")
def set_owner_command(name: NameOption, tz: TzOption, hours: HoursOption = "09:00-17:00", db: DbOption = None) -> None:
    """Set who the calendar belongs to ('you'): name, time zone, working hours."""
    with _calendar(db) as conn:
        owner = set_owner(conn, name, tz, *parse_hours(hours))
        typer.echo(f"Owner: {owner.name}, {owner.hours}.")


@calendar_app.command("add-person")
def add_person_command(
    key: Annotated[str, typer.Argument(help="Short lowercase key, e.g. priya.")],
    name: NameOption,
    tz: TzOption,
    hours: HoursOption = "09:00-17:00",
    db: DbOption = None,
    email: EmailOption = None,
    caldav: CalDAVUrlOption = None,
) -> None:
    """Add someone the owner meets."""
    with _calendar(db) as conn:
        with transaction(conn):  # the person and their e-mail/CalDAV calendar, or neither
            person = add_person(conn, key, name, tz, *parse_hours(hours))
            contact = save_contact(conn, person.key, email, caldav)
        typer.echo(f"Added {person.key}: {person.name}, {person.hours}.")
        if contact:
            typer.echo(contact)


@calendar_app.command("add-event")
def add_event_command(
    with_: Annotated[str, typer.Option("--with", help="The other person: key or name.")],
    start: Annotated[
        str, typer.Option("--start", help="YYYY-MM-DDTHH:MM, the owner's local time (or with an offset).")
    ],
    minutes: MinutesOption = DEFAULT_MINUTES,
    title: Annotated[str | None, typer.Option("--title", help="Default: 'Meeting with NAME'.")] = None,
    db: DbOption = None,
    today: TodayOption = None,
) -> None:
    """Book a meeting with the same checks as the agent's create_event tool."""
    with _calendar(db) as conn:
        tools = CalendarTools(conn, clock_for(conn, today))
        typer.echo(tools.create_event(with_, start, minutes, title))


@calendar_app.command("cancel")
def cancel_command(
    event_id: Annotated[int, typer.Argument(help="The event's id, the #N that `calendar show` prints.")],
    db: DbOption = None,
) -> None:
    """Cancel (delete) one event, for everyone attending."""
    with _calendar(db) as conn:
        owner = get_owner(conn)
        event = cancel_event(conn, event_id)
        span = format_window((event.start, event.end), owner.tz)
        when = f"every occurrence from {span}" if event.recurring else f"on {span}"
        typer.echo(
            f"Cancelled {event.title!r} {when} ({owner.tz}) for {', '.join(event.attendees)}. Event id: {event.id}."
        )


@calendar_app.command("show")
def show_command(
    person: Annotated[
        str | None, typer.Option("--person", help="Also show this person's events and your shared free time.")
    ] = None,
    week: Annotated[str | None, typer.Option("--week", help="Any day of the week, YYYY-MM-DD.")] = None,
    minutes: MinutesOption = DEFAULT_MINUTES,
    db: DbOption = None,
    today: TodayOption = None,
) -> None:
    """Show a week's events (yours, and the person's) and the free windows you share."""
    with _calendar(db) as conn:
        owner = get_owner(conn)
        tools = CalendarTools(conn, clock_for(conn, today))
        other = tools.resolve_person(person, field="--person") if person is not None else None
        day = tools.parse_week(week, owner) if week is not None else tools.clock.today(owner.tz)
        check_minutes(minutes)
        for line in _week_lines(conn, tools, owner, other, day, minutes):
            typer.echo(line)


def _span(event: Event, zone: ZoneInfo) -> str:
    """`09:00-10:00`, or `all day` for an event from midnight to midnight (one day or more)."""
    start, end = event.start.astimezone(zone), event.end.astimezone(zone)
    if start.time() == end.time() == datetime.min.time():
        days = (end.date() - start.date()).days
        return f"{'all day' if days == 1 else f'{days} days':<11}"
    return format_span((event.start, event.end), zone.key)


def _week_lines(
    conn: sqlite3.Connection,
    tools: CalendarTools,
    owner: Person,
    other: Person | None,
    day: date,
    minutes: int,
) -> Iterator[str]:
    monday = monday_of(day)
    people = [owner] if other is None else [owner, other]
    yield f"Week of {format_day(monday)}, times in {owner.tz}"
    for person in people:
        yield f"  {person.name} ({person.key}): works {person.hours}"
    start, end = week_span(monday, owner.tz)
    end += timedelta(days=2)  # the weekend too, if anything is booked on it
    events: dict[tuple[int, datetime], Event] = {  # the occurrences of a repeating event share its id
        (event.id, event.start): event for person in people for event in events_for(conn, person.key, start, end)
    }
    zone = ZoneInfo(owner.tz)
    by_day: dict[date, list[Event]] = {}
    for event in sorted(events.values(), key=lambda event: (event.start, event.id)):
        by_day.setdefault(event.start.astimezone(zone).date(), []).append(event)
    for offset in range(7):
        current = monday + timedelta(days=offset)
        if offset >= 5 and current not in by_day:
            continue  # weekends only when something is on them
        yield ""
        yield format_day(current)
        for event in by_day.get(current, []):
            span = _span(event, zone)
            repeats = " (repeats)" if event.recurring else ""
            yield f"  {span}  {event.title}  ({', '.join(event.attendees)})  #{event.id}{repeats}"
        if current not in by_day:
            yield "  (nothing booked)"
    if other is None:
        return
    yield ""
    search = tools.search(owner, other, day, minutes)
    if not search.windows:
        yield tools.no_windows_text(owner, other, search)
        return
    yield f"Free windows of at least {minutes} minutes for {OWNER_KEY} and {other.key}:"
    for window in search.windows:
        yield f"  {format_window(window, owner.tz)}"


@calendar_app.command("import")
def import_command(
    file: Annotated[Path, typer.Argument(help="An iCalendar (.ics) file, e.g. from Google Calendar or Outlook.")],
    person: Annotated[
        str, typer.Option("--person", help="Whose busy time it is: a key or name; 'you' is the owner.")
    ] = OWNER_KEY,
    db: DbOption = None,
) -> None:
    """Import an .ics file as busy time for one person: all or nothing; importing it again never doubles."""
    with _calendar(db) as conn:
        from scheduler_agent.calendar import ics  # icalendar costs ~50 ms: only these commands load it

        typer.echo(ics.import_file(conn, file, person))


@calendar_app.command("export")
def export_command(
    person: Annotated[
        str | None, typer.Option("--person", help="Only this person's events: a key or name; 'you' is the owner.")
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the .ics file here. [default: standard output]")
    ] = None,
    db: DbOption = None,
) -> None:
    """Export the events as an iCalendar (.ics) file, RFC 5545, that other calendars can import."""
    with _calendar(db) as conn:
        from scheduler_agent.calendar import ics

        who = ics.person_named(conn, person) if person is not None else None
        exported = ics.export_calendar(conn, who)
        if out is None:
            typer.echo(exported.text, nl=False)
            return
        ics.write_file(out, exported.text)
        typer.echo(
            f"Exported {exported.events} event(s) ({exported.recurring} recurring) "
            f"for {ics.person_label(who)} to {out}."
        )


register(calendar_app)  # `calendar connect` and `calendar backends` (cli/caldav.py)
