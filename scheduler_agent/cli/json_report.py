"""`ask --json`: the turn as one JSON object on stdout, for scripts (the trace stays on stderr)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, TextIO

from sqlalchemy import Connection, bindparam, text

from scheduler_agent.agent.events import Event, ReplyReceived, ToolAnswered, TurnEnded, TurnOutcome
from scheduler_agent.cli.edge import came_from_ctrl_c
from scheduler_agent.cli.render import USAGE_KEYS, add_usage, reply_cost

if TYPE_CHECKING:
    from scheduler_agent.api.prices import Cost


class JsonReport:
    """Listens to a turn; `write()` prints the object:

    `{conversation, outcome, exit_code, exit_reason, text, tool_calls: [{id, name, input, result, is_error,
    status}], booked_event_ids, usage, cost: {usd, estimated}, iterations: [{usage, cost}]}`.

    Made before the session opens (`conn` is set once it has), so that a failure to open it (no credentials,
    a conversation that is not there) is an object too."""

    def __init__(self, out: TextIO, conn: Connection | None = None) -> None:
        self.out, self.conn = out, conn
        self.calls: list[dict[str, Any]] = []
        self.iterations: list[dict[str, Any]] = []
        self.usage: dict[str, int] = dict.fromkeys(USAGE_KEYS, 0)
        self.cost: Cost | None = None
        self.outcome: TurnOutcome | None = None

    def __call__(self, event: Event) -> None:
        if isinstance(event, ReplyReceived):
            cost = reply_cost(event.reply, estimated=False)
            self.cost = cost if self.cost is None else self.cost + cost
            add_usage(self.usage, event.reply.get("usage"))
            self.iterations.append({"usage": event.reply.get("usage") or {}, "cost": cost.json()})
        elif isinstance(event, ToolAnswered):
            result = event.result
            self.calls.append(
                {
                    "id": event.call["id"],
                    "name": event.call["name"],
                    "input": event.call.get("input", {}),
                    "result": result.get("content"),
                    "is_error": bool(result.get("is_error", False)),
                    "status": event.status,
                }
            )
        elif isinstance(event, TurnEnded):
            self.outcome = event.outcome

    def booked(self) -> list[int]:
        """The events booked in this turn, by the tool_use ids of its create_event calls."""
        ids = [call["id"] for call in self.calls if call["name"] == "create_event"]
        if not ids or self.conn is None:
            return []
        booked = text("SELECT event_id FROM bookings WHERE tool_use_id IN :ids AND event_id IS NOT NULL")
        rows = self.conn.execute(booked.bindparams(bindparam("ids", expanding=True)), {"ids": ids})
        return sorted(int(row[0]) for row in rows)

    def write(self, cid: int | None, error: BaseException | None = None) -> None:
        outcome = self.outcome
        if outcome is not None:
            name, code, reason = outcome.stop.name.lower(), outcome.stop.exit_code, outcome.statement
        elif error is not None and came_from_ctrl_c(error):  # as the edge will exit
            name, code, reason = "error", 130, "Interrupted."
        else:
            name, code, reason = "error", getattr(error, "exit_code", 1), str(error) if error is not None else ""
        record = {
            "conversation": cid,
            "outcome": name,
            "exit_code": code,
            "exit_reason": reason or None,
            "text": outcome.text if outcome is not None else "",
            "tool_calls": self.calls,
            "booked_event_ids": self.booked(),
            "usage": self.usage,
            "cost": self.cost.json() if self.cost is not None else {"usd": 0.0, "estimated": False},
            "iterations": self.iterations,
        }
        self.out.write(json.dumps(record, indent=2, ensure_ascii=False) + "\n")
        self.out.flush()
