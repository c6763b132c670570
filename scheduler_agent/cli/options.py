"""The CLI's shared options, each defined once as a Click option decorator and accepted after any
subcommand that uses it (the way llm's `tool_options` decorator shares them)."""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS
from scheduler_agent.api.timeouts import DEFAULT_TIMEOUT_SECONDS
from scheduler_agent.storage.db import Location, default_db_path
from scheduler_agent.storage.dialect import is_url

__all__ = ["DEFAULT_MAX_ITERATIONS", "DEFAULT_MODEL", "default_db_path"]

F = TypeVar("F", bound=Callable[..., Any])
PATH = click.Path(path_type=Path)


if TYPE_CHECKING:  # generic in the Click these checks run with, and not in every Click 8.2+
    _ParamType = click.ParamType[Location, Any]
else:
    _ParamType = click.ParamType


class DbLocation(_ParamType):
    """--db: a SQLite file (a Path), or a PostgreSQL URL (kept a str: a Path would fold its `//`)."""

    name = "db"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Location:
        if isinstance(value, Path) or not is_url(str(value)):
            return Path(value)
        return str(value)


db_option = click.option(
    "--db",
    "db",
    type=DbLocation(),
    metavar="PATH|URL",
    envvar="SCHEDULER_AGENT_DB",
    show_envvar=True,
    help="SQLite file holding the calendar and conversations (default: ~/.local/share/scheduler-agent/"
    "scheduler.db), or a PostgreSQL database: postgresql://USER@HOST/DBNAME (password in PGPASSWORD or "
    "~/.pgpass, not in the URL).",
)
today_option = click.option(
    "--today",
    "today",
    metavar="DATE[THH:MM]",
    envvar="SCHEDULER_AGENT_TODAY",
    show_envvar=True,
    help="Pin the clock: YYYY-MM-DD (09:00 that day) or YYYY-MM-DDTHH:MM, in the owner's time zone.",
)
model_option = click.option(
    "-m",
    "--model",
    "model",
    metavar="MODEL",
    envvar="SCHEDULER_AGENT_MODEL",
    show_envvar=True,
    default=DEFAULT_MODEL,
    help="The model to ask.",
)
max_iterations_option = click.option(
    "--max-iterations",
    "max_iterations",
    metavar="N",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_ITERATIONS,
    help="At most this many model calls per user turn (for `resume`: this many more); the loop then stops "
    "with a valid list (exit 3).",
)
dump_array_option = click.option(
    "--dump-array", "dump_array", is_flag=True, help="Print to stderr the exact messages array sent on each iteration."
)
dump_array_file_option = click.option(
    "--dump-array-file",
    "dump_array_file",
    type=PATH,
    metavar="PATH",
    help="Append one JSON object per iteration: {iteration, messages, request (the whole body)}.",
)
continue_option = click.option(
    "-c", "--continue", "continue_last", is_flag=True, help="Continue the most recent stored conversation."
)
cid_option = click.option("--cid", "cid", type=int, metavar="ID", help="Continue the stored conversation with this id.")
no_store_option = click.option(
    "-n", "--no-store", "no_store", is_flag=True, help="Keep nothing: the conversation is not written to the database."
)
context_budget_option = click.option(
    "--context-budget",
    "context_budget",
    metavar="TOKENS",
    type=click.IntRange(min=1),
    help="Send at most about this many tokens, the system prompt and the tool definitions included: whole "
    "old rounds of the list are left out of the request (never the first user turn, never a call without "
    "its result). The stored list is untouched.",
)
tool_deadline_option = click.option(
    "--tool-deadline",
    "tool_deadline",
    metavar="SECONDS",
    type=click.FloatRange(min=0.1),
    default=TOOL_DEADLINE_SECONDS,
    help="Seconds one tool call may take; a booking past it is rolled back and the model is told so.",
)
record_option = click.option(
    "--record",
    "record",
    type=PATH,
    metavar="PATH",
    help="Record this session as a cassette (calendar, pinned clock, inputs, API traffic; no secrets) that "
    "`scheduler-agent replay PATH` replays offline.",
)
yes_option = click.option(
    "-y",
    "--yes",
    "yes",
    is_flag=True,
    help="Approve every booking and move without asking (otherwise each is asked on stdin). "
    "Never approves a cancellation: see --yes-cancel.",
)
yes_cancel_option = click.option(
    "--yes-cancel",
    "yes_cancel",
    is_flag=True,
    help="Also approve cancellations without asking. Without it each cancellation is asked on stdin, even with --yes.",
)
no_invites_option = click.option(
    "--no-invites",
    "no_invites",
    is_flag=True,
    help="On a CalDAV calendar: book with SCHEDULE-AGENT=CLIENT, so the server e-mails no invitations "
    "(whatever `calendar connect` chose).",
)
usage_option = click.option(
    "-u",
    "--usage",
    "usage",
    is_flag=True,
    help="Show tokens per iteration and per turn, cache reads and writes included.",
)
timeout_option = click.option(
    "--timeout",
    "timeout",
    metavar="FLOAT",
    envvar="SCHEDULER_AGENT_TIMEOUT",
    show_envvar=True,
    type=click.FloatRange(min=0.1),
    default=DEFAULT_TIMEOUT_SECONDS,
    help="Seconds one request to the model may take in all, retries and their waits included; a reply that "
    "stalls is given up on then (exit 5) and the conversation stays as it was.",
)
no_stream_option = click.option(
    "--no-stream",
    "no_stream",
    is_flag=True,
    help="Wait for each whole reply instead of streaming its text as it is written.",
)
html_option = click.option(
    "--html",
    "html",
    type=PATH,
    metavar="FILE",
    help="Also write the trace viewer's page (one self-contained HTML file) to FILE.",
)
json_flag = functools.partial(click.option, "--json", "as_json", is_flag=True)


def dump_options(command: F) -> F:
    """--dump-array and --dump-array-file, for every command that sends or replays requests."""
    return dump_array_option(dump_array_file_option(command))


# --- groups of options, each defined once (the way llm's `tool_options` decorator shares them) -----


@dataclass(frozen=True)
class RunOptions:
    """What every command that runs the loop takes: `ask`, `chat` and `resume`."""

    db: Location | None = None
    today: str | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    yes: bool = False
    yes_cancel: bool = False
    no_invites: bool = False
    usage: bool = False
    tool_deadline: float = TOOL_DEADLINE_SECONDS
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    dump_array: bool = False
    dump_array_file: Path | None = None


@dataclass(frozen=True)
class TurnOptions:
    """What a command that starts a user turn takes besides: `ask` and `chat`."""

    model: str = DEFAULT_MODEL
    continue_last: bool = False
    cid: int | None = None
    no_store: bool = False
    no_stream: bool = False
    context_budget: int | None = None
    record: Path | None = None


_OPTIONS: dict[str, Callable[[F], F]] = {
    "db": db_option,
    "today": today_option,
    "max_iterations": max_iterations_option,
    "yes": yes_option,
    "yes_cancel": yes_cancel_option,
    "no_invites": no_invites_option,
    "usage": usage_option,
    "tool_deadline": tool_deadline_option,
    "timeout": timeout_option,
    "dump_array": dump_array_option,
    "dump_array_file": dump_array_file_option,
    "model": model_option,
    "continue_last": continue_option,
    "cid": cid_option,
    "no_store": no_store_option,
    "no_stream": no_stream_option,
    "context_budget": context_budget_option,
    "record": record_option,
}


def _group(keyword: str, group: type[RunOptions] | type[TurnOptions]) -> Callable[[F], F]:
    """A decorator adding `group`'s options to a command, which receives them as one object, `keyword`."""
    names = [f.name for f in fields(group)]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            return command(*args, **{keyword: group(**values)}, **kwargs)

        for name in reversed(names):  # Click lists the options in the order they are written here
            wrapper = _OPTIONS[name](wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


run_options = _group("run", RunOptions)
turn_options = _group("turn", TurnOptions)


# `calendar set-owner`, `add-person` and `edit-person`: one person's details, each option written once.
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


def person_options(kind: str) -> Callable[[F], F]:
    """A person's options: --name, --tz, --hours; for "owner" and "edit" also --day, --off, --buffer,
    --lunch (the schedule); for "new" (`add-person`, required --name and --tz) also --email, --caldav."""
    name_help, tz_help, hours_help = _PERSON_TEXTS[kind]
    new = kind == "new"
    options = [
        click.option("--name", "name", metavar="NAME", help=name_help, required=new),
        click.option("--tz", "tz", metavar="ZONE", help=tz_help, required=new),
        click.option(
            "--hours", "hours", metavar="HH:MM-HH:MM", help=hours_help, default="09:00-17:00" if new else None
        ),
    ]
    if new:
        options += [
            click.option("--email", "email", help="Their e-mail address: invited (ATTENDEE) to what is booked."),
            click.option(
                "--caldav", "caldav", help="Their CalDAV calendar's URL, shared with you (read access is enough)."
            ),
        ]
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

    def decorate(command: F) -> F:
        if not new:  # the command receives the changes as one object, `person`
            names = [f.name for f in fields(PersonChanges)]
            inner = command

            @functools.wraps(inner)
            def wrapper(*args: Any, **kwargs: Any) -> Any:
                values = {name: kwargs.pop(name) for name in names}
                return inner(*args, person=PersonChanges(**values), **kwargs)

            command = wrapper  # type: ignore[assignment]
        for option in reversed(options):
            command = option(command)
        return command

    return decorate
