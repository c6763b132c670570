"""The commands that never call the model: `demo` and `replay` (offline, from a cassette), `stats`, `lint`.

`demo` and `replay` import the SDK and vcrpy inside the command; `stats` and `lint` never do.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from scheduler_agent.cli.core import argument, command, examples
from scheduler_agent.cli.database import existing
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import PATH, db_option, dump_options, html_option, json_flag
from scheduler_agent.cli.view import cassette_page
from scheduler_agent.storage.db import Location


@command(
    "demo",
    epilog=examples(
        "scheduler-agent demo", "scheduler-agent demo --list", "scheduler-agent demo forgotten_rule --dump-array"
    ),
)
@argument("name", help="A lesson to replay (see --list). [default: no_mornings]", metavar="NAME", default="no_mornings")
@click.option("--list", "list_lessons", is_flag=True, help="List the lessons and what each shows.")
@dump_options
@html_option
@person_facing()
def demo(name: str, list_lessons: bool, dump_array: bool, dump_array_file: Path | None, html: Path | None) -> None:
    """Replay a lesson offline (the canonical trace by default): no key, no network, a fresh calendar."""
    from scheduler_agent.lessons.catalogue import lesson_path, lessons

    if list_lessons:
        for lesson in lessons():
            click.echo(f"{lesson.name:22} {lesson.kind:10} {lesson.title}")
        return
    path = lesson_path(name)
    _replay(path, dump_array, dump_array_file, teach=True, html=html)


@command(
    "replay", epilog=examples("scheduler-agent replay session.yaml", "scheduler-agent replay session.yaml --dump-array")
)
@argument("path", help="A cassette (.yaml) recorded by scheduler-agent.", metavar="PATH", type=PATH)
@dump_options
@html_option
@person_facing()
def replay(path: Path, dump_array: bool, dump_array_file: Path | None, html: Path | None) -> None:
    """Replay any cassette offline, with the calendar, clock and inputs it carries; exits as the original did."""
    _replay(path, dump_array, dump_array_file, html=html)


def _replay(
    path: Path, dump_array: bool, dump_array_file: Path | None, teach: bool = False, html: Path | None = None
) -> None:
    from scheduler_agent.cli import live as cli_live
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
        click.echo(f"\nWhat this shows: {setup['lesson']}")
    if html is not None:  # the page of the cassette's requests, which the replay just sent again
        cassette_page(path, html)
    if result.error is not None:
        raise result.error
    raise click.exceptions.Exit(result.exit_code)


@command("stats", epilog=examples("scheduler-agent stats", "scheduler-agent stats --json"))
@db_option
@json_flag(help="One JSON object, for scripts.")
@person_facing()
def stats(db: Location | None, as_json: bool) -> None:
    """Interruptions across all stored conversations, each counted where it was known."""
    from scheduler_agent.storage import conversations

    totals = conversations.totals(existing(db))
    if as_json:
        click.echo(json.dumps(totals, indent=2))
        return
    click.echo(f"conversations stored:        {totals['conversations']}")
    click.echo(f"model retries exhausted:     {totals['retries_exhausted']}")
    click.echo(f"tools past their deadline:   {totals['tool_deadlines']}")
    click.echo(f"process restarts (resumes):  {totals['restarts']}")


@command(
    "lint",
    epilog=examples(
        "scheduler-agent lint list.json",
        "scheduler-agent conversations show 3 --json > l.json && scheduler-agent lint l.json",
    ),
)
@argument(
    "path", help="A JSON array of messages, {messages: [...]}, a dump file or a cassette.", metavar="PATH", type=PATH
)
@click.option("--strict", is_flag=True, help="Warnings (what the API accepts) fail too; also SCHEDULER_AGENT_STRICT=1.")
@person_facing()
def lint(path: Path, strict: bool) -> None:
    """Check a message list's grammar: exit 0 clean or warnings only, 1 errors, 6 a conversation that is only
    interrupted.

    A clean list is one line, `FILE: ok (N entries)`; a file that cannot be read as a list is exit 2."""
    from scheduler_agent.grammar.lint import lint_file

    result = lint_file(path, strict=strict or os.environ.get("SCHEDULER_AGENT_STRICT") == "1")
    for line in result.lines:
        click.echo(line)
    if result.exit_code == 0 and not result.errors and not result.warnings:
        click.echo(result.summary)
    raise click.exceptions.Exit(result.exit_code)
