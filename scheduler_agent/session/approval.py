"""Approval before a side effect: the person says yes, no, or no with a reason, before a change is made.

One policy for `ask`, `chat` and `resume`. Bookings and moves are asked unless `--yes`; a
cancellation is asked even with `--yes` (only `--yes-cancel` approves it without asking), since
text the model read elsewhere (an imported title) must never be enough to remove a meeting.
The person sees what will change, before and after. A refusal goes back to the model as an
`is_error` result carrying the reason, so it can propose something else. The end of standard input
counts as a refusal whose text says how to allow that kind of change (`--yes`, `--yes-cancel`).
Answers are stored by `tool_use` id, so a resumed round never asks twice, and a cassette replays them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Connection, text

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.events import ApprovalAnswered, ApprovalAsked, Report
from scheduler_agent.agent.toolbox import Previewing, ToolError, ToolOutput
from scheduler_agent.agent.types import JSON
from scheduler_agent.storage.db import transaction


@dataclass(frozen=True)
class Decision:
    approved: bool
    reason: str = ""
    end_of_input: bool = False


Decide = Callable[[JSON, str], Decision]  # (the call, what it will do) -> the person's answer


def ask_on(read_line: Callable[[str], str | None], write: Callable[[str], object]) -> Decide:
    """Ask on standard input (a terminal or not): y/yes, n/no, or `no, <reason>` (any text after a no)."""

    def decide(call: JSON, summary: str) -> Decision:
        write(f"? {summary}\n")
        for _ in range(3):
            answer = read_line("  Approve? [y]es / [n]o / no, <reason>: ")
            if answer is None:
                return Decision(False, end_of_input=True)
            text = answer.strip()
            word, _, rest = text.partition(",") if "," in text else text.partition(" ")
            if word.lower() in ("y", "yes"):
                return Decision(True)
            if word.lower() in ("n", "no"):
                return Decision(False, rest.strip())
            write("  Please answer y, n, or no followed by a reason.\n")
        return Decision(False, "no clear answer was given")

    return decide


def from_answers(answers: Mapping[str, Mapping[str, Any]]) -> Decide:
    """Answers recorded by tool_use id (a cassette's setup); a call not in it is approved."""

    def decide(call: JSON, summary: str) -> Decision:
        answer = answers.get(call["id"], {"approved": True})
        return Decision(bool(answer["approved"]), str(answer.get("reason", "")), bool(answer.get("end_of_input")))

    return decide


BOOKINGS = frozenset({"create_event", "move_event"})
"""What `--yes` approves without asking; a cancellation is never among them (`--yes-cancel`)."""

_UNCHANGED = {"move_event": "Nothing was moved.", "cancel_event": "Nothing was cancelled."}
_ALLOW = {
    "move_event": "--yes to allow bookings and moves",
    "cancel_event": "--yes-cancel to allow cancellations",
}


def refusal_text(call: Mapping[str, Any], summary: str, decision: Decision) -> str:
    name = call.get("name", "")
    unchanged = _UNCHANGED.get(name, "Nothing was booked.")
    if decision.end_of_input:
        allow = _ALLOW.get(name, "--yes to allow bookings")
        return (
            f"Not run: the user was asked to approve ({summary}) but standard input ended before an answer. "
            f"{unchanged} Tell the user to answer the prompt, or to run again with {allow} without asking."
        )
    why = f" Their reason: {decision.reason!r}." if decision.reason else " They gave no reason."
    return (
        f"Not run: the user declined ({summary}).{why} {unchanged} Propose something else that fits "
        "what they said, or ask them what they would like."
    )


class ApprovingToolbox:
    """A Toolbox that asks before each side effect and keeps the answer by tool_use id.

    Calls of the tools in `approved` (`--yes`: BOOKINGS) run without asking; the others are asked.
    """

    def __init__(
        self,
        inner: Previewing,
        conn: Connection,
        decide: Decide,
        report: Report,
        approved: frozenset[str] = frozenset(),
    ) -> None:
        self.inner, self.conn, self.decide, self.report = inner, conn, decide, report
        self.approved = approved
        self.deadline_seconds = inner.deadline_seconds

    @property
    def definitions(self) -> list[JSON]:
        return self.inner.definitions

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        return self.inner.side_effect_of(name, tool_use_id)

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> ToolOutput:
        summary = self.inner.preview(name, arguments, tool_use_id)  # every check first: ToolError asks nothing
        if summary is not None and name not in self.approved:
            call = {"type": "tool_use", "id": tool_use_id, "name": name, "input": dict(arguments)}
            decision = self.recorded(tool_use_id)
            if decision is None:
                self.report(ApprovalAsked(call, summary))
                decision = self.decide(call, summary)
                self.record(tool_use_id, decision)
                self.report(ApprovalAnswered(call, decision.approved, decision.reason, decision.end_of_input))
            if not decision.approved:
                raise ToolError(refusal_text(call, summary, decision))
            deadline = Deadline.after(deadline.seconds)  # the person's thinking time is not the tool's
        return self.inner.run(name, arguments, tool_use_id, deadline)

    def recorded(self, tool_use_id: str) -> Decision | None:
        row = self.conn.execute(
            text("SELECT approved, reason, end_of_input FROM approvals WHERE tool_use_id = :tool_use_id"),
            {"tool_use_id": tool_use_id},
        ).fetchone()
        return None if row is None else Decision(bool(row[0]), row[1], bool(row[2]))

    def record(self, tool_use_id: str, decision: Decision) -> None:
        with transaction(self.conn):
            self.conn.execute(
                # an upsert, not INSERT OR REPLACE: PostgreSQL has only this form
                text(
                    "INSERT INTO approvals (tool_use_id, approved, reason, end_of_input) VALUES (:tool_use_id, "
                    ":approved, :reason, :end_of_input) "
                    "ON CONFLICT (tool_use_id) DO UPDATE SET approved = excluded.approved, reason = excluded.reason, "
                    "end_of_input = excluded.end_of_input, answered_at = excluded.answered_at"
                ),
                {
                    "tool_use_id": tool_use_id,
                    "approved": int(decision.approved),
                    "reason": decision.reason,
                    "end_of_input": int(decision.end_of_input),
                },
            )
