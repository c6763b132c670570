"""The CLI's edge: where every failure a person can meet becomes one line on stderr and an exit code.

Caught once, here, never inside the loop or the tools. What is meant for people (an `AgentError`,
a `ToolError` from a command that books as the model does, a database still locked) is one line and
its exit code. Anything else is a bug: it gets one line saying so, and its traceback goes to a file
(or to stderr with SCHEDULER_AGENT_DEBUG=1), never to the screen unasked.
"""

from __future__ import annotations

import os
import sqlite3
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import NoReturn

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.storage.db import data_dir, in_use
from scheduler_agent.storage.files import make_data_folder

DEBUG_VARIABLE = "SCHEDULER_AGENT_DEBUG"


def fail(message: str, code: int) -> None:
    from scheduler_agent.cli.terminal import visible  # a message may quote the model or a calendar file

    click.echo(f"Error: {visible(message)}", err=True)
    raise click.exceptions.Exit(code)


@contextmanager
def person_facing() -> Iterator[None]:
    """Use as `with person_facing():` or as a decorator on a command."""
    try:
        yield
    except (click.exceptions.Exit, click.Abort, click.ClickException):
        raise  # Click's own ways out: an exit code, a usage error
    except AgentError as exc:
        fail(str(exc), exc.exit_code)
    except KeyboardInterrupt:
        fail("Interrupted.", 130)
    except BrokenPipeError:  # the reader of our output went away (`| head -1`): normal, and nothing to say
        closed_pipe()
    except Exception as exc:
        if is_tool_error(exc):
            fail(str(exc), 1)
        elif is_damaged(exc):  # wherever it surfaced: opening, reading half a week, writing
            fail(damaged(exc, command_database()), 1)
        elif isinstance(exc, sqlite3.OperationalError):  # e.g. still locked by another process after the timeout
            fail(f"the calendar database failed ({exc}); try again, or give another file with --db", 1)
        elif os.environ.get(DEBUG_VARIABLE) == "1":
            raise
        where = save_traceback(exc)
        fail(
            f"internal error ({type(exc).__name__}: {exc}). This is a bug in scheduler-agent: please report it, "
            f"with the traceback in {where} ({DEBUG_VARIABLE}=1 prints it instead)",
            1,
        )


def closed_pipe() -> NoReturn:
    """Exit quietly, as the Python docs advise on SIGPIPE: stdout is pointed at devnull first, so that the
    interpreter's flush of what is still buffered at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind stdout (a test's capture): nothing to flush there
        pass
    raise click.exceptions.Exit(1)


def is_damaged(exc: BaseException) -> bool:
    """SQLite found the file itself damaged: "database disk image is malformed" (SQLITE_CORRUPT and its
    extended codes) or "file is not a database" (SQLITE_NOTADB). Never a PostgreSQL error: SQLite alone names them."""
    name = getattr(exc, "sqlite_errorname", None) or ""
    return isinstance(exc, sqlite3.DatabaseError) and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def damaged(exc: BaseException, path: object | None) -> str:
    """The one line for a damaged database file, with what to do about it."""
    named = f" {path}" if path is not None else ""
    file = path if path is not None else "FILE"
    return (
        f"the database file{named} is damaged ({exc}): restore a copy you kept, or save what can be read with "
        f"`sqlite3 {file} .recover | sqlite3 recovered.db` and give that file with --db"
    )


def command_database() -> object | None:
    """The database file the running command was given (--db), or the default one; None outside a command."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    return in_use(ctx.params.get("db"))


def is_tool_error(exc: BaseException) -> bool:
    """A `ToolError` (a command that books as the model does), judged without importing the tools' module:
    none can have been raised unless agent/toolbox.py was imported, and the fast commands never import it."""
    toolbox = sys.modules.get("scheduler_agent.agent.toolbox")
    return toolbox is not None and isinstance(exc, toolbox.ToolError)


def save_traceback(exc: BaseException) -> Path:
    """Write the traceback to `last-error.txt` in the data folder (0600, never through a symlink), or else to a
    new file of the user's own in the temporary folder: a fixed name there could be another user's planted link."""
    import traceback

    text = "".join(traceback.format_exception(exc))
    for where in (_in_data_folder, _new_temporary_file):
        try:
            descriptor, path = where()
            with os.fdopen(descriptor, "w", encoding="utf-8") as out:
                out.write(text)
            return path
        except OSError:
            continue
    return Path("(nowhere: the data folder and the temporary folder are not writable)")


def _in_data_folder() -> tuple[int, Path]:
    folder = data_dir()
    make_data_folder(folder)
    path = folder / "last-error.txt"
    return os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600), path


def _new_temporary_file() -> tuple[int, Path]:
    import tempfile

    descriptor, name = tempfile.mkstemp(prefix="scheduler-agent-error-", suffix=".txt")  # O_EXCL, 0600, ours
    return descriptor, Path(name)
