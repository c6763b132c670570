"""The command line: the commands, and the one place that turns exceptions into exit codes.

Only the commands that call the model or replay a cassette (`ask`, `chat`, `resume`, `demo`,
`replay`) import the SDK and vcrpy, inside the command: `--help`, `calendar`, `conversations`,
`stats` and `lint` start without them. Live sessions are in cli/live.py.
"""

from __future__ import annotations

import json
import os
import sys
from importlib.metadata import version
from pathlib import Path
from typing import Annotated, Any

import typer

from scheduler_agent.cli import live as cli_live
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.cli.conversations import conversations_app
from scheduler_agent.cli.database import db_app, existing
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import (
    DbOption,
    DumpArrayFileOption,
    DumpArrayOption,
)
from scheduler_agent.cli.prefs import prefs_app
from scheduler_agent.cli.render import examples
from scheduler_agent.cli.repair import repair_command
from scheduler_agent.cli.view import HtmlOption, cassette_page, view_command

EXIT_CODES = """\b
Exit codes:
  0 done · 1 error · 2 usage
  3 iteration bound reached (the list is valid; send a new message to go on)
  4 the model stopped (max_tokens, refusal, context window, pause, an empty reply)
  5 the API unavailable (retries exhausted, connection, --timeout, a long retry-after)
  6 lint: a conversation that is only interrupted
  7 the model's reply could not be used (kept beside the list)
  8 the conversation is being run elsewhere
  130 interrupted"""

app = typer.Typer(
    help="A scheduling agent: a while-loop around a stateless model, with the message list as its whole state.",
    epilog=EXIT_CODES
    + "\n\n"
    + examples(
        "scheduler-agent demo",
        'scheduler-agent ask "Book 30 minutes with Priya next week, afternoons only"',
        'echo "Move it to Tuesday" | scheduler-agent ask -c -',
        "scheduler-agent --install-completion   # then restart the shell",
    ),
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    rich_markup_mode=None,
    context_settings={"help_option_names": ["-h", "--help"]},
)
calendar_app.add_typer(prefs_app, name="prefs")
app.add_typer(calendar_app, name="calendar")
app.add_typer(conversations_app, name="conversations")
conversations_app.command(
    "repair", epilog=examples("scheduler-agent conversations repair 3", "scheduler-agent conversations repair 3 --yes")
)(repair_command)
app.add_typer(db_app, name="db")


def _version(value: bool) -> None:
    if value:
        typer.echo(f"scheduler-agent {version('scheduler-agent')}")
        raise typer.Exit()


@app.callback()
def _main(
    show_version: Annotated[
        bool,
        typer.Option("--version", callback=_version, is_eager=True, help="Print the version and exit."),
    ] = False,
) -> None:
    """A scheduling agent: a while-loop around a stateless model, with the message list as its whole state."""


@app.command(
    epilog=examples(
        "scheduler-agent demo", "scheduler-agent demo --list", "scheduler-agent demo forgotten_rule --dump-array"
    )
)
@person_facing()
def demo(
    name: Annotated[
        str,
        typer.Argument(
            help="A lesson to replay (see --list). [default: no_mornings]", metavar="NAME", show_default=False
        ),
    ] = "no_mornings",
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


@app.command(epilog=examples("scheduler-agent replay session.yaml", "scheduler-agent replay session.yaml --dump-array"))
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
    report = cli_live.reporters(dump_array, dump_array_file, estimated, replaying=True, usage=True)
    command = None
    if any(line.strip().startswith("/") for line in setup.get("inputs", [])):  # a recorded chat
        from scheduler_agent.cli.chat import UsageLog, replayed_commands

        log = UsageLog(estimated)
        report.append(log)
        command = replayed_commands(log, sys.stdout, sys.stderr)
    result = replay(path, report=report, command=command)
    if teach and setup.get("lesson"):
        typer.echo(f"\nWhat this shows: {setup['lesson']}")
    if html is not None:  # the page of the cassette's requests, which the replay just sent again
        cassette_page(path, html)
    if result.error is not None:
        raise result.error
    raise typer.Exit(result.exit_code)


app.command("ask", epilog=cli_live.ASK_EXAMPLES)(cli_live.ask_command)
app.command("chat", epilog=cli_live.CHAT_EXAMPLES)(cli_live.chat_command)
app.command("resume", epilog=cli_live.RESUME_EXAMPLES)(cli_live.resume_command)
app.command(
    "view",
    epilog=examples("scheduler-agent view 3 -o trace.html", "scheduler-agent view cassettes/no_mornings.yaml --open"),
)(view_command)


@app.command(epilog=examples("scheduler-agent stats", "scheduler-agent stats --json"))
@person_facing()
def stats(
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="One JSON object, for scripts.")] = False,
) -> None:
    """Interruptions across all stored conversations, each counted where it was known."""
    from scheduler_agent.storage import conversations

    totals = conversations.totals(existing(db))
    if as_json:
        typer.echo(json.dumps(totals, indent=2))
        return
    typer.echo(f"conversations stored:        {totals['conversations']}")
    typer.echo(f"model retries exhausted:     {totals['retries_exhausted']}")
    typer.echo(f"tools past their deadline:   {totals['tool_deadlines']}")
    typer.echo(f"process restarts (resumes):  {totals['restarts']}")


@app.command(
    epilog=examples(
        "scheduler-agent lint list.json",
        "scheduler-agent conversations show 3 --json > l.json && scheduler-agent lint l.json",
    )
)
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


def _quiet_sdk_finalisers(unraisable: Any) -> None:
    """An SDK client cut short by Ctrl-C while it was being built fails again in its `__del__` at exit
    (`'SyncHttpxClientWrapper' object has no attribute '_state'`): that says nothing to a person."""
    where = getattr(unraisable.object, "__module__", "") or ""
    if where.startswith(("anthropic", "httpx")) or isinstance(unraisable.exc_value, KeyboardInterrupt):
        return
    sys.__unraisablehook__(unraisable)


def main() -> None:
    sys.unraisablehook = _quiet_sdk_finalisers
    try:
        app()
    except KeyboardInterrupt:  # outside any command's own edge: while Typer parses, or at exit
        sys.stderr.write("\nInterrupted.\n")
        raise SystemExit(130) from None
