"""What a session does with the loop's events before the person hears of them.

What the list gained is already stored when its event comes: the session's steps store it first
(session/steps.py). Here: the lease renewed before each wait, the request's size (for its reply's
row), the counters, and how the turn ended.
"""

from __future__ import annotations

from scheduler_agent.agent import faults
from scheduler_agent.agent.events import (
    Event,
    Report,
    RequestSent,
    Stop,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
)
from scheduler_agent.agent.loop import tool_uses
from scheduler_agent.agent.toolbox import CallStatus
from scheduler_agent.agent.types import JSON
from scheduler_agent.session.checked_request import RequestBuilder
from scheduler_agent.session.lease import SessionLease
from scheduler_agent.session.resuming import resumed_outcome
from scheduler_agent.session.store import SessionStore


class SessionListener:
    """The `report` a session gives the loop and its steps: it renews the lease, then passes the event on."""

    def __init__(
        self, messages: list[JSON], records: SessionStore, requests: RequestBuilder, lease: SessionLease, report: Report
    ) -> None:
        self.messages, self.records, self.requests, self.lease = messages, records, requests, lease
        self.report = report
        self.resumed: int | None = None  # iterations already in the turn when `resume` took it up

    def __call__(self, event: Event) -> None:
        if isinstance(event, (RequestSent, ToolCalled)):  # before a wait: the model, a tool
            self.lease.renew()
        if isinstance(event, ToolAnswered):
            if event.status == CallStatus.TIMED_OUT:
                self.records.bump("tool_deadlines")
            if self._first_of_several(event.call):
                faults.reach("between_calls")
        elif isinstance(event, TurnEnded):
            event = TurnEnded(resumed_outcome(event.outcome, self.resumed))
            stop = {Stop.ITERATION_BOUND: "bound", Stop.MODEL_STOPPED: "model"}.get(event.outcome.stop)
            self.records.set_stop(stop)  # type: ignore[arg-type]
        elif isinstance(event, RequestSent):
            event = self._sized(event)
            faults.reach_later("waiting_for_model")
        self.report(event)

    def _sized(self, event: RequestSent) -> RequestSent:
        """The event with the request's size (kept by entry), and `of` when the budget left entries out."""
        size = self.requests.size_of(event.request)
        self.records.request_bytes, self.records.checked = size, self.requests.clean
        left_out = len(event.request["messages"]) < len(self.messages)
        return RequestSent(event.iteration, event.request, len(self.messages) if left_out else event.of, size)

    def _first_of_several(self, call: JSON) -> bool:
        calls = tool_uses(self.messages[-1]) if self.messages[-1]["role"] == "assistant" else []
        return len(calls) > 1 and calls[0]["id"] == call["id"]
