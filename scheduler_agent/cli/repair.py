"""`scheduler-agent conversations repair ID`: a way out for a list an earlier version stored wedged.

It shows what is wrong (who made each broken entry) and, after confirmation, makes the smallest change
that makes the list valid again (grammar/repair.py); the change, and the list as it was, are recorded
beside the conversation. Starts without the SDK.
"""

from __future__ import annotations

import click

from scheduler_agent.cli.core import argument, command
from scheduler_agent.cli.database import existing
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import ID, db_option
from scheduler_agent.cli.render import examples, visible
from scheduler_agent.grammar.check import GrammarError, check
from scheduler_agent.grammar.repair import plan
from scheduler_agent.storage import conversations
from scheduler_agent.storage.db import Location


@command(
    "repair", epilog=examples("scheduler-agent conversations repair 3", "scheduler-agent conversations repair 3 --yes")
)
@argument("cid", help="The conversation id (see `conversations list`).", metavar="ID", type=ID)
@db_option
@click.option("-y", "--yes", is_flag=True, help="Repair without asking.")
@person_facing()
def repair_command(cid: int, db: Location | None, yes: bool) -> None:
    """Show what makes a stored list invalid and, once confirmed, make the smallest change that mends it."""
    conn = existing(db)
    _, messages = conversations.load(conn, cid)
    violations = check(messages, mode="conversation")
    if not violations:
        click.echo(f"Conversation {cid} is valid: nothing to repair.")
        return
    click.echo(visible(str(GrammarError(violations, messages))).replace("NOT sent", "not valid", 1))
    mended = plan(messages)
    if not mended.changes:
        raise _cannot(cid, mended.left)
    click.echo("The smallest change that makes it valid:")
    for change in mended.changes:
        click.echo(f"  - {change}")
    if mended.left:
        raise _cannot(cid, mended.left)
    if not yes and not _confirmed():
        click.echo("Nothing was changed.", err=True)
        raise click.exceptions.Exit(1)
    conversations.rewrite(conn, cid, messages, mended.messages, mended.changes)
    click.echo(
        f"Repaired conversation {cid}: {len(messages)} entries are now {len(mended.messages)}; the change and the "
        f"list as it was are kept beside it. `scheduler-agent ask --cid {cid} TEXT` goes on."
    )


def _cannot(cid: int, left: list[str]) -> Exception:
    from scheduler_agent.agent.errors import AgentError

    return AgentError(
        f"conversation {cid} cannot be repaired by the smallest change: {'; '.join(left)}. "
        f"`scheduler-agent conversations show {cid} --json` shows the list"
    )


def _confirmed() -> bool:
    try:
        return bool(click.confirm("Repair it?", default=False, err=True))
    except click.Abort:  # standard input ended: no answer is a no
        return False
