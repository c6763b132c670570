"""`scheduler-agent conversations ...`: the stored lists, exactly as they were sent. Starts without the SDK."""

from __future__ import annotations

import json
from typing import Annotated, Any

import typer

from scheduler_agent.cli.calendar import connect
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import DbOption
from scheduler_agent.cli.render import entry_lines
from scheduler_agent.cli.view import HtmlOption, conversation_trace, write_page
from scheduler_agent.grammar.check import conversation_state
from scheduler_agent.storage import conversations

conversations_app = typer.Typer(
    name="conversations",
    help="The stored conversations: list, show (the array exactly, with --json), delete.",
    no_args_is_help=True,
    add_completion=False,
)

IdArgument = Annotated[int, typer.Argument(help="The conversation id (see `conversations list`).", metavar="ID")]


@conversations_app.command("list")
@person_facing()
def list_command(
    db: DbOption = None, limit: Annotated[int, typer.Option(help="At most this many, newest first.")] = 50
) -> None:
    """The stored conversations, newest first."""
    rows = conversations.summaries(connect(db), limit)
    if not rows:
        typer.echo("No stored conversations yet: `scheduler-agent ask TEXT` stores one.")
    for row in rows:
        first = row.first_text if len(row.first_text) <= 70 else row.first_text[:67] + "..."
        typer.echo(f"{row.id:>4}  {row.created_at}  {row.entries:>3} entries  {first}")


@conversations_app.command("show")
@person_facing()
def show_command(
    cid: IdArgument,
    db: DbOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the array exactly as stored and sent.")] = False,
    html: HtmlOption = None,
) -> None:
    """One conversation: its entries, its state and its interruption counters."""
    if html is not None:
        write_page(conversation_trace(db, cid), html)
    record, messages = conversations.load(connect(db), cid)
    if as_json:
        typer.echo(json.dumps(messages, indent=2, ensure_ascii=False))
        return
    typer.echo(
        f"conversation {record.id} · started {record.created_at} · {record.context.model} · "
        f"{len(messages)} entries · {describe_state(cid, messages)}"
    )
    counts = record.counters
    typer.echo(
        f"interruptions: model retries exhausted {counts['retries_exhausted']} · tools past their deadline "
        f"{counts['tool_deadlines']} · process restarts {counts['restarts']}"
    )
    for position, entry in enumerate(messages):
        for line in entry_lines(entry):
            typer.echo(f"[{position}] {entry['role']:9} {line}")


@conversations_app.command("delete")
@person_facing()
def delete_command(cid: IdArgument, db: DbOption = None) -> None:
    """Delete a stored conversation (the calendar's events stay)."""
    conversations.delete(connect(db), cid)
    typer.echo(f"Deleted conversation {cid}.")


def describe_state(cid: int, messages: list[dict[str, Any]]) -> str:
    state = conversation_state(messages)
    if state == "complete":
        return "complete"
    return f"{state}: `scheduler-agent resume {cid}` finishes it"
