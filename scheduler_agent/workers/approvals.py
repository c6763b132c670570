"""Approval without a terminal: a side effect no one could be asked about waits, by tool_use id.

A worker's `Decide` (agent/approval.py is pluggable) is reached only for a call with no recorded
answer. It records the call as pending, with the other calls of the same round that will need an
answer too, marks the turn `needs-approval`, and stops it by raising `NeedsApproval`. The assistant
turn is already stored, so the conversation ends with an unanswered call: resumable. `approve` /
`decline` (`answer` here) write the person's answer where a terminal's answer goes (the
`approvals` table), and once no call waits the turn is queued again; the next worker to claim it
resumes it, and ApprovingToolbox finds the answer instead of asking.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from scheduler_agent.agent.errors import AgentError, InputError
from scheduler_agent.agent.types import JSON
from scheduler_agent.session.approval import Decide, Decision
from scheduler_agent.storage.db import transaction
from scheduler_agent.storage.dialect import Connection
from scheduler_agent.workers import queue


class NeedsApproval(BaseException):
    """A side effect waits for a person: the turn stops here (not an Exception, so no tool answers it)."""

    def __init__(self, cid: int, calls: list[str]) -> None:
        super().__init__(f"conversation {cid} waits for approval of {', '.join(calls)}")
        self.cid, self.calls = cid, calls


@dataclass(frozen=True)
class Pending:
    tool_use_id: str
    name: str
    summary: str
    asked_at: str


# (the call now asked about) -> the other calls of its round that need an answer: (call, summary)
Others = Callable[[JSON], list[tuple[JSON, str]]]


def waiting_decide(conn: Connection, cid: int, others: Others = lambda call: []) -> Decide:
    """A Decide that asks no one: the call (and `others(call)`) wait as pending; the turn stops."""

    def decide(call: JSON, summary: str) -> Decision:
        waiting = [(call, summary), *others(call)]
        with transaction(conn):
            for each, what in waiting:
                conn.execute(
                    "INSERT INTO pending_approvals (tool_use_id, conversation_id, name, summary, asked_at)"
                    " VALUES (?,?,?,?,?) ON CONFLICT (tool_use_id) DO NOTHING",
                    (each["id"], cid, each["name"], what, queue.now_iso()),
                )
            conn.execute(
                "UPDATE work_queue SET state = 'needs-approval' WHERE conversation_id = ? AND state = 'queued'", (cid,)
            )
        raise NeedsApproval(cid, [each["id"] for each, _ in waiting])

    return decide


def pending(conn: Connection, cid: int | None = None) -> list[Pending]:
    """The calls waiting for an answer (of conversation `cid`, or all), oldest first."""
    where, params = ("WHERE conversation_id = ?", (cid,)) if cid is not None else ("", ())
    rows = conn.execute(
        f"SELECT tool_use_id, name, summary, asked_at FROM pending_approvals {where} ORDER BY asked_at, tool_use_id",
        params,
    ).fetchall()
    return [Pending(*row) for row in rows]


def answer(conn: Connection, cid: int, call_id: str | None, approved: bool, reason: str = "") -> Pending:
    """Record the person's answer to one waiting call of `cid` (`call_id`, or the only one waiting).

    When no call of `cid` waits any more, its turn is queued again for the next worker."""
    with transaction(conn):
        waiting = pending(conn, cid)
        if not waiting:
            raise AgentError(
                f"conversation {cid} waits for no approval: `scheduler-agent conversations list --state "
                "needs-approval` shows those that do"
            )
        if call_id is None:
            if len(waiting) > 1:
                names = "; ".join(f"{p.tool_use_id} ({p.summary})" for p in waiting)
                raise InputError(
                    f"conversation {cid} has {len(waiting)} calls waiting: {names}. Say which with --call TOOL_USE_ID"
                )
            chosen = waiting[0]
        else:
            found = [p for p in waiting if p.tool_use_id == call_id]
            if not found:
                ids = ", ".join(p.tool_use_id for p in waiting)
                raise InputError(f"conversation {cid} has no call {call_id!r} waiting; the calls waiting: {ids}")
            chosen = found[0]
        conn.execute(
            "INSERT INTO approvals (tool_use_id, approved, reason, end_of_input) VALUES (?, ?, ?, 0)"
            " ON CONFLICT (tool_use_id) DO UPDATE SET approved = excluded.approved, reason = excluded.reason,"
            " end_of_input = 0",
            (chosen.tool_use_id, int(approved), reason),
        )
        conn.execute("DELETE FROM pending_approvals WHERE tool_use_id = ?", (chosen.tool_use_id,))
        if len(waiting) == 1:
            queue.requeue(conn, cid)
    return chosen
