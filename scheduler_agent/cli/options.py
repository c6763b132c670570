"""The CLI's shared options, each defined once and accepted after any subcommand that uses it."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.storage.db import default_db_path

__all__ = ["DEFAULT_MAX_ITERATIONS", "DEFAULT_MODEL", "default_db_path"]


DbOption = Annotated[
    Path | None,
    typer.Option(
        "--db",
        envvar="SCHEDULER_AGENT_DB",
        help="SQLite file holding the calendar (default: ~/.local/share/scheduler-agent/scheduler.db).",
        show_default=False,
    ),
]
TodayOption = Annotated[
    str | None,
    typer.Option(
        "--today",
        envvar="SCHEDULER_AGENT_TODAY",
        help="Pin the clock: YYYY-MM-DD (09:00 that day) or YYYY-MM-DDTHH:MM, in the owner's time zone.",
        show_default=False,
    ),
]
ModelOption = Annotated[
    str,
    typer.Option("-m", "--model", envvar="SCHEDULER_AGENT_MODEL", help="The model to ask."),
]
MaxIterationsOption = Annotated[
    int,
    typer.Option(
        "--max-iterations",
        min=1,
        help="At most this many model calls per user turn; the loop then stops with a valid list (exit 3).",
    ),
]
DumpArrayOption = Annotated[
    bool,
    typer.Option("--dump-array", help="Print to stderr the exact messages array sent on each iteration."),
]
DumpArrayFileOption = Annotated[
    Path | None,
    typer.Option(
        "--dump-array-file",
        help="Append one JSON object per iteration: {iteration, messages, request (the whole body)}.",
        show_default=False,
    ),
]
ContinueOption = Annotated[
    bool,
    typer.Option("-c", "--continue", help="Continue the most recent stored conversation."),
]
CidOption = Annotated[
    int | None,
    typer.Option("--cid", help="Continue the stored conversation with this id.", show_default=False),
]
NoStoreOption = Annotated[
    bool,
    typer.Option("--no-store", help="Keep nothing: the conversation is not written to the database."),
]
ContextBudgetOption = Annotated[
    int | None,
    typer.Option(
        "--context-budget",
        min=1,
        help="Send at most about this many tokens of the list: whole old rounds are left out of the request "
        "(never the first user turn, never a call without its result). The stored list is untouched.",
        show_default=False,
    ),
]
ToolDeadlineOption = Annotated[
    float,
    typer.Option(
        "--tool-deadline",
        min=0.1,
        help="Seconds one tool call may take; a booking past it is rolled back and the model is told so.",
    ),
]
RecordOption = Annotated[
    Path | None,
    typer.Option(
        "--record",
        help="Record this session as a cassette (calendar, pinned clock, inputs, API traffic; no secrets) that "
        "`scheduler-agent replay PATH` replays offline.",
        show_default=False,
    ),
]
YesOption = Annotated[
    bool,
    typer.Option("-y", "--yes", help="Approve every booking without asking (otherwise each is asked on stdin)."),
]
UsageOption = Annotated[
    bool,
    typer.Option("-u", "--usage", help="Show tokens per iteration and per turn, cache reads and writes included."),
]
NoStreamOption = Annotated[
    bool,
    typer.Option("--no-stream", help="Wait for each whole reply instead of streaming its text as it is written."),
]
