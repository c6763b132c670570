"""The command line: the commands, and the one place that turns exceptions into exit codes.

Only the commands that call the model or replay a cassette (`ask`, `chat`, `resume`, `demo`,
`replay`) import the SDK and vcrpy, inside the command: `--help`, `calendar`, `conversations`,
`stats` and `lint` start without them. Live sessions are in cli/live.py.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from scheduler_agent.cli import live
from scheduler_agent.cli.calendar import calendar_app, connect
from scheduler_agent.cli.conversations import conversations_app
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import (
    DbOption,
    DumpArrayFileOption,
    DumpArrayOption,
)
from scheduler_agent.cli.view import HtmlOption, cassette_page, view_command

EXIT_CODES = """Exit codes: 0 done · 1 error · 2 usage · 3 iteration bound reached (the list is valid; send a new
message to go on) · 4 the model stopped (max_tokens, refusal, context window, pause) · 5 the API unavailable
(retries exhausted, connection) · 6 lint: a conversation that is only interrupted · 130 interrupted."""

app = typer.Typer(
    help="A scheduling agent: a while-loop around a stateless model, with the message list as its whole state.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=False,
)
app.add_typer(calendar_app, name="calendar")
app.add_typer(conversations_app, name="conversations")


@app.command()
@person_facing()
def demo(
    name: Annotated[str, typer.Argument(help="A lesson to replay (see --list).", metavar="[NAME]")] = "no_mornings",
    list_lessons: Annotated[bool, typer.Option("--list", help="List the lessons and what each shows.")] = False,
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
    html: HtmlOption = None,
) -> None:
    """Replay a lesson offline (the canonical trace by default): no key, no network, a fresh calendar."""
    from scheduler_agent.lessons.catalogue import lesson_path, lessons

    if list_lessons:
        for lesson in lessons():
            typer.echo(f"{lesson.name:22} {lesson.kind:10} {lesson.title}")
        return
    path = lesson_path(name)
    _replay(path, dump_array, dump_array_file, teach=True, html=html)


@app.command()
@person_facing()
def replay(
    path: Annotated[Path, typer.Argument(help="A cassette (.yaml) recorded by scheduler-agent.", metavar="PATH")],
    dump_array: DumpArrayOption = False,
    dump_array_file: DumpArrayFileOption = None,
    html: HtmlOption = None,
) -> None:
    """Replay any cassette offline, with the calendar, clock and inputs it carries; exits as the original did."""
    _replay(path, dump_array, dump_array_file, html=html)


def _replay(
    path: Path, dump_array: bool, dump_array_file: Path | None, teach: bool = False, html: Path | None = None
) -> None:
    from scheduler_agent.playback.cassette_file import read_setup
    from scheduler_agent.playback.replay import replay

    setup = read_setup(path)
    estimated = setup.get("replies") == "scripted"
    report = live.reporters(dump_array, dump_array_file, estimated, replaying=True, usage=True)
    result = replay(path, report=report)
    if teach and setup.get("lesson"):
        typer.echo(f"\nWhat this shows: {setup['lesson']}")
    if html is not None:  # the page of the cassette's requests, which the replay just sent again
        cassette_page(path, html)
    if result.error is not None:
        raise result.error
    raise typer.Exit(result.exit_code)


app.command("ask")(live.ask_command)
app.command("chat")(live.chat_command)
app.command("resume")(live.resume_command)
app.command("view")(view_command)


@app.command()
@person_facing()
def stats(db: DbOption = None) -> None:
    """Interruptions across all stored conversations, each counted where it was known."""
    from scheduler_agent.storage import conversations

    totals = conversations.totals(connect(db))
    typer.echo(f"conversations stored:        {totals['conversations']}")
    typer.echo(f"model retries exhausted:     {totals['retries_exhausted']}")
    typer.echo(f"tools past their deadline:   {totals['tool_deadlines']}")
    typer.echo(f"process restarts (resumes):  {totals['restarts']}")


@app.command()
@person_facing()
def lint(
    path: Annotated[
        Path,
        typer.Argument(help="A JSON array of messages, {messages: [...]}, a dump file or a cassette.", metavar="PATH"),
    ],
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Warnings (what the API accepts) fail too; also SCHEDULER_AGENT_STRICT=1."),
    ] = False,
) -> None:
    """Check a message list's grammar: exit 0 clean or warnings only, 1 errors, 6 a conversation that is only
    interrupted."""
    from scheduler_agent.grammar.lint import lint_file

    result = lint_file(path, strict=strict or os.environ.get("SCHEDULER_AGENT_STRICT") == "1")
    for line in result.lines:
        typer.echo(line)
    raise typer.Exit(result.exit_code)


def main() -> None:
    app()
