"""The CLI's shared options, each defined once and accepted after any subcommand that uses it."""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS
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


# --- groups of options, each defined once (the way llm's `tool_options` decorator shares them) -----


@dataclass(frozen=True)
class RunOptions:
    """What every command that runs the loop takes: `ask`, `chat` and `resume`."""

    db: Path | None = None
    today: str | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    yes: bool = False
    usage: bool = False
    tool_deadline: float = TOOL_DEADLINE_SECONDS
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


_ANNOTATIONS: dict[str, Any] = {
    "db": DbOption,
    "today": TodayOption,
    "max_iterations": MaxIterationsOption,
    "yes": YesOption,
    "usage": UsageOption,
    "tool_deadline": ToolDeadlineOption,
    "dump_array": DumpArrayOption,
    "dump_array_file": DumpArrayFileOption,
    "model": ModelOption,
    "continue_last": ContinueOption,
    "cid": CidOption,
    "no_store": NoStoreOption,
    "no_stream": NoStreamOption,
    "context_budget": ContextBudgetOption,
    "record": RecordOption,
}

F = TypeVar("F", bound=Callable[..., Any])


def _group(keyword: str, group: type[RunOptions] | type[TurnOptions]) -> Callable[[F], F]:
    """A decorator adding `group`'s options to a command, which receives them as one object, `keyword`."""
    names = [f.name for f in fields(group)]

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)
        own = [p for p in signature.parameters.values() if p.name != keyword]
        added = [
            inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=getattr(group(), name), annotation=kind)
            for name, kind in _ANNOTATIONS.items()
            if name in names
        ]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            return command(*args, **{keyword: group(**values)}, **kwargs)

        del wrapper.__wrapped__  # Typer reads the signature below, not the command's own
        wrapper.__signature__ = signature.replace(parameters=[*own, *added])  # type: ignore[attr-defined]
        wrapper.__annotations__ = {p.name: p.annotation for p in [*own, *added]}
        return wrapper  # type: ignore[return-value]

    return decorate


run_options = _group("run", RunOptions)
turn_options = _group("turn", TurnOptions)
