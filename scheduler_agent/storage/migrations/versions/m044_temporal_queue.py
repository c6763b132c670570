"""m044_temporal_queue: the workers run on Temporal (issue 36); the home-made queue's table goes.

`work_queue` (m030) held the turns handed to workers, their claims and how they ended; Temporal keeps that
now (one workflow per submitted turn). The leases a worker's slots held (`host#slot`) go with it; the
per-conversation lease table (m010) stays, as do `pending_approvals` (m031) and `approvals` (m004), which
the Temporal path, `view` and `resume` read.

Before the table is dropped, every turn it still held unfinished is put where `resume` finds it: a submitted
text no worker had added yet joins the conversation's list as the store writes a user turn (joined to a
trailing user turn, else a new entry), and the calls an old worker left waiting for `approve` no longer wait
on a worker (`resume` asks at the terminal; an answer already given is kept by its `tool_use` id). The
upgrade then says once, on stderr, which conversations `scheduler-agent resume N` finishes
(`storage.migrations.upgrade` prints what a revision leaves in `notices`)."""

import json
from typing import Any

from alembic import op
from sqlalchemy import Connection, bindparam, text

from scheduler_agent.agent.loop import add_user_text
from scheduler_agent.agent.request import encode_text, framed_size
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import conversation_state

revision = "m044"
down_revision = "m043"


def upgrade() -> None:
    bind = op.get_bind()
    unfinished = [cid for cid, submitted in _queued(bind) if _keep_resumable(bind, cid, submitted)]
    if unfinished:
        waiting = text("DELETE FROM pending_approvals WHERE conversation_id IN :cids")
        bind.execute(waiting.bindparams(bindparam("cids", expanding=True)), {"cids": unfinished})
        _notice(notice(unfinished))
    bind.execute(text("DELETE FROM leases WHERE holder_host LIKE :slot"), {"slot": "%#%"})  # a worker slot's: host#slot
    op.execute("DROP TABLE work_queue")  # and its index, work_queue_by_state


def notice(cids: list[int]) -> str:
    """The one line the upgrade says when it left turns for `resume`."""
    named = f"conversation{'s' if len(cids) > 1 else ''} {', '.join(map(str, cids))}"
    return (
        f"Upgraded: the workers run on Temporal now. The turns still queued ({named}) are in their lists: "
        "`scheduler-agent resume N` finishes each."
    )


def _queued(bind: Connection) -> list[tuple[int, str | None]]:
    """The turns the queue held that had not ended: each conversation, and its text if it is still to be added."""
    rows = bind.execute(
        text("SELECT conversation_id, text, base FROM work_queue WHERE state <> 'done' ORDER BY conversation_id")
    ).fetchall()
    found: list[tuple[int, str | None]] = []
    for cid, submitted, base in rows:
        length = bind.execute(
            text("SELECT count(*) FROM entries WHERE conversation_id = :cid"), {"cid": cid}
        ).scalar_one()
        found.append((int(cid), submitted if submitted is not None and int(length) <= int(base) else None))
    return found


def _keep_resumable(bind: Connection, cid: int, submitted: str | None) -> bool:
    """Put the submitted text (if not there yet) into conversation `cid`'s list; whether a turn is left to finish."""
    rows = bind.execute(
        text("SELECT role, content FROM entries WHERE conversation_id = :cid ORDER BY position"), {"cid": cid}
    ).fetchall()
    messages: list[JSON] = [{"role": role, "content": json.loads(content)} for role, content in rows]
    if submitted is not None and not _joined(messages, submitted):
        before = len(messages)
        add_user_text(messages, submitted)
        last = messages[-1]
        written = encode_text(last["content"])
        values: dict[str, Any] = {
            "cid": cid,
            "position": len(messages) - 1,
            "role": last["role"],
            "content": written,
            "size": framed_size(last["role"], written),
        }
        if len(messages) == before:  # joined to the trailing user turn (tool results after a stop)
            statement = (
                "UPDATE entries SET content = :content, size = :size"
                " WHERE conversation_id = :cid AND position = :position"
            )
        else:
            statement = (
                "INSERT INTO entries (conversation_id, position, role, content, size)"
                " VALUES (:cid, :position, :role, :content, :size)"
            )
        bind.execute(text(statement), values)
        bind.execute(text("UPDATE conversations SET last_stop = NULL WHERE id = :cid"), {"cid": cid})
    return conversation_state(messages) != "complete"


def _joined(messages: list[JSON], submitted: str) -> bool:
    """Whether a worker already joined the text to the trailing user turn (the list's length did not change)."""
    if not messages or messages[-1]["role"] != "user" or not isinstance(messages[-1]["content"], list):
        return False
    return bool(messages[-1]["content"]) and messages[-1]["content"][-1] == {"type": "text", "text": submitted}


def _notice(line: str) -> None:
    config = op.get_context().config
    if config is not None:
        config.attributes.setdefault("notices", []).append(line)
