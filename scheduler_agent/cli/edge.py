"""The CLI's edge: where every failure a person can meet becomes one line on stderr and an exit code.

Caught once, here, never inside the loop or the tools. What is meant for people (an `AgentError`,
a `ToolError` from a command that books as the model does, a database still locked) is one line and
its exit code. Anything else is a bug: it gets one line saying so, and its traceback goes to a file
(or to stderr with SCHEDULER_AGENT_DEBUG=1), never to the screen unasked.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, NoReturn

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.storage.db import data_dir, in_use
from scheduler_agent.storage.files import make_data_folder

DEBUG_VARIABLE = "SCHEDULER_AGENT_DEBUG"
# An optional dependency a command needs, and the extra that installs it.
EXTRAS = {"temporalio": "temporal", "psycopg": "postgres", "caldav": "caldav", "mcp": "mcp"}


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
        if came_from_ctrl_c(exc):  # e.g. Python's "Error calling __set_name__", when the Ctrl-C landed in a class body
            fail("Interrupted.", 130)
        elif is_tool_error(exc):
            fail(str(exc), 1)
        elif isinstance(exc, ModuleNotFoundError) and (exc.name or "").split(".")[0] in EXTRAS:
            module = (exc.name or "").split(".")[0]
            fail(
                f"this command needs {module}, which is not installed: pip install 'scheduler-agent[{EXTRAS[module]}]'",
                1,
            )
        elif is_damaged(exc):  # wherever it surfaced: opening, reading half a week, writing
            fail(damaged(exc, command_database()), 1)
        elif is_read_only(exc):
            fail(read_only(exc, command_database()), 1)
        elif is_operational(exc):  # e.g. still locked by another process after the timeout
            fail(f"the calendar database failed ({driver_error(exc)}); try again, or give another file with --db", 1)
        elif os.environ.get(DEBUG_VARIABLE) == "1":
            raise
        where = save_traceback(exc)
        fail(
            f"internal error ({type(exc).__name__}: {exc}). This is a bug in scheduler-agent: please report it, "
            f"with the traceback in {where} ({DEBUG_VARIABLE}=1 prints it instead)",
            1,
        )


class Unraisable:
    """`sys.unraisablehook`: what Python could not raise (in a `__del__` or a weakref callback), for a person.

    A Ctrl-C whose KeyboardInterrupt landed in one (the import system's callback for a module lock, say)
    would be lost, and the program would go on as if no key was pressed. While the program runs, SIGINT is
    sent to the main thread again, a moment later, so that the program's own handling of Ctrl-C meets it:
    sent at once, it would land in this hook, where Python cannot raise it either.

    An SDK client cut short by Ctrl-C while it was being built fails again in its `__del__` at exit
    (`'SyncHttpxClientWrapper' object has no attribute '_state'`): that says nothing to a person."""

    AGAIN_AFTER = 0.02  # seconds: long enough for the main thread to be out of the finaliser

    def __init__(self) -> None:
        self.running = True

    def __call__(self, unraisable: Any) -> None:
        if isinstance(unraisable.exc_value, KeyboardInterrupt):
            if self.running:
                threading.Thread(target=self._again, args=(threading.main_thread(),), daemon=True).start()
            return
        where = getattr(unraisable.object, "__module__", "") or ""
        if not where.startswith(("anthropic", "httpx")):
            sys.__unraisablehook__(unraisable)

    def _again(self, main: threading.Thread) -> None:
        time.sleep(self.AGAIN_AFTER)
        if self.running and main.ident is not None:
            signal.pthread_kill(main.ident, signal.SIGINT)  # wakes a main thread waiting in a system call


def closed_pipe() -> NoReturn:
    """Exit quietly, as the Python docs advise on SIGPIPE: stdout is pointed at devnull first, so that the
    interpreter's flush of what is still buffered at exit does not fail a second time."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):  # no file descriptor behind stdout (a test's capture): nothing to flush there
        pass
    raise click.exceptions.Exit(1)


def driver_error(exc: BaseException) -> BaseException:
    """The database driver's own error behind `exc` (SQLAlchemy raises it wrapped, as `.orig`), or `exc`."""
    wrapped = sys.modules.get("sqlalchemy.exc")  # loaded whenever a database was opened
    if wrapped is not None and isinstance(exc, wrapped.DBAPIError) and exc.orig is not None:
        orig: BaseException = exc.orig
        return orig
    return exc


def is_operational(exc: BaseException) -> bool:
    """A database's statement could not run (locked past the busy timeout, the server went away)."""
    wrapped = sys.modules.get("sqlalchemy.exc")
    return isinstance(driver_error(exc), sqlite3.OperationalError) or (
        wrapped is not None and isinstance(exc, wrapped.OperationalError)
    )


_SQLITE_DAMAGE = (b"malformed database schema", b"database disk image is malformed", b"file is not a database")


def is_damaged(exc: BaseException) -> bool:
    """SQLite found the file itself damaged: "database disk image is malformed" (SQLITE_CORRUPT and its
    extended codes) or "file is not a database" (SQLITE_NOTADB). Never a PostgreSQL error: SQLite alone names them.

    A damaged schema page makes SQLite's message quote the damaged bytes, which Python's sqlite3 cannot decode:
    it raises a UnicodeDecodeError of that message instead, and that is the same damaged file."""
    if isinstance(exc, UnicodeDecodeError):
        return isinstance(exc.object, bytes) and exc.object.startswith(_SQLITE_DAMAGE)
    exc = driver_error(exc)
    name = getattr(exc, "sqlite_errorname", None) or ""
    return isinstance(exc, sqlite3.DatabaseError) and name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))


def damaged(exc: BaseException, path: object | None) -> str:
    """The one line for a damaged database file, with what to do about it; a file that is no SQLite database at
    all (a text file given as --db) is said to be that, since there is nothing in it to recover."""
    named = f" {path}" if path is not None else ""
    file = path if path is not None else "FILE"
    exc = driver_error(exc)
    if (getattr(exc, "sqlite_errorname", None) or "").startswith("SQLITE_NOTADB"):
        return (
            f"the file{named} is not a SQLite database ({exc}): give the calendar's database file with --db "
            "(`scheduler-agent db path` shows the default one)"
        )
    said = bytes(exc.object).decode("utf-8", "replace") if isinstance(exc, UnicodeDecodeError) else str(exc)
    return (
        f"the database file{named} is damaged ({said}): restore a copy you kept, or save what can be read with "
        f"`sqlite3 {file} .recover | sqlite3 recovered.db` and give that file with --db"
    )


def is_read_only(exc: BaseException) -> bool:
    """SQLite may not write the file: it or its folder is read-only for this user (SQLITE_READONLY)."""
    exc = driver_error(exc)
    name = getattr(exc, "sqlite_errorname", None) or ""
    return isinstance(exc, sqlite3.OperationalError) and name.startswith("SQLITE_READONLY")


def read_only(exc: BaseException, path: object | None) -> str:
    """The one line for a database this user may not write, with what to change."""
    file = path if path is not None else "FILE"
    folder = Path(str(path)).parent if path is not None else "its folder"
    return (
        f"the database file {file} cannot be written ({driver_error(exc)}): let your user write both the file and "
        f"its folder {folder} (SQLite keeps a journal beside the file), e.g. `chmod u+w {file} {folder}`, or give "
        "another file with --db"
    )


def command_database() -> object | None:
    """The database file the running command was given (--db), or the default one; None outside a command."""
    ctx = click.get_current_context(silent=True)
    if ctx is None:
        return None
    return in_use(ctx.params.get("db"))


def came_from_ctrl_c(exc: BaseException) -> bool:
    """A KeyboardInterrupt that code in between re-raised as another exception (`raise ... from`): still a Ctrl-C.

    Only a stated cause counts: an error raised while a Ctrl-C was being handled is a bug of its own."""
    cause: BaseException | None = exc
    for _ in range(100):  # a chain long enough to be a loop is not worth following
        if cause is None:
            return False
        if isinstance(cause, KeyboardInterrupt):
            return True
        cause = cause.__cause__
    return False


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
