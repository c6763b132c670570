"""`submit`'s side in the store: the user turn stored, with the context `ask` would send with it.

Then `engine.start` starts the turn's workflow. A crash between the two leaves a stored user turn that no
workflow runs; `wait` (and `submit --cid` of that conversation) start it then, under the same id, so the
turn runs once.
"""

from __future__ import annotations

from collections.abc import Sequence

from sqlalchemy import Connection

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import ignore
from scheduler_agent.agent.loop import add_user_text, is_user_input
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.imports import calendar_token
from scheduler_agent.grammar.check import conversation_state
from scheduler_agent.session.session import Session, Settings, refuse_empty
from scheduler_agent.storage import conversations, lease
from scheduler_agent.workflows.names import TurnKey
from scheduler_agent.workflows.records import turn_holder


def _no_model(request: JSON) -> JSON:
    raise AssertionError("submit never calls the model")  # pragma: no cover


def store_turn(
    conn: Connection,
    text: str,
    *,
    clock: Clock,
    settings: Settings,
    cid: int | None = None,
    mcp: Sequence[str] = (),
) -> TurnKey:
    """Store `text` as the next user turn of conversation `cid` (a new one, pinned to `clock` if it is pinned,
    when None), its lease held for the turn's workflow: a local `ask` or `resume` meanwhile exits 8.

    `mcp`: the MCP servers the turn uses, by name only (never a command); a worker lists their tools at the
    turn's start and stores them with it (workflows/steps.py, `mcp_tools`)."""
    refuse_empty(text)
    if cid is None:
        session = Session(conn, clock, _no_model, settings, ignore)
        session.store()
    else:
        session = Session.stored(conn, cid, _no_model, settings, ignore, clock)
        lease.check_free(conn, cid, lease.Holder.me())  # a turn of it still running anywhere: exit 8
        _check_can_take_a_turn(conn, cid, session.messages)
    fresh = session.fresh_context()
    fresh.mcp = {name: [] for name in mcp}  # their tools: listed by the worker that starts the turn
    if session.cid is not None and fresh != session.context:
        conversations.update_context(conn, session.cid, fresh)
    session.context = fresh
    add_user_text(session.messages, text)
    turn, store = len(session.messages) - 1, calendar_token(conn)
    if session.cid is not None:  # (a new conversation has no id yet: nobody else can reach it before it is stored)
        lease.claim(conn, session.cid, turn_holder(store, session.cid, turn))  # exit 8 while another process runs it
        session.records.set_stop(None)  # this turn has not ended yet
    session.sync()
    assert session.cid is not None  # stored by the sync
    lease.claim(conn, session.cid, turn_holder(store, session.cid, turn))  # held until the turn's workflow ends it
    return TurnKey(store, session.cid, turn)


def _check_can_take_a_turn(conn: Connection, cid: int, messages: list[JSON]) -> None:
    record, _ = conversations.load(conn, cid)
    state = conversation_state(messages)
    if state in ("waiting", "interrupted") and record.last_stop is None:
        raise AgentError(
            f"conversation {cid} has an unfinished turn ({state}): `scheduler-agent wait {cid}` waits for a "
            f"submitted one; `scheduler-agent resume {cid}` finishes it here"
        )


def last_turn(conn: Connection, cid: int) -> TurnKey | None:
    """Conversation `cid`'s last user turn (where a submitted turn's workflow begins); None when it has none."""
    _, messages = conversations.load(conn, cid)
    for position in range(len(messages) - 1, -1, -1):
        if is_user_input(messages[position]):
            return TurnKey(calendar_token(conn), cid, position)
    return None


def unanswered(conn: Connection, cid: int) -> bool:
    """Whether conversation `cid` ends with a user turn the model has not answered, and no stop ended it."""
    record, messages = conversations.load(conn, cid)
    return conversation_state(messages) == "waiting" and record.last_stop is None
