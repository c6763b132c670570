"""The CLI's shared options, each defined once as a Click option decorator and accepted after any
subcommand that uses it (the way llm's `tool_options` decorator shares them).

Only what the fast commands share is here (`--db`, `--today`, `--json`, ...): the options of the commands
that run the loop are in cli/run_options.py, a person's in cli/person_options.py, so that `calendar show`
and `conversations list` start without importing what those options' defaults come from.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from scheduler_agent.storage.db import Location, default_db_path
from scheduler_agent.storage.dialect import is_url

__all__ = ["default_db_path"]

F = TypeVar("F", bound=Callable[..., Any])
PATH = click.Path(path_type=Path)


if TYPE_CHECKING:  # generic in the Click these checks run with, and not in every Click 8.2+
    _ParamType = click.ParamType[Location, Any]
    _IdType = click.ParamType[int, Any]
else:
    _ParamType = _IdType = click.ParamType

LARGEST_ID = 2**63 - 1  # SQLite's largest INTEGER: a larger id cannot even be looked up


class DbLocation(_ParamType):
    """--db: a SQLite file (a Path), or a PostgreSQL URL (kept a str: a Path would fold its `//`)."""

    name = "db"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Location:
        if isinstance(value, Path) or not is_url(str(value)):
            return Path(value)
        return str(value)


class StoredId(_IdType):
    """A stored row's id (a conversation, an event): a whole number from 1 to SQLite's largest INTEGER,
    so that a mistyped huge id is a usage error here rather than an OverflowError in the query."""

    name = "id"

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> int:
        try:
            number = value if isinstance(value, int) and not isinstance(value, bool) else int(str(value).strip())
        except ValueError:
            self.fail(f"{value!r} is not an id: give a whole number from 1 to {LARGEST_ID}", param, ctx)
        if not 1 <= number <= LARGEST_ID:
            self.fail(f"{value} is not an id: an id is a whole number from 1 to {LARGEST_ID}", param, ctx)
        return number


ID = StoredId()

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
