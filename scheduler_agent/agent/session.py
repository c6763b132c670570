"""A conversation around the loop: its list, what else the API sees, the checks and the store.

`run_turn` (agent/loop.py) is the agent. A Session gives it a request builder that checks the
list's grammar before every request, and listens to its events to store the list as it
grows. The list stays a plain `list` of dicts, in `session.messages`, for anyone to read.
"""

from __future__ import annotations

import copy
import dataclasses
import os
import sqlite3
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from scheduler_agent.agent.approval import ApprovingToolbox, Decide
from scheduler_agent.agent.errors import AgentError, InputError, ModelUnavailable
from scheduler_agent.agent.events import (
    Event,
    GrammarWarning,
    ReplyReceived,
    ReplySetAside,
    Report,
    RequestSent,
    RoundAnswered,
    Stop,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
    TurnOutcome,
    TurnStarted,
)
from scheduler_agent.agent.loop import Send, add_user_text, answer_all, iterations_in_turn, run_turn, tool_uses
from scheduler_agent.agent.prompt_loader import render
from scheduler_agent.agent.request import DEFAULT_MAX_TOKENS, build_request, encode
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, CallStatus, Toolbox
from scheduler_agent.agent.trim import TRIMS, estimate_tokens
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.backend import open_calendar
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.prefs import preferences_block
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.grammar.check import GrammarError, IncrementalChecker, check, conversation_state
from scheduler_agent.storage import conversations, lease
from scheduler_agent.storage.conversations import Context, Journal, Reply
from scheduler_agent.storage.db import transaction
from scheduler_agent.testing import faults


def system_prompt(conn: sqlite3.Connection, clock: Clock) -> str:
    """prompts/system.md filled from the calendar and the clock, the owner's standing preferences included."""
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
        preferences=preferences_block(conn, owner.name),
    )


def refuse_empty(text: str) -> None:
    """An empty (or all-whitespace) text is the person's mistake: refused before anything is stored."""
    if not text.strip():
        raise InputError('The text to send is empty: say what to schedule, e.g. "a meeting with Priya next week"')


@dataclass(frozen=True)
class Settings:
    model: str
    max_iterations: int
    max_tokens: int = DEFAULT_MAX_TOKENS
    context_budget: int | None = None  # estimated tokens; None sends the whole list
    tool_deadline: float = TOOL_DEADLINE_SECONDS
    trim: str = "first_turn"  # or "newest": the naive trim, only to show what it breaks (agent/trim.py)
    stream: bool = False  # new turns say "stream": true (a resume keeps what its conversation said)
    request_timeout: float = 600.0  # seconds one request to the model may take in all (`--timeout`)
    invites: bool | None = None  # False: `--no-invites`, the calendar server sends no invitations
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
        approved: frozenset[str] = frozenset(),
    ) -> None:
        """`decide` answers for the person before each side effect, except calls of the tools in `approved`
        (`--yes`: bookings and moves); None approves everything (`--yes --yes-cancel`)."""
        self.conn, self.clock, self.send, self.settings, self.report = conn, clock, send, settings, report
        self.messages: list[JSON] = messages if messages is not None else []
        self.cid = cid
        self.journal = Journal(conn, cid, self.messages) if cid is not None else None
        self.checker = IncrementalChecker()
        self.raw: dict[int, list[JSON]] = {}  # index -> the provider's content as it arrived, for the check
        self.calendar = open_calendar(conn, invites=settings.invites)  # the local one, or the CalDAV server
        tools = CalendarTools(conn, clock, settings.tool_deadline, self.calendar)
        self.toolbox: Toolbox = (
            tools if decide is None else ApprovingToolbox(tools, conn, decide, self._listen, approved)
        )
        self.context: Context | None = None  # what the API sees besides the list, as last sent or stored
        self._sent: tuple[int, int] = (0, 0)  # the last request's list length and size in bytes
        self.holder = lease.Holder.me()
        self._holding = False  # this session holds the lease on its stored conversation (a turn is running)
        self._to_store: tuple[str, str | None] | None = None  # set by store(): (started_on, clock pin)
        self._resumed: int | None = None  # iterations already in the turn when `resume` took it up
        self.announce: Callable[[int], None] = lambda cid: None  # hears the id of a conversation just stored

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
        approved: frozenset[str] = frozenset(),
    ) -> Session:
        """Open a stored conversation; its clock is the one it was pinned to, unless `clock` is given."""
        record, messages = conversations.load(conn, cid)
        if clock is None:
            clock = Clock(datetime.fromisoformat(record.clock_pin)) if record.clock_pin else Clock()
        session = cls(conn, clock, send, settings, report, messages=messages, cid=cid, decide=decide, approved=approved)
        session.context = record.context
        return session

    def store(self) -> None:
        """Store this (new) conversation from its first turn on: the row is written with that turn, so a
        session that ends before anyone spoke leaves nothing behind. `announce(cid)` hears the new id."""
        owner = get_owner(self.conn)
        pin = self.clock.pinned.isoformat() if self.clock.pinned else None
        self._to_store = (self.clock.today(owner.tz).isoformat(), pin)

    def _create(self) -> None:
        """Write the conversation's row and its first entries in one transaction."""
        started_on, pin = self._to_store or ("", None)
        self.context = self.context or self.fresh_context()
        with transaction(self.conn):
            cid = conversations.create(self.conn, self.context, started_on=started_on, clock_pin=pin)
            journal = Journal(self.conn, cid, [])
            journal.sync(self.messages)
        self.cid, self.journal, self._to_store = cid, journal, None
        self.announce(cid)

    def fresh_context(self) -> Context:
        """The context for a new user turn: the system prompt rendered from today's calendar and clock."""
        system = system_prompt(self.conn, self.clock)
        settings = self.settings
        return Context(settings.model, settings.max_tokens, system, self.toolbox.definitions, settings.stream)

    # --- turns ------------------------------------------------------------------------------

    def ask(self, text: str) -> TurnOutcome:
        """The person's text joins the list, then the loop runs until the model answers or a bound stops it.

        An empty text is refused before anything is stored: the API takes no empty turn back."""
        if not text.strip():
            raise InputError('The text to send is empty: say what to schedule, e.g. "a meeting with Priya next week"')
        with self._leased():
            fresh = self.fresh_context()
            if fresh != self.context and self.cid is not None:
                conversations.update_context(self.conn, self.cid, fresh)
            self.context = fresh
            self._resumed = None
            if self.cid is not None:
                conversations.set_stop(self.conn, self.cid, None)  # this turn has not ended yet
            add_user_text(self.messages, text)
            self._sync()
            self.report(TurnStarted(text))
            return self._run(self.settings.max_iterations)

    def resume(self) -> TurnOutcome:
        """Finish an interrupted turn with no new input: answer an unanswered round, or ask the model again."""
        with self._leased():
            return self._resume()

    @contextmanager
    def _leased(self) -> Iterator[None]:
        """Hold this conversation's lease while a turn runs (a stored one; exit 8 when another process does).

        What was stored meanwhile by the process that held it before is read first."""
        if self.cid is None:
            yield
            return
        lease.claim(self.conn, self.cid, self.holder)
        self._holding = True
        try:
            self._reload_if_changed()
            yield
        finally:
            self._holding = False
            lease.release(self.conn, self.cid, self.holder)

    def _renew(self) -> None:
        assert self.cid is not None
        if not lease.renew(self.conn, self.cid, self.holder):
            raise lease.ConversationBusy(
                f"conversation {self.cid} was taken over by another process after this one's lease lapsed; "
                "this process stopped before changing anything more"
            )

    def _reload_if_changed(self) -> None:
        assert self.cid is not None and self.journal is not None
        record, stored = conversations.load(self.conn, self.cid)
        last = conversations.Journal(self.conn, self.cid, stored).last
        if len(stored) != self.journal.stored or last != self.journal.last:  # another process wrote it meanwhile
            self.messages[:] = stored
            self.journal = Journal(self.conn, self.cid, self.messages)
            self.checker.reset()
            self.context = record.context

    def _resume(self) -> TurnOutcome:
        state = conversation_state(self.messages)
        if state == "empty":
            raise AgentError(
                f"Nothing to resume: conversation {self.cid} has no turn yet. Start it with "
                f"`scheduler-agent ask --cid {self.cid} TEXT`."
            )
        if state == "complete":
            raise AgentError(
                f"Conversation {self.cid} is complete: nothing to resume. Continue it with "
                f"`scheduler-agent ask --cid {self.cid} TEXT`."
            )
        if self.cid is not None:
            conversations.bump(self.conn, self.cid, "restarts")
            conversations.set_stop(self.conn, self.cid, None)
        done = iterations_in_turn(self.messages)
        self._resumed = done
        if state == "interrupted":  # the calls of the last assistant turn have no results yet: run them now
            results, interrupted = answer_all(self.toolbox, tool_uses(self.messages[-1]), done, self._listen)
            self.messages.append({"role": "user", "content": results})
            self._listen(RoundAnswered(done, self.messages[-1]))
            if interrupted:
                raise KeyboardInterrupt
        return self._run(done + self.settings.max_iterations)

    def _resumed_outcome(self, outcome: TurnOutcome) -> TurnOutcome:
        """At the bound after a resume, say both counts: --max-iterations counts the iterations since resuming."""
        if self._resumed is None or outcome.stop is not Stop.ITERATION_BOUND:
            return outcome
        since = outcome.iterations - self._resumed
        _, bound, tail = outcome.statement.partition("(the bound)")
        if not bound:
            return outcome
        statement = (
            f"Stopped after {outcome.iterations} iterations in this turn, {since} since resuming (the bound: "
            f"--max-iterations counts those after a resume){tail}"
        )
        return dataclasses.replace(outcome, statement=statement)

    def _run(self, max_iterations: int) -> TurnOutcome:
        try:
            outcome = run_turn(
                self.messages,
                build=self._build,
                send=self.send,
                toolbox=self.toolbox,
                max_iterations=max_iterations,
                report=self._listen,
            )
            return self._resumed_outcome(outcome)
        except ModelUnavailable:
            if self.cid is not None:
                conversations.bump(self.conn, self.cid, "retries_exhausted")
            raise

    # --- what the loop calls back -----------------------------------------------------------

    def _build(self, messages: list[JSON]) -> JSON:
        """The request for this iteration, after the grammar check: a list the API would reject is never sent."""
        violations = self.checker.check(messages, mode="request", raw=self.raw)
        view = messages
        context = self.context or self.fresh_context()
        if not violations and self.settings.context_budget is not None:
            # the budget is the whole request's: what the system prompt and the tools take is not the list's
            fixed = estimate_tokens(context.system) + estimate_tokens(context.tools)
            view = TRIMS[self.settings.trim](messages, self.settings.context_budget - fixed)
            if view is not messages:
                violations = check(view, mode="request")
        refused = violations if self.settings.strict else [v for v in violations if not v.api_accepts]
        if refused:
            advice = ""
            if self.cid is not None:
                advice = (
                    f"`scheduler-agent conversations repair {self.cid}` shows what is wrong and makes the smallest "
                    "change that makes the list valid again."
                )
            raise GrammarError(refused, view, advice)
        if violations:
            self.report(GrammarWarning(violations))
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
        if self._holding and isinstance(event, RequestSent | ToolCalled):  # before a wait: the model, a tool
            self._renew()
        if isinstance(event, ReplySetAside):
            self._sync(self._reply_record(event.iteration, event.reply, len(self.messages), kept=True))
        elif isinstance(event, ReplyReceived):
            # Only the newest: older turns were checked against theirs when they were new.
            self.raw = {len(self.messages) - 1: copy.deepcopy(event.reply["content"])}
            self._sync(self._reply_record(event.iteration, event.reply, len(self.messages) - 1))
            faults.reach("after_assistant_stored")
        elif isinstance(event, RoundAnswered):
            self._sync()
            faults.reach("after_results_stored")
        elif isinstance(event, ToolAnswered):
            if event.status == CallStatus.TIMED_OUT and self.cid is not None:
                conversations.bump(self.conn, self.cid, "tool_deadlines")
            if self._first_of_several(event.call):
                faults.reach("between_calls")
        elif isinstance(event, TurnEnded):
            event = TurnEnded(self._resumed_outcome(event.outcome))
            if self.cid is not None:
                stop = {Stop.ITERATION_BOUND: "bound", Stop.MODEL_STOPPED: "model"}.get(event.outcome.stop)
                conversations.set_stop(self.conn, self.cid, stop)  # type: ignore[arg-type]
        elif isinstance(event, RequestSent):
            self._sent = (len(event.request["messages"]), len(encode(event.request)))
            if self._sent[0] < len(self.messages):  # the budget left entries out: say so
                event = dataclasses.replace(event, of=len(self.messages))
            faults.reach_later("waiting_for_model")
        self.report(event)

    def _first_of_several(self, call: JSON) -> bool:
        calls = tool_uses(self.messages[-1]) if self.messages[-1]["role"] == "assistant" else []
        return len(calls) > 1 and calls[0]["id"] == call["id"]

    def _reply_record(self, iteration: int, reply: JSON, position: int, kept: bool = False) -> Reply:
        """The row beside the list; a reply kept out of the list (`kept`) keeps its whole body there."""
        body = reply if isinstance(reply, dict) else {"unreadable": repr(reply)}
        usage = body.get("usage")
        stop_reason = body.get("stop_reason")
        return Reply(
            position=position,
            iteration=iteration,
            model=str(body.get("model", "")),
            stop_reason=stop_reason if isinstance(stop_reason, str) else None,
            usage=dict(usage) if isinstance(usage, dict) else {},
            request_bytes=self._sent[1],
            appended=not kept,
            body=body if kept else None,
        )

    def _sync(self, reply: Reply | None = None) -> None:
        if self.journal is None and self._to_store is not None and self.messages:
            self._create()
        if self.journal is not None:
            self.journal.sync(self.messages, reply)
