"""`scheduler-agent db ...`: where the database is; and opening it, for any command (`existing`: for one
that can only act on a calendar already there).
Light on purpose: `conversations list` opens the database with nothing of the calendar's."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import TYPE_CHECKING

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.core import command, group
from scheduler_agent.cli.edge import damaged, driver_error, is_damaged, is_read_only, person_facing, read_only
from scheduler_agent.cli.options import db_option
from scheduler_agent.storage.db import Location, in_use, missing, open_db
from scheduler_agent.storage.dialect import mask

if TYPE_CHECKING:
    from sqlalchemy import Connection

__all__ = ["connect", "existing", "mask", "path_command"]

db_app = group(
    "db",
    "The database file that holds the calendar and the conversations.",
    {
        "path": (
            "scheduler_agent.cli.database:path_command",
            "Print the database file the commands use (--db, SCHEDULER_AGENT_DB, or the default).",
        )
    },
)


def connect(db: Location | None) -> Connection:
    """Open the calendar at `db` (or the default file); CalendarError when it cannot be opened."""
    from sqlalchemy.exc import DBAPIError  # loaded by open_db in any case

    path = in_use(db)
    try:
        return open_db(path)
    except (
        DBAPIError,
        sqlite3.Error,
        OSError,
        UnicodeDecodeError,
    ) as exc:  # the last: a damaged schema page (is_damaged)
        from scheduler_agent.calendar.types import CalendarError

        if is_damaged(exc):
            raise CalendarError(damaged(exc, mask(str(path)))) from None
        if is_read_only(exc):
            raise CalendarError(read_only(exc, mask(str(path)))) from None
        folder = mask(str(Path(str(path)).parent)) if isinstance(path, Path) else "its folder"
        raise CalendarError(
            f"cannot open the calendar database {mask(str(path))} ({driver_error(exc)}): let your user read and write "
            f"the file and its folder {folder} (SQLite keeps a journal beside the file), or give another file with "
            "--db PATH"
        ) from None


def existing(db: Location | None) -> Connection:
    """The database for a command that can only act on a calendar already there (it reads it, or changes what
    it holds): a file given with --db that does not exist is refused, and nothing is created, so a mistyped
    --db is caught each time; the default file is opened, created if need be, as for any command. `connect` is
    for the commands that start a calendar (seed-demo, set-owner, add-person, import, prefs add, ask, chat)."""
    if missing(db):
        raise AgentError(
            f"no database at {mask(str(db))}: check the --db path (or SCHEDULER_AGENT_DB); "
            "`scheduler-agent calendar seed-demo --db PATH` makes a new one"
        )
    return connect(db)


@command("path", epilog='Examples:\n\n  scheduler-agent db path\n\n  ls -l "$(scheduler-agent db path)"')
@db_option
@person_facing()
def path_command(db: Location | None) -> None:
    """Print the database file the commands use (--db, SCHEDULER_AGENT_DB, or the default)."""
    click.echo(mask(str(in_use(db))))
