"""`calendar set-owner`, `add-person` and `edit-person`: one person's details as options, each written once."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from typing import Any

import click

from scheduler_agent.cli.options import F

_PERSON_TEXTS = {  # kind -> (--name, --tz, --hours) help, as each command words it
    "owner": (
        "Full name, e.g. 'Ada Lovelace'.",
        "IANA time zone, e.g. Europe/London.",
        "Working hours, local time, Monday to Friday. [default: 09:00-17:00]",
    ),
    "new": (
        "Full name, e.g. 'Ada Lovelace'.",
        "IANA time zone, e.g. Europe/London.",
        "Working hours, local time, Monday to Friday.",
    ),
    "edit": ("Full name.", "IANA time zone.", "Working hours, HH:MM-HH:MM, every weekday."),
}
SCHEDULE_OPTIONS = ("day", "off", "buffer", "lunch")
CONTACT_OPTIONS = ("email", "caldav")


@dataclass(frozen=True)
class PersonChanges:
    """What `set-owner` and `edit-person` were given (None, or empty: leave it as it is)."""

    name: str | None
    tz: str | None
    hours: str | None
    day: Sequence[str]
    off: Sequence[str]
    buffer: int | None
    lunch: str | None
    email: str | None = None  # `edit-person` only, as `add-person` takes them
    caldav: str | None = None


def person_options(kind: str) -> Callable[[F], F]:
    """A person's options: --name, --tz, --hours; for "owner" and "edit" also --day, --off, --buffer,
    --lunch (the schedule); for "new" (`add-person`, required --name and --tz) and "edit" also --email, --caldav."""
    name_help, tz_help, hours_help = _PERSON_TEXTS[kind]
    new = kind == "new"
    options = [
        click.option("--name", "name", metavar="NAME", help=name_help, required=new),
        click.option("--tz", "tz", metavar="ZONE", help=tz_help, required=new),
        click.option(
            "--hours", "hours", metavar="HH:MM-HH:MM", help=hours_help, default="09:00-17:00" if new else None
        ),
    ]
    contact = [
        click.option("--email", "email", help="Their e-mail address: invited (ATTENDEE) to what is booked."),
        click.option(
            "--caldav", "caldav", help="Their CalDAV calendar's URL, shared with you (read access is enough)."
        ),
    ]
    if new:
        options += contact
    else:
        options += [
            click.option(
                "--day",
                "day",
                metavar="DAY=HOURS",
                multiple=True,
                help="One weekday's own hours, or off: mon=10:00-16:00, fri=off (repeat for more days).",
            ),
            click.option(
                "--off",
                "off",
                metavar="DATE",
                multiple=True,
                help="A date off, YYYY-MM-DD (repeat for more); replaces the list.",
            ),
            click.option(
                "--buffer",
                "buffer",
                metavar="MINUTES",
                type=int,
                help="Minutes kept free before and after each meeting (0-120).",
            ),
            click.option(
                "--lunch", "lunch", metavar="HH:MM-HH:MM", help="A daily lunch break, HH:MM-HH:MM; 'none' removes it."
            ),
        ]
        if kind == "edit":  # every option `add-person` takes
            options += contact

    def decorate(command: F) -> F:
        if not new:  # the command receives the changes as one object, `person`
            names = [f.name for f in fields(PersonChanges)]
            inner = command

            @functools.wraps(inner)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                values = {name: kwargs.pop(name) for name in names if name in kwargs}
                return inner(*args, person=PersonChanges(**values), **kwargs)

            command = wrapper  # type: ignore[assignment]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
