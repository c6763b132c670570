"""The CLI's edge: where every failure a person can meet becomes one line on stderr and an exit code.

Caught once, here, never inside the loop or the tools: a traceback never reaches a person.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager

import typer

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.calendar.store import CalendarError


def fail(message: str, code: int) -> None:
    typer.echo(f"Error: {message}", err=True)
    raise typer.Exit(code)


@contextmanager
def person_facing() -> Iterator[None]:
    """Use as `with person_facing():` or as a decorator on a command."""
    try:
        yield
    except AgentError as exc:
        fail(str(exc), exc.exit_code)
    except (CalendarError, ToolError, ValueError) as exc:
        fail(str(exc), 1)
    except sqlite3.Error as exc:  # e.g. still locked by another process after the busy timeout
        fail(f"the calendar database failed ({exc}); try again, or give another file with --db", 1)
    except KeyboardInterrupt:
        fail("Interrupted.", 130)
