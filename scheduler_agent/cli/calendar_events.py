"""`scheduler-agent calendar add-event|cancel|show`: the events, and the week with its free windows."""

from __future__ import annotations

from collections.abc import Sequence

import click

from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.events import cancel_event
from scheduler_agent.calendar.opening import open_calendar
from scheduler_agent.calendar.people import get_owner
from scheduler_agent.calendar.slots import format_window
from scheduler_agent.calendar.tools import DEFAULT_MINUTES, CalendarTools, check_minutes
from scheduler_agent.calendar.types import CalendarError
from scheduler_agent.cli.calendar import calendar_session, examples, for_people
from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.options import ID, db_option, json_flag, today_option
from scheduler_agent.cli.terminal import say
from scheduler_agent.session.clock import clock_for
from scheduler_agent.storage.db import Location

minutes_option = click.option(
    "--minutes",
    "minutes",
    metavar="MINUTES",
    type=int,
    default=DEFAULT_MINUTES,
    help="Meeting length in minutes (5-480).",
)


@command(
    "add-event", epilog=examples('add-event --with priya --start 2026-12-07T14:00 --minutes 45 --title "Design review"')
)
@click.option("--with", "with_", metavar="PERSON", required=True, help="The other person: key or name.")
@click.option(
    "--start",
    metavar="YYYY-MM-DDTHH:MM",
    required=True,
    help="YYYY-MM-DDTHH:MM, the owner's local time (or with an offset).",
)
@minutes_option
@click.option("--title", metavar="TITLE", help="Default: 'Meeting with NAME'.")
@click.option(
    "--also", metavar="PERSON", multiple=True, help="Another person invited too: key or name (repeat for more)."
)
@db_option
@today_option
def add_event_command(
    with_: str,
    start: str,
    minutes: int,
    title: str | None,
    also: Sequence[str],
    db: Location | None,
    today: str | None,
) -> None:
    """Book a meeting with the same checks as the agent's create_event tool.

    On the connected CalDAV server when there is one (`calendar connect caldav`), else the local calendar."""
    with calendar_session(db) as conn:
        tools = CalendarTools(conn, clock_for(conn, today), calendar=open_calendar(conn))
        try:
            say(tools.create_event(with_, start, minutes, title, also=list(also) or None))
        except ToolError as exc:
            raise CalendarError(for_people(str(exc))) from None


@command("cancel", epilog=examples("cancel 29"))
@argument("event_id", help="The event's id, the #N that `calendar show` prints.", metavar="ID", type=ID)
@db_option
def cancel_command(event_id: int, db: Location | None) -> None:
    """Cancel (delete) one event, for everyone attending."""
    with calendar_session(db) as conn:
        owner = get_owner(conn)
        event = cancel_event(conn, event_id)
        span = format_window((event.start, event.end), owner.tz)
        when = f"every occurrence from {span}" if event.recurring else f"on {span}"
        say(f"Cancelled {event.title!r} {when} ({owner.tz}) for {', '.join(event.attendees)}. Event id: {event.id}.")


@command(
    "show",
    epilog=examples(
        "show",
        "show --person priya --week 2026-12-07",
        "show --from 2026-12-07T00:00 --to 2026-12-09T00:00",
        "show --person priya --from 2026-12-07T00:00 --to 2026-12-12T00:00 --json",
    ),
)
@click.option("--person", metavar="PERSON", help="Also show this person's events and your shared free time.")
@click.option("--week", metavar="YYYY-MM-DD", help="Any day of the week to show.  [default: the current week]")
@minutes_option
@click.option(
    "--from", "start", metavar="DATETIME", help="From this time instead of a week (owner's zone, or an offset)."
)
@click.option("--to", "end", metavar="DATETIME", help="Until this time.  [default: --from + 7 days]")
@json_flag(help="The busy intervals the agent sees (the person's, or yours), repeating events expanded, as JSON.")
@db_option
@today_option
def show_command(
    person: str | None,
    week: str | None,
    minutes: int,
    start: str | None,
    end: str | None,
    as_json: bool,
    db: Location | None,
    today: str | None,
) -> None:
    """Show a week's events (yours, and the person's) and the free windows you share.

    An event is listed under every day it covers; an all-day event on its own dates."""
    with calendar_session(db) as conn:
        from scheduler_agent.cli.caldav import sync_first

        sync_first(conn)
        owner = get_owner(conn)
        tools = CalendarTools(conn, clock_for(conn, today))
        try:
            other = tools.resolve_person(person, field="--person") if person is not None else None
        except ToolError as exc:  # the tool's text, said to the person (as add-event does)
            raise CalendarError(for_people(str(exc))) from None
        if other is not None:  # their shared calendar, if they have one, synced for the range first
            from scheduler_agent.cli.caldav import sync_people_first
            from scheduler_agent.cli.calendar_range import show_range

            sync_people_first(conn, [other.key], *show_range(tools, owner, week, start, end))
        if as_json:
            from scheduler_agent.cli.calendar_json import busy_json

            click.echo(busy_json(conn, other or owner, owner, tools, week, start, end))
            return
        from scheduler_agent.cli.calendar_range import show_range
        from scheduler_agent.cli.calendar_week import range_lines

        shown = show_range(tools, owner, week, start, end)
        check_minutes(minutes)
        for line in range_lines(conn, tools, owner, other, shown, minutes, week=start is None and end is None):
            say(for_people(line))
