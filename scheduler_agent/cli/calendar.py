"""`scheduler-agent calendar ...`: look at and change the calendar the agent books into.

Booking goes through the same code as the `create_event` tool, so a person and the model
meet the same checks. A problem a person can fix is one `Error: ...` line and exit 1.
`import` and `export` read and write iCalendar (.ics) files; they alone load `icalendar`.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, datetime, time, timedelta
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo

import typer

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.calendar.events import cancel_event, events_for
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.calendar.people import add_person, edit_person, get_owner, list_people, remove_person, set_owner
from scheduler_agent.calendar.slots import format_day, format_span, format_window, monday_of, week_span
from scheduler_agent.calendar.tools import DEFAULT_MINUTES, CalendarTools, check_minutes
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
from scheduler_agent.cli.caldav import CalDAVUrlOption, EmailOption, register, save_contact
from scheduler_agent.cli.calendar_json import busy_json
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import DbOption, TodayOption, default_db_path
from scheduler_agent.storage.db import Connection, open_db, transaction

calendar_app = typer.Typer(
    name="calendar",
    help="Look at and change the calendar the agent books into (the owner, people, events).",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)

NameOption = Annotated[str, typer.Option("--name", metavar="NAME", help="Full name, e.g. 'Ada Lovelace'.")]
TzOption = Annotated[str, typer.Option("--tz", metavar="ZONE", help="IANA time zone, e.g. Europe/London.")]
HoursOption = Annotated[
    str, typer.Option("--hours", metavar="HH:MM-HH:MM", help="Working hours, local time, Monday to Friday.")
]
MinutesOption = Annotated[int, typer.Option("--minutes", metavar="MINUTES", help="Meeting length in minutes (5-480).")]
DayOption = Annotated[
    list[str] | None,
    typer.Option(
        "--day",
        metavar="DAY=HOURS",
        help="One weekday's own hours, or off: mon=10:00-16:00, fri=off (repeat for more days).",
    ),
]
OffOption = Annotated[
    list[str] | None,
    typer.Option("--off", metavar="DATE", help="A date off, YYYY-MM-DD (repeat for more); replaces the list."),
]
BufferOption = Annotated[
    int | None,
    typer.Option("--buffer", metavar="MINUTES", help="Minutes kept free before and after each meeting (0-120)."),
]
LunchOption = Annotated[
    str | None,
    typer.Option("--lunch", metavar="HH:MM-HH:MM", help="A daily lunch break, HH:MM-HH:MM; 'none' removes it."),
]


def examples(*commands: str) -> str:
    """A command's "Examples:" epilog, kept as written (Click's \\b stops it rewrapping the lines)."""
    return "Examples:\n\n\b\n" + "\n".join(f"  scheduler-agent calendar {command}" for command in commands)


# The tools' texts are written for the model (they name tools); a person at the command line gets these.
FOR_PEOPLE = {
    "e.g. one from find_free_slots.": "e.g. a free window from `scheduler-agent calendar show --person KEY`.",
    "find_free_slots lists the free windows.": "`scheduler-agent calendar show --person KEY` lists the free windows.",
    "call create_event again with a start inside a free window.": "give a --start inside a free window.",
    "call find_free_slots for the next week, or try a shorter meeting.": (
        "look at the next week (`scheduler-agent calendar show --week DATE`), or try a shorter --minutes."
    ),
    "Tell the user: create_event only books inside both people's working hours.": (
        "Meetings are booked only inside both people's working hours."
    ),
}


def for_people(text: str) -> str:
    """A tool's text, as said to a person at the command line rather than to the model."""
    for model_words, people_words in FOR_PEOPLE.items():
        text = text.replace(model_words, people_words)
    return text


def connect(db: Path | None) -> Connection:
    """Open the calendar at `db` (or the default file); CalendarError when it cannot be opened."""
    path = db if db is not None else default_db_path()
    try:
        return open_db(path)
    except (sqlite3.Error, OSError) as exc:
        raise CalendarError(
            f"cannot open the calendar database {path} ({exc}); give a writable file with --db PATH"
        ) from None


def clock_for(conn: Connection, today: str | None) -> Clock:
    """Real time, or the `--today` pin read as the owner's wall-clock time (ValueError if malformed)."""
    if today is None:
        return Clock()
    day, at = parse_pin(today)
    return Clock.pinned_at(day, at, get_owner(conn).tz)


@contextmanager
def _calendar(db: Path | None, read_only: bool = False) -> Iterator[Connection]:
    """The open calendar for one command, with person-facing errors; `read_only`: a --db file that does not
    exist is refused, never created empty."""
    with person_facing():
        if read_only and db is not None and not db.exists():
            raise CalendarError(
                f"no database at {db}: check the --db path (or SCHEDULER_AGENT_DB); "
                "`scheduler-agent calendar seed-demo --db PATH` makes a new one"
            )
        conn = connect(db)
        try:
            yield conn
        finally:
            conn.close()


calendar_session = _calendar  # for the command groups in other modules (cli/prefs.py)


@calendar_app.command("seed-demo", epilog=examples("seed-demo", "seed-demo --db demo.db"))
def seed_demo_command(db: DbOption = None) -> None:
    """Put the demo calendar in (Jordan Lee and colleagues); running it again changes nothing."""
    with _calendar(db) as conn:
        added = seed_demo(conn)
        owner = get_owner(conn)
        typer.echo(
            f"Demo calendar ready: {owner.name} ({owner.hours}) and {len(list_people(conn))} people; "
            f"{added} event(s) added."
        )


@calendar_app.command("people", epilog=examples("people", "people --json"))
def people_command(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="A JSON array: key, name, tz, hours, owner.")] = False,
) -> None:
    """List the owner and the people the agent can book with."""
    with _calendar(db, read_only=True) as conn:
        people = [get_owner(conn), *list_people(conn)]
        if as_json:
            rows = [{"key": p.key, "name": p.name, "tz": p.tz, "hours": p.hours, "owner": p.is_owner} for p in people]
            typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
            return
        width = max(len(person.key) for person in people)
        for person in people:
            mark = "  (owner)" if person.is_owner else ""
            typer.echo(f"{person.key:<{width}}  {person.name}, {person.schedule}{mark}")


@calendar_app.command(
    "set-owner",
    epilog=examples(
        'set-owner --name "Ada Lovelace" --tz Europe/London --hours 09:00-17:00',
        "set-owner --day fri=off --lunch 12:30-13:30",
    ),
)
def set_owner_command(
    name: Annotated[str | None, typer.Option("--name", help="Full name, e.g. 'Ada Lovelace'.", metavar="NAME")] = None,
    tz: Annotated[str | None, typer.Option("--tz", metavar="ZONE", help="IANA time zone, e.g. Europe/London.")] = None,
    hours: Annotated[
        str | None,
        typer.Option(
            "--hours", metavar="HH:MM-HH:MM", help="Working hours, local time, Monday to Friday. [default: 09:00-17:00]"
        ),
    ] = None,
    day: DayOption = None,
    off: OffOption = None,
    buffer: BufferOption = None,
    lunch: LunchOption = None,
    db: DbOption = None,
) -> None:
    """Set who the calendar belongs to ('you'): name, time zone, working hours. Run again to change any of them."""
    with _calendar(db) as conn:
        exists = conn.execute("SELECT 1 FROM people WHERE key = ?", (OWNER_KEY,)).fetchone() is not None
        if not exists:
            if name is None or tz is None:
                raise CalendarError("a new owner needs --name and --tz, e.g. --name 'Jordan Lee' --tz Europe/London")
            set_owner(conn, name, tz, *parse_hours(hours or "09:00-17:00"))
        owner = _edit(conn, OWNER_KEY, name, tz, hours, day, off, buffer, lunch)
        typer.echo(f"Owner: {owner.name}, {owner.schedule}.")


def _edit(
    conn: Connection,
    key: str,
    name: str | None,
    tz: str | None,
    hours: str | None,
    day: list[str] | None,
    off: list[str] | None,
    buffer: int | None,
    lunch: str | None,
) -> Person:
    lunch_value: tuple[time, time] | bool | None = True
    if lunch is not None:
        lunch_value = False if lunch.strip().lower() == "none" else parse_hours(lunch)
    return edit_person(
        conn,
        key,
        name=name,
        tz=tz,
        hours=parse_hours(hours) if hours is not None else None,
        days=parse_days(day) if day else None,
        days_off=parse_dates_off(off) if off else None,
        buffer_minutes=check_buffer(buffer) if buffer is not None else None,
        lunch=lunch_value,
    )


@calendar_app.command(
    "add-person", epilog=examples('add-person priya --name "Priya Raman" --tz Asia/Kolkata --hours 10:00-18:00')
)
def add_person_command(
    key: Annotated[str, typer.Argument(help="Short lowercase key, e.g. priya.", metavar="KEY")],
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


@calendar_app.command(
    "edit-person",
    epilog=examples("edit-person priya --hours 10:00-18:00", "edit-person priya --day fri=off --buffer 10"),
)
def edit_person_command(
    key: Annotated[
        str, typer.Argument(help="Whose details to change: their key (see `calendar people`).", metavar="KEY")
    ],
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="Full name.")] = None,
    tz: Annotated[str | None, typer.Option("--tz", metavar="ZONE", help="IANA time zone.")] = None,
    hours: Annotated[
        str | None, typer.Option("--hours", metavar="HH:MM-HH:MM", help="Working hours, HH:MM-HH:MM, every weekday.")
    ] = None,
    day: DayOption = None,
    off: OffOption = None,
    buffer: BufferOption = None,
    lunch: LunchOption = None,
    db: DbOption = None,
) -> None:
    """Change someone's name, zone, hours (per weekday too), days off, buffer or lunch; the rest stays."""
    with _calendar(db) as conn:
        person = _edit(conn, key, name, tz, hours, day, off, buffer, lunch)
        typer.echo(f"{person.key}: {person.name}, {person.schedule}.")


@calendar_app.command("remove-person", epilog=examples("remove-person marco", "remove-person marco --cancel-meetings"))
def remove_person_command(
    key: Annotated[str, typer.Argument(help="Who to remove: their key.", metavar="KEY")],
    cancel_meetings: Annotated[
        bool, typer.Option("--cancel-meetings", help="Cancel their future meetings too (for everyone attending).")
    ] = False,
    db: DbOption = None,
    today: TodayOption = None,
) -> None:
    """Remove someone; refused while they have future meetings, unless --cancel-meetings."""
    with _calendar(db) as conn:
        cancelled = remove_person(conn, key, clock_for(conn, today).now(), cancel_meetings=cancel_meetings)
        also = f"; cancelled {', '.join(f'#{i}' for i in cancelled)}" if cancelled else ""
        typer.echo(f"Removed {key}{also}.")


@calendar_app.command(
    "add-event", epilog=examples('add-event --with priya --start 2026-12-07T14:00 --minutes 45 --title "Design review"')
)
def add_event_command(
    with_: Annotated[str, typer.Option("--with", metavar="PERSON", help="The other person: key or name.")],
    start: Annotated[
        str,
        typer.Option(
            "--start", metavar="YYYY-MM-DDTHH:MM", help="YYYY-MM-DDTHH:MM, the owner's local time (or with an offset)."
        ),
    ],
    minutes: MinutesOption = DEFAULT_MINUTES,
    title: Annotated[str | None, typer.Option("--title", metavar="TITLE", help="Default: 'Meeting with NAME'.")] = None,
    also: Annotated[
        list[str] | None,
        typer.Option("--also", metavar="PERSON", help="Another person invited too: key or name (repeat for more)."),
    ] = None,
    db: DbOption = None,
    today: TodayOption = None,
) -> None:
    """Book a meeting with the same checks as the agent's create_event tool."""
    with _calendar(db) as conn:
        tools = CalendarTools(conn, clock_for(conn, today))
        try:
            typer.echo(tools.create_event(with_, start, minutes, title, also=also))
        except ToolError as exc:
            raise CalendarError(for_people(str(exc))) from None


@calendar_app.command("cancel", epilog=examples("cancel 29"))
def cancel_command(
    event_id: Annotated[int, typer.Argument(help="The event's id, the #N that `calendar show` prints.", metavar="ID")],
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


@calendar_app.command(
    "show",
    epilog=examples(
        "show",
        "show --person priya --week 2026-12-07",
        "show --person priya --from 2026-12-07T00:00 --to 2026-12-12T00:00 --json",
    ),
)
def show_command(
    person: Annotated[
        str | None,
        typer.Option("--person", metavar="PERSON", help="Also show this person's events and your shared free time."),
    ] = None,
    week: Annotated[
        str | None,
        typer.Option("--week", metavar="YYYY-MM-DD", help="Any day of the week to show.  [default: the current week]"),
    ] = None,
    minutes: MinutesOption = DEFAULT_MINUTES,
    start: Annotated[
        str | None,
        typer.Option("--from", metavar="DATETIME", help="With --json: from this time (owner's zone, or an offset)."),
    ] = None,
    end: Annotated[
        str | None,
        typer.Option("--to", metavar="DATETIME", help="With --json: until this time.  [default: --from + 7 days]"),
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option(
            "--json",
            help="The busy intervals the agent sees (the person's, or yours), repeating events expanded, as JSON.",
        ),
    ] = False,
    db: DbOption = None,
    today: TodayOption = None,
) -> None:
    """Show a week's events (yours, and the person's) and the free windows you share."""
    with _calendar(db, read_only=True) as conn:
        owner = get_owner(conn)
        tools = CalendarTools(conn, clock_for(conn, today))
        other = tools.resolve_person(person, field="--person") if person is not None else None
        if as_json:
            typer.echo(busy_json(conn, other or owner, owner, tools, week, start, end))
            return
        if start is not None or end is not None:
            raise CalendarError("--from and --to go with --json; for the text view give --week")
        day = tools.parse_week(week, owner) if week is not None else tools.clock.today(owner.tz)
        check_minutes(minutes)
        for line in _week_lines(conn, tools, owner, other, day, minutes):
            typer.echo(for_people(line))


def _span(event: Event, zone: ZoneInfo) -> str:
    """`09:00-10:00`, or `all day` for an event from midnight to midnight (one day or more)."""
    start, end = event.start.astimezone(zone), event.end.astimezone(zone)
    if start.time() == end.time() == datetime.min.time():
        days = (end.date() - start.date()).days
        return f"{'all day' if days == 1 else f'{days} days':<11}"
    return format_span((event.start, event.end), zone.key)


def _week_lines(
    conn: Connection,
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


@calendar_app.command("import", epilog=examples("import priya.ics --person priya", "import mine.ics"))
def import_command(
    file: Annotated[
        Path, typer.Argument(help="An iCalendar (.ics) file, e.g. from Google Calendar or Outlook.", metavar="FILE")
    ],
    person: Annotated[
        str,
        typer.Option("--person", metavar="PERSON", help="Whose busy time it is: a key or name; 'you' is the owner."),
    ] = OWNER_KEY,
    strict: Annotated[
        bool, typer.Option("--strict", help="Refuse the whole file if any event in it cannot be read.")
    ] = False,
    db: DbOption = None,
) -> None:
    """Import an .ics file as busy time for one person; an event that cannot be read is skipped and named.

    One transaction: what is imported is complete. Importing it again never doubles and picks up edits."""
    with _calendar(db) as conn:
        from scheduler_agent.calendar import ics  # icalendar costs ~50 ms: only these commands load it

        typer.echo(ics.import_file(conn, file, person, strict=strict))


@calendar_app.command("export", epilog=examples("export > all.ics", "export --person priya --out priya.ics"))
def export_command(
    person: Annotated[
        str | None,
        typer.Option(
            "--person", metavar="PERSON", help="Only this person's events: a key or name; 'you' is the owner."
        ),
    ] = None,
    out: Annotated[
        Path | None, typer.Option("--out", metavar="PATH", help="Write the .ics file here.  [default: standard output]")
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


@calendar_app.command(
    "subscribe",
    epilog=examples(
        "subscribe https://calendar.example.com/priya/basic.ics --person priya",
        "subscribe webcal://example.com/me.ics --person you --refresh 1h",
    ),
)
def subscribe_command(
    url: Annotated[str, typer.Argument(help="The feed's secret iCal address (https:// or webcal://).", metavar="URL")],
    person: Annotated[
        str,
        typer.Option("--person", metavar="PERSON", help="Whose busy time it is: a key or name; 'you' is the owner."),
    ],
    refresh: Annotated[
        str,
        typer.Option(
            "--refresh", metavar="DURATION", help="Fetch it again before a turn when older than this, e.g. 15m, 1h."
        ),
    ] = "15m",
    db: DbOption = None,
) -> None:
    """Subscribe to a calendar feed (Google's, Outlook's, Fastmail's secret address) and fetch it now."""
    with _calendar(db) as conn:
        from scheduler_agent.calendar import feeds, ics

        who = ics.person_named(conn, person)
        feed = feeds.subscribe(conn, url, who, feeds.parse_duration(refresh))
        line = feeds.refresh(conn, feed)
        fetched = feeds.get_feed(conn, feed.id)
        assert fetched is not None
        if fetched.ok_at is None:
            feeds.unsubscribe(conn, feed.id)
            raise feeds.FeedError(f"{line}; nothing was subscribed: check the address and try again")
        typer.echo(
            f"Subscribed {who.name} ({who.key}) to {feed.shown}, refreshed when older than "
            f"{feeds.format_duration(fetched.refresh)}."
        )
        typer.echo(line)


@calendar_app.command("feeds", epilog=examples("feeds", "feeds --refresh"))
def feeds_command(
    refresh: Annotated[bool, typer.Option("--refresh", help="Fetch every feed now.")] = False,
    db: DbOption = None,
) -> None:
    """List the subscribed feeds (addresses masked) with their last fetch and its result."""
    with _calendar(db) as conn:
        from scheduler_agent.calendar import feeds

        kept = feeds.list_feeds(conn)
        if not kept:
            typer.echo("No feeds: subscribe with `scheduler-agent calendar subscribe URL --person NAME`.")
            return
        if refresh:
            for feed in kept:
                typer.echo(feeds.refresh(conn, feed))
            kept = feeds.list_feeds(conn)
        for feed in kept:
            fetched = f"{feed.fetched_at:%Y-%m-%d %H:%M} UTC" if feed.fetched_at else "never"
            typer.echo(
                f"#{feed.id}  {feed.person_key}  {feed.shown}  every {feeds.format_duration(feed.refresh)}  "
                f"{feeds.plural(feed.events, 'event')}  last fetch {fetched}: {feed.result}"
            )


register(calendar_app)  # `calendar connect` and `calendar backends` (cli/caldav.py)
