"""The command line. The one place that prints, and the one place that turns exceptions into exit codes.

Only `ask`, `chat` and `demo` import the SDK and vcrpy, inside the command: `--help` and
`calendar` start without them.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from scheduler_agent.cli_calendar import calendar_app
from scheduler_agent.cli_edge import person_facing
from scheduler_agent.events import Event, Report, TurnOutcome
from scheduler_agent.options import (
    DEFAULT_MAX_ITERATIONS,
    DEFAULT_MODEL,
    DbOption,
    DumpArrayFileOption,
    DumpArrayOption,
    MaxIterationsOption,
    ModelOption,
    TodayOption,
)
from scheduler_agent.render import ArrayDump, ArrayDumpFile, Trace

if TYPE_CHECKING:
    from scheduler_agent.session import Settings

EXIT_CODES = """Exit codes: 0 done · 1 error · 2 usage · 3 iteration bound reached (the list is valid; send a new
message to go on) · 4 the model stopped (max_tokens, refusal, context window, pause) · 5 the API unavailable
(retries exhausted, connection) · 130 interrupted."""

app = typer.Typer(
    help="A scheduling agent: a while-loop around a stateless model, with the message list as its whole state.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(calendar_app, name="calendar")


def reporters(dump_array: bool, dump_array_file: Path | None) -> Report:
    """The trace on stderr, plus the dumps asked for: all fed by the loop's events."""
    listeners: list[Report] = [Trace(sys.stderr)]
    if dump_array:
        listeners.append(ArrayDump(sys.stderr))
    if dump_array_file:
        listeners.append(ArrayDumpFile(dump_array_file))

    def report(event: Event) -> None:
        for listener in listeners:
            listener(event)

    return report


def show(outcome: TurnOutcome) -> None:
    if outcome.text:
        typer.echo(outcome.text)


@app.command()
@person_facing()
def demo(dump_array: DumpArrayOption = False, dump_array_file: DumpArrayFileOption = None) -> None:
    """Replay the canonical trace offline: no key, no network, a fresh demo calendar, the clock pinned."""
    from scheduler_agent.authoring import cassette_path

    _replay(cassette_path("no_mornings"), dump_array, dump_array_file)


@app.command()
@person_facing()
def replay(
    path: Annotated[Path, typer.Argument(help="A cassette (.yaml) recorded by scheduler-agent.", metavar="PATH")],
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """Replay any cassette offline, with the calendar, clock and inputs it carries; exits as the original did."""
    _replay(path, dump_array, dump_array_file)


def _replay(path: Path, dump_array: bool, dump_array_file: Path | None) -> None:
    from scheduler_agent.replay import replay

    result = replay(path, report=reporters(dump_array, dump_array_file))
    for outcome in result.outcomes:
        show(outcome)
    raise typer.Exit(result.outcomes[-1].stop.exit_code if result.outcomes else 0)


def _live_turns(
    db: Path | None, today: str | None, settings: Settings, report: Report
) -> Callable[[list[Any], str], TurnOutcome]:
    from scheduler_agent.cli_calendar import clock_for, connect
    from scheduler_agent.model_api import ModelAPI, make_client
    from scheduler_agent.session import ask

    conn = connect(db)
    clock = clock_for(conn, today)
    send = ModelAPI(make_client()).send

    def turn(messages: list[Any], text: str) -> TurnOutcome:
        return ask(messages, text, conn=conn, clock=clock, send=send, settings=settings, report=report)

    return turn


@app.command("ask")
@person_facing()
def ask_command(
    text: Annotated[str, typer.Argument(help="What to schedule, in plain words.", metavar="TEXT")],
    db: DbOption = None,
    today: TodayOption = None,
    model: ModelOption = DEFAULT_MODEL,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """One user turn against the API (credentials as the SDK finds them: ANTHROPIC_API_KEY, ...)."""
    from scheduler_agent.session import Settings

    turn = _live_turns(db, today, Settings(model, max_iterations), reporters(dump_array, dump_array_file))
    outcome = turn([], text)
    show(outcome)
    raise typer.Exit(outcome.stop.exit_code)


@app.command()
@person_facing()
def chat(
    db: DbOption = None,
    today: TodayOption = None,
    model: ModelOption = DEFAULT_MODEL,
    max_iterations: MaxIterationsOption = DEFAULT_MAX_ITERATIONS,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
) -> None:
    """An interactive session; the list carries over from turn to turn. End with /quit or Ctrl-D."""
    from scheduler_agent.session import Settings

    turn = _live_turns(db, today, Settings(model, max_iterations), reporters(dump_array, dump_array_file))
    messages: list[Any] = []
    interactive = sys.stdin.isatty()
    if interactive:
        typer.echo("Chatting with the scheduler. /quit or Ctrl-D to leave.", err=True)
    while True:
        line = read_line("you> " if interactive else "")
        if line is None or line.strip() in ("/quit", "/exit"):
            return
        if not line.strip():
            continue
        show(turn(messages, line.strip()))  # a stop's statement is in the trace; the chat goes on


def read_line(prompt: str) -> str | None:
    try:
        return input(prompt) if prompt else (sys.stdin.readline() or None)
    except EOFError:
        return None


def main() -> None:
    app()
