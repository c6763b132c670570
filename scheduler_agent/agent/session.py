"""A conversation around the loop: its list, what else the API sees, the checks and the store.

`run_turn` (agent/loop.py) is the agent. A Session gives it a request builder that checks the
list's grammar before every request, and listens to its events to store the list as it
grows. The list stays a plain `list` of dicts, in `session.messages`, for anyone to read.
"""

from __future__ import annotations

import copy
import os
import sqlite3
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduler_agent.agent.approval import ApprovingToolbox, Decide
from scheduler_agent.agent.errors import AgentError, ModelUnavailable
from scheduler_agent.agent.events import (
    Event,
    GrammarWarning,
    ReplyReceived,
    Report,
    RequestSent,
    RoundAnswered,
    ToolAnswered,
    TurnOutcome,
    TurnStarted,
)
from scheduler_agent.agent.loop import Send, add_user_text, answer_all, iterations_in_turn, run_turn, tool_uses
from scheduler_agent.agent.prompt_loader import render
from scheduler_agent.agent.request import DEFAULT_MAX_TOKENS, build_request, encode
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, CallStatus, Toolbox
from scheduler_agent.agent.trim import TRIMS
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.grammar.check import GrammarError, IncrementalChecker, check, conversation_state
from scheduler_agent.storage import conversations
from scheduler_agent.storage.conversations import Context, Journal, Reply
from scheduler_agent.testing import faults


def system_prompt(conn: sqlite3.Connection, clock: Clock) -> str:
    """prompts/system.md filled from the calendar and the clock."""
    owner = get_owner(conn)
    today = clock.today(owner.tz)
    next_monday = today + timedelta(days=7 - today.weekday())
    people = "\n".join(f"- {p.key}: {p.name}, {p.tz}" for p in list_people(conn)) or "- (nobody yet)"
    return render(
        "system.md",
        owner_name=owner.name,
        owner_tz=owner.tz,
        weekday=today.strftime("%A"),
        today=today.isoformat(),
        next_monday=next_monday.isoformat(),
        people=people,
    )


@dataclass(frozen=True)
class Settings:
    model: str
    max_iterations: int
    max_tokens: int = DEFAULT_MAX_TOKENS
    context_budget: int | None = None  # estimated tokens; None sends the whole list
    tool_deadline: float = TOOL_DEADLINE_SECONDS
    trim: str = "first_turn"  # or "newest": the naive trim, only to show what it breaks (agent/trim.py)
    stream: bool = False  # new turns say "stream": true (a resume keeps what its conversation said)
    # Strict: refuse any grammar violation, even one the API would accept. The tests run strict.
    strict: bool = field(default_factory=lambda: os.environ.get("SCHEDULER_AGENT_STRICT") == "1")


class Session:
    """One conversation: `messages` (the whole state), its `context`, and, when stored, its id."""

    def __init__(
        self,
        conn: sqlite3.Connection,
        clock: Clock,
        send: Send,
        settings: Settings,
        report: Report,
        *,
        messages: list[JSON] | None = None,
        cid: int | None = None,
        decide: Decide | None = None,
    ) -> None:
        """`decide` answers for the person before each side effect; None approves everything (`--yes`)."""
        self.conn, self.clock, self.send, self.settings, self.report = conn, clock, send, settings, report
        self.messages: list[JSON] = messages if messages is not None else []
        self.cid = cid
        self.journal = Journal(conn, cid, self.messages) if cid is not None else None
        self.checker = IncrementalChecker()
        self.raw: dict[int, list[JSON]] = {}  # index -> the provider's content as it arrived, for the check
        tools = CalendarTools(conn, clock, settings.tool_deadline)
        self.toolbox: Toolbox = tools if decide is None else ApprovingToolbox(tools, conn, decide, self._listen)
        self.context: Context | None = None  # what the API sees besides the list, as last sent or stored
        self._sent: tuple[int, int] = (0, 0)  # the last request's list length and size in bytes

    # --- opening ----------------------------------------------------------------------------

    @classmethod
    def stored(
        cls,
        conn: sqlite3.Connection,
        cid: int,
        send: Send,
        settings: Settings,
        report: Report,
        clock: Clock | None,
        decide: Decide | None = None,
    ) -> Session:
        """Open a stored conversation; its clock is the one it was pinned to, unless `clock` is given."""
        record, messages = conversations.load(conn, cid)
        if clock is None:
            clock = Clock(datetime.fromisoformat(record.clock_pin)) if record.clock_pin else Clock()
        session = cls(conn, clock, send, settings, report, messages=messages, cid=cid, decide=decide)
        session.context = record.context
        return session

    def store(self) -> int:
        """Start storing this (new) conversation; returns its id."""
        owner = get_owner(self.conn)
        pin = self.clock.pinned.isoformat() if self.clock.pinned else None
        started_on = self.clock.today(owner.tz).isoformat()
        self.context = self.context or self.fresh_context()
        self.cid = conversations.create(self.conn, self.context, started_on=started_on, clock_pin=pin)
        self.journal = Journal(self.conn, self.cid, self.messages)
        return self.cid

    def fresh_context(self) -> Context:
        """The context for a new user turn: the system prompt rendered from today's calendar and clock."""
        system = system_prompt(self.conn, self.clock)
        settings = self.settings
        return Context(settings.model, settings.max_tokens, system, self.toolbox.definitions, settings.stream)

    # --- turns ------------------------------------------------------------------------------

    def ask(self, text: str) -> TurnOutcome:
        """The person's text joins the list, then the loop runs until the model answers or a bound stops it."""
        fresh = self.fresh_context()
        if fresh != self.context and self.cid is not None:
            conversations.update_context(self.conn, self.cid, fresh)
        self.context = fresh
        add_user_text(self.messages, text)
        self._sync()
        self.report(TurnStarted(text))
        return self._run(self.settings.max_iterations)

    def resume(self) -> TurnOutcome:
        """Finish an interrupted turn with no new input: answer an unanswered round, or ask the model again."""
        state = conversation_state(self.messages)
        if state == "complete":
            raise AgentError(
                f"Conversation {self.cid} is complete: nothing to resume. Continue it with "
                f"`scheduler-agent ask --cid {self.cid} TEXT`."
            )
        if self.cid is not None:
            conversations.bump(self.conn, self.cid, "restarts")
        done = iterations_in_turn(self.messages)
        if state == "interrupted":  # the calls of the last assistant turn have no results yet: run them now
            results, interrupted = answer_all(self.toolbox, tool_uses(self.messages[-1]), done, self._listen)
            self.messages.append({"role": "user", "content": results})
            self._listen(RoundAnswered(done, self.messages[-1]))
            if interrupted:
                raise KeyboardInterrupt
        return self._run(done + self.settings.max_iterations)

    def _run(self, max_iterations: int) -> TurnOutcome:
        try:
            return run_turn(
                self.messages,
                build=self._build,
                send=self.send,
                toolbox=self.toolbox,
                max_iterations=max_iterations,
                report=self._listen,
            )
        except ModelUnavailable:
            if self.cid is not None:
                conversations.bump(self.conn, self.cid, "retries_exhausted")
            raise

    # --- what the loop calls back -----------------------------------------------------------

    def _build(self, messages: list[JSON]) -> JSON:
        """The request for this iteration, after the grammar check: a list the API would reject is never sent."""
        violations = self.checker.check(messages, mode="request", raw=self.raw)
        view = messages
        if not violations and self.settings.context_budget is not None:
            view = TRIMS[self.settings.trim](messages, self.settings.context_budget)
            if view is not messages:
                violations = check(view, mode="request")
        refused = violations if self.settings.strict else [v for v in violations if not v.api_accepts]
        if refused:
            raise GrammarError(refused)
        if violations:
            self.report(GrammarWarning(violations))
        context = self.context or self.fresh_context()
        return build_request(
            model=context.model,
            system=context.system,
            tools=context.tools,
            messages=view,
            max_tokens=context.max_tokens,
            stream=context.stream,
        )

    def _listen(self, event: Event) -> None:
        """Store first, then tell the person: what is reported has already been written."""
        if isinstance(event, ReplyReceived):
            # Only the newest: older turns were checked against theirs when they were new.
            self.raw = {len(self.messages) - 1: copy.deepcopy(event.reply["content"])}
            self._sync(self._reply_record(event))
            faults.reach("after_assistant_stored")
        elif isinstance(event, RoundAnswered):
            self._sync()
            faults.reach("after_results_stored")
        elif isinstance(event, ToolAnswered):
            if event.status == CallStatus.TIMED_OUT and self.cid is not None:
                conversations.bump(self.conn, self.cid, "tool_deadlines")
            if self._first_of_several(event.call):
                faults.reach("between_calls")
        elif isinstance(event, RequestSent):
            self._sent = (len(event.request["messages"]), len(encode(event.request)))
            faults.reach_later("waiting_for_model")
        self.report(event)

    def _first_of_several(self, call: JSON) -> bool:
        calls = tool_uses(self.messages[-1]) if self.messages[-1]["role"] == "assistant" else []
        return len(calls) > 1 and calls[0]["id"] == call["id"]

    def _reply_record(self, event: ReplyReceived) -> Reply:
        reply = event.reply
        return Reply(
            position=len(self.messages) - 1,
            iteration=event.iteration,
            model=str(reply.get("model", "")),
            stop_reason=reply.get("stop_reason"),
            usage=dict(reply.get("usage") or {}),
            request_bytes=self._sent[1],
        )

    def _sync(self, reply: Reply | None = None) -> None:
        if self.journal is not None:
            self.journal.sync(self.messages, reply)
