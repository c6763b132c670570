"""`scheduler-agent db ...`: where the database is; and opening it for commands that only read it."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.calendar import connect
from scheduler_agent.cli.core import command, group
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import db_option, default_db_path

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


def mask(location: str) -> str:
    """A database location as it may be printed: the password of a URL (`scheme://user:secret@host`) masked."""
    return re.sub(r"^([A-Za-z][\w+.-]*:/{1,2}[^:/@]*:)[^@]*@", r"\1***@", location)


def existing(db: Path | None) -> sqlite3.Connection:
    """The database for a command that only reads it: a file given with --db that does not exist is refused
    (never created empty); the default file is opened, created if need be, as for any command."""
    if db is not None and not db.exists():
        raise AgentError(
            f"no database at {mask(str(db))}: check the --db path (or SCHEDULER_AGENT_DB); "
            "`scheduler-agent calendar seed-demo --db PATH` makes a new one"
        )
    return connect(db)


@command("path", epilog='Examples:\n\n  scheduler-agent db path\n\n  ls -l "$(scheduler-agent db path)"')
@db_option
@person_facing()
def path_command(db: Path | None) -> None:
    """Print the database file the commands use (--db, SCHEDULER_AGENT_DB, or the default)."""
    click.echo(mask(str(db if db is not None else default_db_path())))
