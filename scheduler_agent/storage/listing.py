"""The list of stored conversations, a line each, as `conversations list` shows them."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, Row, text

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.grammar.rules import conversation_state  # not grammar.check: the list needs no walk

STATES = ("waiting", "interrupted", "complete", "stopped", "needs-approval")


@dataclass(frozen=True)
class Summary:
    """One line of `conversations list`: `state` is one of STATES."""

    id: int
    created_at: str
    entries: int
    first_text: str
    model: str
    state: str


def summaries(
    conn: Connection,
    limit: int | None = 50,
    *,
    query: str | None = None,
    model: str | None = None,
    state: str | None = None,
) -> list[Summary]:
    """The conversations that have entries, newest first; `limit` None: all.

    `query` matches any entry's text (case-insensitive); `model` is the model as stored; `state`
    one of STATES ("stopped": the last turn ended at the iteration bound or by a model stop;
    "needs-approval": a worker stopped it at a side effect that waits for `approve`/`decline`).
    """
    if state is not None and state not in STATES:
        raise AgentError(f"unknown state {state!r}: one of {', '.join(STATES)}")
    where: list[str] = ["n > 0"]
    params: dict[str, Any] = {}
    if model is not None:
        where.append("c.model = :model")
        params["model"] = model
    if query:
        escaped = query.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
        # case-insensitive on both databases (SQLite's LIKE ignores ASCII case, PostgreSQL's does not)
        where.append(
            "EXISTS (SELECT 1 FROM entries q WHERE q.conversation_id = c.id "
            "AND lower(q.content) LIKE lower(:query) ESCAPE '\\')"
        )
        params["query"] = f"%{escaped}%"
    rows = conn.execute(
        text(f"""
        SELECT * FROM (
            SELECT c.id, c.created_at, c.model, c.last_stop,
                   EXISTS (SELECT 1 FROM pending_approvals p WHERE p.conversation_id = c.id) AS pending,
                   (SELECT count(*) FROM entries WHERE conversation_id = c.id) AS n,
                   (SELECT content FROM entries WHERE conversation_id = c.id AND position = 0) AS first,
                   (SELECT role || ' ' || content FROM entries WHERE conversation_id = c.id
                    ORDER BY position DESC LIMIT 1) AS last
            FROM conversations c
        ) c WHERE {" AND ".join(where)} ORDER BY c.id DESC
        """),
        params,
    )
    found: list[Summary] = []
    for r in rows:
        summary = Summary(r.id, r.created_at, r.n, _first_text(r.first), r.model, _state(r))
        if state is None or summary.state == state:
            found.append(summary)
            if limit is not None and len(found) == limit:
                break
    return found


def _state(row: Row[Any]) -> str:
    if row.pending:
        return "needs-approval"
    if row.last_stop is not None:
        return "stopped"
    role, _, content = row.last.partition(" ")
    return conversation_state([{"role": role, "content": json.loads(content)}])


def _first_text(content: str | None) -> str:
    if content is None:
        return ""
    value = json.loads(content)
    if isinstance(value, str):
        return value
    return " ".join(block.get("text", "") for block in value if block.get("type") == "text")
