"""`scheduler-agent db ...`: where the database is; and opening it for commands that only read it."""

from __future__ import annotations

import re
from pathlib import Path

import typer

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.calendar import connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import DbOption, default_db_path
from scheduler_agent.storage.db import Connection

db_app = typer.Typer(
    name="db",
    help="The database file that holds the calendar and the conversations.",
    no_args_is_help=True,
    add_completion=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def mask(location: str) -> str:
    """A database location as it may be printed: the password of a URL (`scheme://user:secret@host`) masked."""
    return re.sub(r"^([A-Za-z][\w+.-]*:/{1,2}[^:/@]*:)[^@]*@", r"\1***@", location)


def existing(db: Path | None) -> Connection:
    """The database for a command that only reads it: a file given with --db that does not exist is refused
    (never created empty); the default file is opened, created if need be, as for any command."""
    if db is not None and not db.exists():
        raise AgentError(
            f"no database at {mask(str(db))}: check the --db path (or SCHEDULER_AGENT_DB); "
            "`scheduler-agent calendar seed-demo --db PATH` makes a new one"
        )
    return connect(db)


@db_app.command("path", epilog='Examples:\n\n  scheduler-agent db path\n\n  ls -l "$(scheduler-agent db path)"')
@person_facing()
def path_command(db: DbOption = None) -> None:
    """Print the database file the commands use (--db, SCHEDULER_AGENT_DB, or the default)."""
    typer.echo(mask(str(db if db is not None else default_db_path())))
