"""What the loop reports while it runs. The loop never prints; the CLI renders these."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from scheduler_agent.agent.types import JSON


@dataclass(frozen=True)
class TurnStarted:
    """The person said `text`; it joined the list as the start of a user turn."""

    text: str


@dataclass(frozen=True)
class RequestSent:
    """About to send `request` (the whole body); `iteration` counts from 1 within the user turn.

    `of`: the stored list's length when the request sends fewer entries (a context budget left some out).
    `size`: `len(encode(request))`, when the sender keeps it (a Session does, by entry); None: not known."""

    iteration: int
    request: JSON
    of: int | None = None
    size: int | None = None


@dataclass(frozen=True)
class TextDelta:
    """A piece of the model's text as it streams in (display only: the list gets the assembled reply)."""

    iteration: int
    text: str


@dataclass(frozen=True)
class ReplyReceived:
    """The API's response body, as it came (already appended to the list)."""

    iteration: int
    reply: JSON


@dataclass(frozen=True)
class ReplySetAside:
    """A reply that was NOT appended: it was empty (`fit` "empty") or the API would refuse it back
    ("unusable", `problems` say why). It is stored beside the list; the list is as it was."""

    iteration: int
    reply: JSON
    fit: str
    problems: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Retrying:
    """The API failed (`status`, e.g. 529, and its error `kind`); the request is sent again in `wait` seconds."""

    status: int | None
    kind: str
    wait: float
    attempt: int  # the attempt about to be made, from 2
    attempts: int  # how many there are at most


@dataclass(frozen=True)
class StillWaiting:
    """No part of the reply has come for a while: `waited` seconds since the request went, of `timeout` at most.

    Reported from a thread of its own while the request is out; Ctrl-C stops the wait, the list intact."""

    waited: float
    timeout: float


@dataclass(frozen=True)
class ApprovalAsked:
    """Before a side effect: the person is asked to approve what `summary` says."""

    call: JSON
    summary: str


@dataclass(frozen=True)
class ApprovalAnswered:
    call: JSON
    approved: bool
    reason: str = ""
    end_of_input: bool = False


@dataclass(frozen=True)
class RoundAnswered:
    """The user turn of results was appended: one `tool_result` per call of the assistant turn before it."""

    iteration: int
    results: JSON


@dataclass(frozen=True)
class ToolCalled:
    iteration: int
    call: JSON


@dataclass(frozen=True)
class ToolAnswered:
    """`status` says how the call ended: answered, failed, timed_out or interrupted (tools.CallStatus)."""

    iteration: int
    call: JSON
    result: JSON
    status: str = "answered"


class Stop(Enum):
    """Why a user turn ended, and the exit code the CLI gives it."""

    DONE = 0
    ITERATION_BOUND = 3
    MODEL_STOPPED = 4
    UNUSABLE_REPLY = 7  # the model's reply could not be used (kept beside the list, not in it)

    @property
    def exit_code(self) -> int:
        return self.value


@dataclass(frozen=True)
class TurnOutcome:
    """How a user turn ended. `text` is the model's last text; `statement` explains any non-DONE stop."""

    stop: Stop
    iterations: int
    text: str = ""
    statement: str = ""
    stop_reason: str | None = None
    last_calls: list[JSON] = field(default_factory=list)


@dataclass(frozen=True)
class GrammarWarning:
    """The list breaks a rule the API would not enforce (it was sent): `violations` say where and why."""

    violations: list[Any]


@dataclass(frozen=True)
class TurnEnded:
    outcome: TurnOutcome


Event = (
    TurnStarted
    | RequestSent
    | TextDelta
    | ReplyReceived
    | ReplySetAside
    | Retrying
    | StillWaiting
    | ToolCalled
    | ApprovalAsked
    | ApprovalAnswered
    | ToolAnswered
    | RoundAnswered
    | GrammarWarning
    | TurnEnded
)
Report = Callable[[Event], None]


def ignore(event: Event) -> None:
    """A report callback that drops every event."""


class StreamedText:
    """Streamed text as `TextDelta` events: give the Session this as its report, and the ModelAPI `on_text`.

    It passes every event on to `report`, and each piece of text as a `TextDelta` of the iteration
    whose request was last sent (the ModelAPI knows nothing of iterations)."""

    def __init__(self, report: Report) -> None:
        self.report = report
        self.iteration = 0

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestSent):
            self.iteration = event.iteration
        self.report(event)

    def on_text(self, text: str) -> None:
        self.report(TextDelta(self.iteration, text))
