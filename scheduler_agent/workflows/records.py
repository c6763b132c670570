"""The rows the turn's activities keep besides the list: the calls that wait for a person, and the answers.

A side effect no one could be asked about waits by its `tool_use` id in `pending_approvals` (which
`conversations list --state needs-approval` reads); the person's answer goes where a terminal's answer goes
(`approvals`, by `tool_use` id), so the tool round run again finds it instead of asking, and `resume` and
`view` see it. Every statement here uses `:name` placeholders.
"""

from __future__ import annotations

from datetime import UTC, datetime

from sqlalchemy import Connection, text

from scheduler_agent.storage import lease
from scheduler_agent.storage.db import transaction
from scheduler_agent.workflows.names import Waiting, workflow_id


def turn_holder(store: str, cid: int, turn: int) -> lease.Holder:
    """Who holds conversation `cid`'s lease while its submitted turn runs: the workflow, whichever worker runs
    its step (so a step run again elsewhere is no second writer), while a local `ask`, `resume` or another
    `submit` is refused (exit 8). It lapses only by time: no process of this host stands for it."""
    return lease.Holder(f"workflow:{workflow_id(store, cid, turn)}", 0)


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def wait_for_person(conn: Connection, cid: int, calls: list[tuple[str, str, str]]) -> None:
    """Record the calls `(tool_use_id, name, summary)` of conversation `cid` as waiting for a person."""
    with transaction(conn):
        for call, name, summary in calls:
            conn.execute(
                text(
                    "INSERT INTO pending_approvals (tool_use_id, conversation_id, name, summary, asked_at)"
                    " VALUES (:call, :cid, :name, :summary, :asked) ON CONFLICT (tool_use_id) DO NOTHING"
                ),
                {"call": call, "cid": cid, "name": name, "summary": summary, "asked": _now()},
            )


def record_answer(conn: Connection, call: str, approved: bool, reason: str) -> None:
    """The person's answer to `call`, where a terminal's answer goes; the call no longer waits."""
    with transaction(conn):
        conn.execute(
            text(
                "INSERT INTO approvals (tool_use_id, approved, reason, end_of_input) VALUES (:call, :approved, "
                ":reason, 0)"
                " ON CONFLICT (tool_use_id) DO UPDATE SET approved = excluded.approved, reason = excluded.reason,"
                " end_of_input = 0"
            ),
            {"call": call, "approved": int(approved), "reason": reason},
        )
        conn.execute(text("DELETE FROM pending_approvals WHERE tool_use_id = :call"), {"call": call})


def pending(conn: Connection, cid: int) -> list[Waiting]:
    """The calls of conversation `cid` that wait for a person, oldest first."""
    rows = conn.execute(
        text(
            "SELECT tool_use_id, summary FROM pending_approvals WHERE conversation_id = :cid"
            " ORDER BY asked_at, tool_use_id"
        ),
        {"cid": cid},
    ).fetchall()
    return [Waiting(str(call), str(summary)) for call, summary in rows]
