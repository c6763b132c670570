"""`scheduler-agent conversations ...`: the stored lists, exactly as they were sent. Starts without the SDK.

`list` starts with only what it uses: how `show` draws entries (cli/render.py, the loop's events), the trace
page (cli/view.py), the store's reading of a whole conversation (storage/conversations.py) and the grammar
are imported inside the commands that use them.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.cli.core import argument, command, entries, examples, group
from scheduler_agent.cli.database import existing
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, db_option, html_option, json_flag
from scheduler_agent.cli.tables import entry_table, table
from scheduler_agent.cli.terminal import say
from scheduler_agent.storage import listing
from scheduler_agent.storage.db import Location

if TYPE_CHECKING:
    from scheduler_agent.storage.conversations import Reply

_HERE = "scheduler_agent.cli.conversations"
conversations_app = group(
    "conversations",
    "The stored conversations: list, show (the array exactly, with --json), delete.",
    {  # name -> where the command is, and its one-line help (the test checks that they agree)
        "list": (f"{_HERE}:list_command", "The stored conversations, newest first, each with its state."),
        "show": (
            f"{_HERE}:show_command",
            "One conversation: its entries, its state, its interruption counters, and its tokens and cost.",
        ),
        "delete": (f"{_HERE}:delete_command", "Delete a stored conversation (the calendar's events stay)."),
        "repair": (
            "scheduler_agent.cli.repair:repair_command",
            "Show what makes a stored list invalid and, once confirmed, make the smallest change that mends it.",
        ),
    },
)
id_argument = argument("cid", help="The conversation id (see `conversations list`).", metavar="ID", type=ID)


@command(
    "list",
    epilog=examples(
        "scheduler-agent conversations list",
        "scheduler-agent conversations list -q priya --state stopped",
        "scheduler-agent conversations list -n 0 --json | jq '.[].id'",
    ),
)
@db_option
@click.option(
    "-n",
    "--count",
    "--limit",
    "limit",
    type=click.IntRange(min=0),
    default=10,
    metavar="N",
    help="The latest N, newest first (text and --json alike); 0 lists them all.",
)
@click.option("-q", "--query", metavar="TEXT", help="Only those with TEXT in any entry.")
@click.option("--model", metavar="MODEL", help="Only those with this model.")
@click.option(
    "--state",
    metavar="STATE",
    help="Only those in this state: waiting, interrupted, complete, stopped (the last turn ended at "
    "the iteration bound or by a model stop), or needs-approval (a worker's turn waits for `approve`/`decline`).",
)
@json_flag(help="One JSON array of objects, for scripts.")
@person_facing()
def list_command(
    db: Location | None, limit: int, query: str | None, model: str | None, state: str | None, as_json: bool
) -> None:
    """The stored conversations, newest first, each with its state."""
    if state is not None and state not in listing.STATES:
        states = ", ".join(listing.STATES)
        raise click.BadParameter(f"{state!r} is not a state: one of {states}", param_hint="--state")
    rows = listing.summaries(existing(db), limit or None, query=query, model=model, state=state)
    if as_json:
        click.echo(json.dumps([dataclasses.asdict(row) for row in rows], indent=2, ensure_ascii=False))
        return
    if not rows:
        filtered = query is not None or model is not None or state is not None
        none = "No stored conversations yet: `scheduler-agent ask TEXT` stores one."
        click.echo("No conversation matches." if filtered else none)
    cells = [
        (str(row.id), row.created_at, entries(row.entries), row.state, _shortened(row.first_text, 60)) for row in rows
    ]
    for line in table(cells, ">><<<", gap="  ", widths=(4, 0, 11, 11)):
        say(line)


@command(
    "show",
    epilog=examples(
        "scheduler-agent conversations show",
        "scheduler-agent conversations show 3 --json > list.json",
        "scheduler-agent conversations show -r",
    ),
)
@argument(
    "cid",
    help="The conversation id (see `conversations list`); the latest if none.",
    metavar="ID",
    type=ID,
    required=False,
)
@db_option
@json_flag(help="Print the array exactly as stored and sent.")
@click.option("-r", "--response", "response", is_flag=True, help="Print only the last turn's answer.")
@html_option
@person_facing()
def show_command(cid: int | None, db: Location | None, as_json: bool, response: bool, html: Path | None) -> None:
    """One conversation: its entries, its state, its interruption counters, and its tokens and cost."""
    from scheduler_agent.cli.render import entry_lines, set_aside_lines
    from scheduler_agent.storage import conversations

    conn = existing(db)
    if cid is None:
        cid = conversations.latest_id(conn)
        if cid is None:
            raise AgentError("No stored conversation yet: `scheduler-agent ask TEXT` stores one")
    if response:
        _, messages = conversations.load(conn, cid)
        click.echo(last_answer(cid, messages))
        return
    if html is not None:
        from scheduler_agent.cli.view import conversation_trace, write_page

        write_page(conversation_trace(db, cid), html)
    record, messages = conversations.load(conn, cid)
    if as_json:
        click.echo(json.dumps(messages, indent=2, ensure_ascii=False))
        return
    counts, replies = record.counters, conversations.replies(conn, cid)
    lines = [  # written in one call: 15,000 lines one echo at a time took a third of a second
        f"conversation {record.id} · started {record.created_at} · {record.context.model} · "
        f"{entries(len(messages))} · {describe_state(cid, messages, record.last_stop is not None)}",
        f"interruptions: model retries exhausted {counts['retries_exhausted']} · tools past their deadline "
        f"{counts['tool_deadlines']} · process restarts {counts['restarts']}",
        *cost_lines(replies),
        *entry_table((n, entry["role"], line) for n, entry in enumerate(messages) for line in entry_lines(entry)),
        *set_aside_lines(replies),
    ]
    click.echo("\n".join(lines))


@command("delete", epilog=examples("scheduler-agent conversations delete 3"))
@id_argument
@db_option
@person_facing()
def delete_command(cid: int, db: Location | None) -> None:
    """Delete a stored conversation (the calendar's events stay)."""
    from scheduler_agent.storage import conversations

    conversations.delete(existing(db), cid)
    click.echo(f"Deleted conversation {cid}.")


def last_answer(cid: int, messages: list[dict[str, Any]]) -> str:
    """The text of the last turn's answer (the model's last reply in it); AgentError saying why when it has none."""
    from scheduler_agent.grammar.check import conversation_state

    for entry in reversed(messages):
        if entry["role"] == "user" and _spoken(entry):
            break  # the last turn's start: no answer after it
        if entry["role"] == "assistant":
            content = entry["content"]
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
            if text.strip() and conversation_state(messages) == "complete":
                return text
            break
    state = describe_state(cid, messages)
    raise AgentError(f"Conversation {cid}'s last turn has no answer: it is {state}")


def _spoken(entry: dict[str, Any]) -> bool:
    content = entry["content"]
    return isinstance(content, str) or any(block.get("type") == "text" for block in content)


def describe_state(cid: int, messages: list[dict[str, Any]], stopped: bool = False) -> str:
    """The state as a person reads it, and what to do about it."""
    from scheduler_agent.grammar.check import conversation_state

    state = conversation_state(messages)
    if state == "empty":
        return f"empty: no turn yet (`scheduler-agent ask --cid {cid} TEXT` starts it)"
    if stopped:
        return f"stopped (the bound or a model stop): send a new message with `scheduler-agent ask --cid {cid} TEXT`"
    if state == "complete":
        return "complete"
    if state == "waiting":
        return f"waiting for the model's reply: `scheduler-agent resume {cid}` asks it again"
    return f"interrupted (calls without results): `scheduler-agent resume {cid}` runs them and goes on"


def cost_lines(replies: list[Reply], estimated: bool = False) -> list[str]:
    """`conversations show`: tokens and cost per turn and for the whole conversation."""
    from scheduler_agent.api.prices import price_of, source, total
    from scheduler_agent.cli.render import add_usage, usage_line

    if not replies:
        return ["cost: nothing sent yet"]
    turns: list[list[Reply]] = []
    for reply in replies:
        if reply.iteration == 1 or not turns:
            turns.append([])
        turns[-1].append(reply)
    lines = []
    costs = []
    for number, turn in enumerate(turns, start=1):
        usage: dict[str, int] = {}
        for reply in turn:
            add_usage(usage, reply.usage)
        cost = total(price_of(r.model, r.usage, estimated=estimated) for r in turn)
        costs.append(cost)
        count = f"{len(turn)} iteration{'' if len(turn) == 1 else 's'}"
        lines.append(f"  turn {number} ({count}): {usage_line(usage, False)} · {cost.text()}")
    whole = total(costs)
    return [f"cost: {whole.text()} over {len(replies)} replies (prices: {source()})", *lines]


def _shortened(text: str, most: int) -> str:
    return text if len(text) <= most else text[: most - 3] + "..."
