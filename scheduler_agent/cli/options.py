"""The CLI's shared options, each defined once as a Click option decorator and accepted after any
subcommand that uses it (the way llm's `tool_options` decorator shares them).

Only what the fast commands share is here (`--db`, `--today`, `--json`, ...): the options of the commands
that run the loop are in cli/run_options.py, a person's in cli/person_options.py, so that `calendar show`
and `conversations list` start without importing what those options' defaults come from.
"""

from __future__ import annotations

import functools
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import click

from scheduler_agent.storage.db import Location, default_db_path, in_use
from scheduler_agent.storage.dialect import is_url, mask

__all__ = ["OUTPUT", "SOURCE", "check_outputs", "default_db_path", "refuse_overwriting"]

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
        if mask(str(value)) != str(value):  # taken as it is, but said: others can read a command line
            click.echo(
                f"Warning: the --db URL holds a password ({mask(str(value))}): other users can see a command "
                "line (ps, shell history); put it in PGPASSWORD or ~/.pgpass instead",
                err=True,
            )
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


class Seconds(click.FloatRange):
    """Seconds, at least `least`: a finite number. Click's FloatRange lets `nan` through every bound (no
    comparison with it is true) and `inf` through a lower one, and neither is a time anything can wait."""

    name = "seconds"

    def __init__(self, least: float) -> None:
        super().__init__(min=least)

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        seconds = super().convert(value, param, ctx)
        if not math.isfinite(seconds):
            self.fail(f"{value!r} is not a number of seconds: give one of at least {self.min:g}, e.g. 30", param, ctx)
        return seconds


class OutputFile(click.Path):
    """A file the command writes, named by the person (`--html`, `--out`, `-o`, `--dump-array-file`,
    `--record`). Checked by `check_outputs` before the command runs, against the command's other files."""

    name = "output"

    def __init__(self) -> None:
        super().__init__(path_type=Path)


class SourceName(click.types.StringParamType):
    """An argument that may name a file the command reads (`view SOURCE`: a file, or a conversation id)."""

    name = "source"


OUTPUT = OutputFile()
SOURCE = SourceName()
SQLITE_HEADER = b"SQLite format 3\x00"


def _is_sqlite(path: Path) -> bool:
    if not path.is_file():  # a pipe or /dev/null is written to as it is, never read here
        return False
    try:
        with path.open("rb") as file:
            return file.read(len(SQLITE_HEADER)) == SQLITE_HEADER
    except OSError:
        return False  # unreadable: writing it says why, if it fails


def _same_file(one: Path, other: Path) -> bool:
    """Whether two paths name one file: the same inode (hard and symbolic links included) when both exist;
    the same resolved path when neither does yet (a database a command is about to create)."""
    if one.exists() and other.exists():
        try:
            return os.path.samefile(one, other)
        except OSError:
            return False
    return not one.exists() and not other.exists() and one.resolve() == other.resolve()


def _refused(message: str) -> click.ClickException:
    from scheduler_agent.cli.terminal import visible  # a path may hold control characters

    return click.ClickException(visible(message))


def refuse_overwriting(output: Path, what: str, others: dict[str, Path]) -> None:
    """Refuse, before anything runs, an output file that would lose something: one that is a folder (a usage
    error, exit 2), whose folder does not exist (no folder is made for a path you give), that is an SQLite
    database, or that is the same file as one of `others` (what names each: the input, the database, ...).
    An ordinary existing file may be overwritten."""
    if output.is_dir():
        raise click.BadParameter(f"{output} is a folder: give a file to write, e.g. {output / 'out'}", param_hint=what)
    folder = output.parent
    if not folder.is_dir():
        raise _refused(
            f"{what} {output}: the folder {folder} does not exist. scheduler-agent makes no folders for a path "
            "you give: create it first, or give a path in a folder that exists"
        )
    for name, other in others.items():
        if _same_file(output, other):
            raise _refused(f"{what} {output} is {name} ({other}): writing it would lose it; give another file")
    if _is_sqlite(output):
        raise _refused(f"{what} {output} is an SQLite database: writing it would lose it; give another file")


def _named(param: click.Parameter) -> str:
    """`--html`, `-o`, `SOURCE`: the parameter as a person typed it (an option's shortest name)."""
    return min(param.opts, key=len) if isinstance(param, click.Option) else param.human_readable_name


def _files(ctx: click.Context) -> Iterator[tuple[click.Parameter, str, Path]]:
    """Each file the command's parameters name, with what it is: an output, the database, or an input."""
    for param in ctx.command.get_params(ctx):
        value = ctx.params.get(param.name or "")
        hint = _named(param)
        if isinstance(param.type, DbLocation):
            db = in_use(value)
            if isinstance(db, Path):
                yield param, "the database in use", db
        elif value is None:
            continue
        elif isinstance(param.type, OutputFile):
            yield param, f"the file of {hint}", Path(value)  # two outputs in one file: one would be lost
        elif isinstance(param.type, click.Path | SourceName) and Path(value).is_file():
            yield param, f"the input {hint}", Path(value)


def check_outputs(ctx: click.Context) -> None:
    """Every output file of the command, refused (see `refuse_overwriting`) before the command runs: called
    by cli/core.py's Command for each command, so no option that writes a file can skip it."""
    files = list(_files(ctx))
    for param, _, output in files:
        if isinstance(param.type, OutputFile):
            others = {name: path for other, name, path in files if other is not param}
            refuse_overwriting(output, _named(param), others)


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
    type=OUTPUT,
    metavar="PATH",
    help="Append one JSON object per iteration: {iteration, messages, request (the whole body)}.",
)
html_option = click.option(
    "--html",
    "html",
    type=OUTPUT,
    metavar="FILE",
    help="Also write the trace viewer's page (one self-contained HTML file) to FILE.",
)
json_flag = functools.partial(click.option, "--json", "as_json", is_flag=True)


def dump_options(command: F) -> F:
    """--dump-array and --dump-array-file, for every command that sends or replays requests."""
    return dump_array_option(dump_array_file_option(command))
