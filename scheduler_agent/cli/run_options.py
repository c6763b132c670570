"""The options of the commands that run the loop (`ask`, `chat`, `resume`, and the workers' commands), each
defined once as a Click option decorator; and the groups of them that each command receives as one object."""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

import click

from scheduler_agent.agent.request import DEFAULT_MAX_ITERATIONS, DEFAULT_MODEL
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS
from scheduler_agent.api.timeouts import DEFAULT_TIMEOUT_SECONDS
from scheduler_agent.cli.options import (
    ID,
    OUTPUT,
    F,
    Seconds,
    db_option,
    dump_array_file_option,
    dump_array_option,
    today_option,
)
from scheduler_agent.storage.db import Location

__all__ = ["DEFAULT_MAX_ITERATIONS", "DEFAULT_MODEL", "run_options", "turn_options"]


def _check_model(ctx: click.Context, param: click.Parameter, value: str) -> str:
    """`-m NAME`: a warning when NAME is not a model `scheduler-agent models` lists (it is still sent). Checked
    only when -m is given: the price table takes about a second to load."""
    from click.core import ParameterSource

    if ctx.get_parameter_source(param.name or "") is ParameterSource.COMMANDLINE:
        from scheduler_agent.api.models import is_known

        if not is_known(value):
            click.echo(
                f"Warning: {value!r} is not one of the models `scheduler-agent models` lists; it is sent as given",
                err=True,
            )
    return value


model_option = click.option(
    "-m",
    "--model",
    "model",
    metavar="MODEL",
    envvar="SCHEDULER_AGENT_MODEL",
    show_envvar=True,
    default=DEFAULT_MODEL,
    callback=_check_model,
    help="The model to ask (`scheduler-agent models` lists them; another name is sent with a warning).",
)
max_iterations_option = click.option(
    "--max-iterations",
    "max_iterations",
    metavar="N",
    type=click.IntRange(min=1),
    default=DEFAULT_MAX_ITERATIONS,
    help="At most this many model calls per user turn (for `resume`: this many more); the loop then stops "
    "with a valid list (exit 3).",
)
continue_option = click.option(
    "-c", "--continue", "continue_last", is_flag=True, help="Continue the most recent stored conversation."
)
cid_option = click.option("--cid", "cid", type=ID, metavar="ID", help="Continue the stored conversation with this id.")
no_store_option = click.option(
    "-n", "--no-store", "no_store", is_flag=True, help="Keep nothing: the conversation is not written to the database."
)
context_budget_option = click.option(
    "--context-budget",
    "context_budget",
    metavar="TOKENS",
    type=click.IntRange(min=1),
    help="Send at most about this many tokens, the system prompt and the tool definitions included: whole "
    "old rounds of the list are left out of the request (never the first user turn, never a call without "
    "its result). The stored list is untouched.",
)
tool_deadline_option = click.option(
    "--tool-deadline",
    "tool_deadline",
    metavar="SECONDS",
    type=Seconds(0.1),
    default=TOOL_DEADLINE_SECONDS,
    help="Seconds one tool call may take; a booking past it is rolled back and the model is told so.",
)
record_option = click.option(
    "--record",
    "record",
    type=OUTPUT,
    metavar="PATH",
    help="Record this session as a cassette (calendar, pinned clock, inputs, API traffic; no secrets) that "
    "`scheduler-agent replay PATH` replays offline.",
)
yes_option = click.option(
    "-y",
    "--yes",
    "yes",
    is_flag=True,
    help="Approve every booking and move without asking (otherwise each is asked on stdin). "
    "Never approves a cancellation: see --yes-cancel.",
)
yes_cancel_option = click.option(
    "--yes-cancel",
    "yes_cancel",
    is_flag=True,
    help="Also approve cancellations without asking. Without it each cancellation is asked on stdin, even with --yes.",
)
no_invites_option = click.option(
    "--no-invites",
    "no_invites",
    is_flag=True,
    help="On a CalDAV calendar: book with SCHEDULE-AGENT=CLIENT, so the server e-mails no invitations "
    "(whatever `calendar connect` chose).",
)
usage_option = click.option(
    "-u",
    "--usage",
    "usage",
    is_flag=True,
    help="Show tokens per iteration and per turn, cache reads and writes included.",
)
timeout_option = click.option(
    "--timeout",
    "timeout",
    metavar="FLOAT",
    envvar="SCHEDULER_AGENT_TIMEOUT",
    show_envvar=True,
    type=Seconds(0.1),
    default=DEFAULT_TIMEOUT_SECONDS,
    help="Seconds one request to the model may take in all, retries and their waits included; a reply that "
    "stalls is given up on then (exit 5) and the conversation stays as it was.",
)
no_stream_option = click.option(
    "--no-stream",
    "no_stream",
    is_flag=True,
    help="Wait for each whole reply instead of streaming its text as it is written.",
)


def _checked_options(ctx: click.Context, param: click.Parameter, value: tuple[tuple[str, str], ...]) -> Any:
    """`-o KEY VALUE` pairs, checked before anything is sent: the request keys as a tuple of (key, value)."""
    from scheduler_agent.agent.options import OptionError, checked_options

    try:
        return tuple(checked_options(value).items())
    except OptionError as exc:
        raise click.BadParameter(str(exc), ctx, param) from None


option_option = click.option(
    "-o",
    "--option",
    "options",
    type=(str, str),
    multiple=True,
    metavar="KEY VALUE",
    callback=_checked_options,
    help="A request key for this turn, e.g. -o max_tokens 777, -o stop_sequences '[\"END\"]' (VALUE is JSON when "
    "it parses, else a string; repeat for more). Not carried over to a later -c turn.",
)


def _checked_servers(ctx: click.Context, param: click.Parameter, value: tuple[str, ...]) -> tuple[str, ...]:
    """`--mcp NAME=COMMAND` / `--mcp NAME=URL`, each checked before anything runs (one line, exit 2)."""
    from scheduler_agent.mcp_client.servers import ServerSpecError, parse_spec

    for text in value:
        try:
            parse_spec(text)
        except ServerSpecError as exc:
            raise click.BadParameter(str(exc).removeprefix(f"--mcp {text!r}: "), ctx, param) from None
    return value


mcp_option = click.option(
    "--mcp",
    "mcp",
    multiple=True,
    metavar="NAME=COMMAND|NAME=URL",
    callback=_checked_servers,
    help="Add an MCP server's tools to the model's, as NAME__tool: a COMMAND started over stdio (split as a shell "
    "splits it, no shell run; its stderr joins the trace) or a Streamable HTTP URL. Repeatable; also read from "
    "mcp.toml in the config folder. Each of its tools is asked about before it runs (--yes approves them).",
)
mcp_trust_option = click.option(
    "--mcp-trust",
    "mcp_trust",
    multiple=True,
    metavar="NAME",
    help="Run the tools of server NAME that it annotates read-only without asking (the others are still asked).",
)
# --- groups of options, each defined once (the way llm's `tool_options` decorator shares them) -----


@dataclass(frozen=True)
class RunOptions:
    """What every command that runs the loop takes: `ask`, `chat` and `resume`."""

    db: Location | None = None
    today: str | None = None
    max_iterations: int = DEFAULT_MAX_ITERATIONS
    yes: bool = False
    yes_cancel: bool = False
    no_invites: bool = False
    usage: bool = False
    tool_deadline: float = TOOL_DEADLINE_SECONDS
    timeout: float = DEFAULT_TIMEOUT_SECONDS
    dump_array: bool = False
    dump_array_file: Path | None = None
    mcp: tuple[str, ...] = ()  # `--mcp NAME=COMMAND|URL` (mcp_client/servers.py)
    mcp_trust: tuple[str, ...] = ()


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
    options: tuple[tuple[str, Any], ...] = ()  # `-o KEY VALUE`, checked (agent/options.py)


_OPTIONS: dict[str, Callable[[F], F]] = {
    "db": db_option,
    "today": today_option,
    "max_iterations": max_iterations_option,
    "yes": yes_option,
    "yes_cancel": yes_cancel_option,
    "no_invites": no_invites_option,
    "usage": usage_option,
    "tool_deadline": tool_deadline_option,
    "timeout": timeout_option,
    "dump_array": dump_array_option,
    "dump_array_file": dump_array_file_option,
    "mcp": mcp_option,
    "mcp_trust": mcp_trust_option,
    "model": model_option,
    "continue_last": continue_option,
    "cid": cid_option,
    "no_store": no_store_option,
    "no_stream": no_stream_option,
    "context_budget": context_budget_option,
    "record": record_option,
    "options": option_option,
}


def _group(keyword: str, group: type[RunOptions] | type[TurnOptions]) -> Callable[[F], F]:
    """A decorator adding `group`'s options to a command, which receives them as one object, `keyword`."""
    names = [f.name for f in fields(group)]

    def decorate(command: F) -> F:
        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            values = {name: kwargs.pop(name) for name in names}
            return command(*args, **{keyword: group(**values)}, **kwargs)

        for name in reversed(names):  # Click lists the options in the order they are written here
            wrapper = _OPTIONS[name](wrapper)
        return wrapper  # type: ignore[return-value]

    return decorate


run_options = _group("run", RunOptions)
turn_options = _group("turn", TurnOptions)
