"""A conversation around the loop: its list, what else the API sees, the checks and the store.

`run_turn` (agent/loop.py) is the agent. A Session gives it its two steps (steps.py): a model
step whose request builder checks the list's grammar before every request and which stores each reply
as it arrives, and a tool round that runs the calendar's tools and stores each round. The list stays a
plain `list` of dicts, in `session.messages`, for anyone to read.

The pieces beside this module: checked_request.py (the check, the budget, the body and its size),
store.py (the conversation's rows), listener.py (what it does with the loop's events),
lease.py (one process at a time), resuming.py.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from sqlalchemy import Connection

from scheduler_agent.agent.errors import BudgetTooSmall, InputError, ModelUnavailable
from scheduler_agent.agent.events import Report, TurnOutcome, TurnStarted
from scheduler_agent.agent.loop import Send, add_user_text, iterations_in_turn, run_turn
from scheduler_agent.agent.replies import CallIds
from scheduler_agent.agent.request import DEFAULT_MAX_TOKENS
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, Previewing, Toolbox
from scheduler_agent.agent.trim import smallest_budget
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.calendar.opening import open_calendar
from scheduler_agent.calendar.people import get_owner, list_people
from scheduler_agent.calendar.prefs import preferences_block
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.mcp_client.turn import offered, start_turn
from scheduler_agent.session.approval import BOOKINGS, ApprovingToolbox, Decide
from scheduler_agent.session.checked_request import RequestBuilder, repair_advice
from scheduler_agent.session.entry_texts import EntryTexts
from scheduler_agent.session.lease import SessionLease
from scheduler_agent.session.listener import SessionListener
from scheduler_agent.session.prompt_loader import render
from scheduler_agent.session.resuming import resumable, resumed_outcome
from scheduler_agent.session.steps import StoredModelStep, StoredToolRound
from scheduler_agent.session.store import SessionStore
from scheduler_agent.storage import conversations
from scheduler_agent.storage.conversations import Context, Reply

if TYPE_CHECKING:  # the MCP SDK is imported only when a server is given (--mcp, the config file)
    from scheduler_agent.mcp_client.toolbox import McpServers


def system_prompt(conn: Connection, clock: Clock) -> str:
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


def refuse_small_budget(session: Session, text: str = "") -> None:
    """A --context-budget no request could keep to is the person's mistake: refused at the start (`ask`, `chat`),
    before the turn is stored, naming the smallest budget that can work (the system prompt, the tools, the first
    and the newest turn). A replayed session keeps the budget it was recorded with."""
    budget = session.settings.context_budget
    if budget is None:
        return
    messages = session.messages
    with_turn = [*messages[:-1], dict(messages[-1])] if messages else []
    add_user_text(with_turn, text)  # the list as it would be sent, the stored one untouched
    context = session.fresh_context()
    smallest = smallest_budget(context.system, context.tools, with_turn)
    if budget < smallest:
        raise BudgetTooSmall(
            f"--context-budget {budget} is smaller than the system prompt, the tool definitions and the first and "
            f"newest turns take (about {smallest} tokens): give --context-budget {smallest} or more"
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
    request_timeout: float = 600.0  # seconds one request to the model may take in all (`--timeout`)
    invites: bool | None = None  # False: `--no-invites`, the calendar server sends no invitations
    options: tuple[tuple[str, Any], ...] = ()  # a person's `-o` keys for each new turn (agent/options.py)
    # Strict: refuse any grammar violation, even one the API would accept. The tests run strict.
    strict: bool = field(default_factory=lambda: os.environ.get("SCHEDULER_AGENT_STRICT") == "1")


class Session:
    """One conversation: `messages` (the whole state), its `context`, and, when stored, its id."""

    def __init__(
        self,
        conn: Connection,
        clock: Clock,
        send: Send,
        settings: Settings,
        report: Report,
        *,
        messages: list[JSON] | None = None,
        cid: int | None = None,
        decide: Decide | None = None,
        approved: frozenset[str] = frozenset(),
        mcp: McpServers | None = None,
    ) -> None:
        """`decide` answers for the person before each side effect, except calls of the tools in `approved`
        (`--yes`: bookings and moves, and every tool of the MCP servers `mcp`); None approves everything."""
        self.conn, self.clock, self.send, self.settings, self.report = conn, clock, send, settings, report
        self.messages: list[JSON] = messages if messages is not None else []
        texts = EntryTexts()  # each entry's text, encoded once for the check, the size and the store
        self.records = SessionStore(conn, cid, self.messages, texts)
        self.requests = RequestBuilder(report, settings.context_budget, settings.trim, settings.strict, texts)
        self.lease = SessionLease(conn)
        self._listen = SessionListener(self.messages, self.records, self.requests, self.lease, report)
        self.calls = CallIds()  # the list's call ids, kept between turns (a reply may not reuse one)
        self.calendar = open_calendar(conn, invites=settings.invites)  # the local one, or the CalDAV server
        tools: Previewing = CalendarTools(conn, clock, settings.tool_deadline, self.calendar)
        self.mcp = mcp  # the MCP servers whose tools join the calendar's (mcp_client/)
        tools = tools if mcp is None else mcp.toolbox(tools, approve_all=decide is None or approved >= BOOKINGS)
        self.toolbox: Toolbox = ApprovingToolbox(tools, conn, decide, self._listen, approved) if decide else tools
        # the loop's two steps, wired to the check, the store and the calendar (session_steps.py)
        self.model_step = StoredModelStep(
            self._build, self._send, self._listen, self.calls, self.records, self.requests, self.sync
        )
        self.tool_round = StoredToolRound(self.toolbox, self._listen, self.records, self.sync)
        self.context: Context | None = None  # what the API sees besides the list, as last sent or stored
        self.announce: Callable[[int], None] = lambda cid: None  # hears the id of a conversation just stored

    @property
    def cid(self) -> int | None:
        """The stored conversation's id; None until it is stored (see `store`)."""
        return self.records.cid

    # --- opening ----------------------------------------------------------------------------

    @classmethod
    def stored(
        cls,
        conn: Connection,
        cid: int,
        send: Send,
        settings: Settings,
        report: Report,
        clock: Clock | None,
        decide: Decide | None = None,
        approved: frozenset[str] = frozenset(),
        mcp: McpServers | None = None,
    ) -> Session:
        """Open a stored conversation; its clock is the one it was pinned to, unless `clock` is given."""
        record, messages = conversations.load(conn, cid)
        if clock is None:
            clock = Clock(datetime.fromisoformat(record.clock_pin)) if record.clock_pin else Clock()
        session = cls(
            conn, clock, send, settings, report, messages=messages, cid=cid, decide=decide, approved=approved, mcp=mcp
        )
        session.context = record.context
        session.requests.resume(messages, record.checked, record.sizes, record.written)
        return session

    def store(self) -> None:
        """Store this (new) conversation from its first turn on: the row is written with that turn, so a
        session that ends before anyone spoke leaves nothing behind. `announce(cid)` hears the new id."""
        owner = get_owner(self.conn)
        pin = self.clock.pinned.isoformat() if self.clock.pinned else None
        self.records.pending = (self.clock.today(owner.tz).isoformat(), pin)

    def fresh_context(self) -> Context:
        """The context for a new user turn: the system prompt rendered from today's calendar and clock."""
        system = system_prompt(self.conn, self.clock)
        settings = self.settings
        tools, options = self.toolbox.definitions, dict(settings.options)
        return Context(settings.model, settings.max_tokens, system, tools, settings.stream, options, offered(self.mcp))

    def sync(self, reply: Reply | None = None) -> None:
        """Store what changed in the list now, and `reply` beside it (the loop's events do this as it runs);
        a conversation to be stored (`store`) is created by the first call that has an entry to write."""
        created = self.records.sync(self.messages, lambda: self.context or self._set_context(), reply)
        if created is not None:
            self.announce(created)

    def _set_context(self) -> Context:
        self.context = self.fresh_context()
        return self.context

    # --- turns ------------------------------------------------------------------------------

    def ask(self, text: str) -> TurnOutcome:
        """The person's text joins the list, then the loop runs until the model answers or a bound stops it.

        An empty text is refused before anything is stored: the API takes no empty turn back."""
        refuse_empty(text)
        with self._leased():
            start_turn(self.mcp)  # the MCP servers' tools as they are now
            fresh = self.fresh_context()
            if fresh != self.context and self.cid is not None:
                conversations.update_context(self.conn, self.cid, fresh)
            self.context = fresh
            self._listen.resumed = None
            self.records.set_stop(None)  # this turn has not ended yet
            add_user_text(self.messages, text)
            self.sync()
            self.report(TurnStarted(text))
            return self._run(self.settings.max_iterations)

    def resume(self) -> TurnOutcome:
        """Finish an interrupted turn with no new input: answer an unanswered round, or ask the model again."""
        with self._leased():
            state = resumable(self.messages, self.cid)
            self.records.bump("restarts")
            self.records.set_stop(None)
            done = iterations_in_turn(self.messages)
            self._listen.resumed = done
            if state == "interrupted":  # the calls of the last assistant turn have no results yet: run them now
                self.tool_round(self.messages, done)
            return self._run(done + self.settings.max_iterations)

    @contextmanager
    def _leased(self) -> Iterator[None]:
        """Hold this conversation's lease while a turn runs (a stored one; exit 8 when another process does).

        What was stored meanwhile by the process that held it before is read first."""
        with self.lease.held(self.cid):
            context = self.records.reload_if_changed(self.messages)
            if context is not None:  # another process wrote it meanwhile: the list now is what it stored
                self.requests.forget()
                self.context = context
            yield

    def _run(self, max_iterations: int) -> TurnOutcome:
        try:
            outcome = run_turn(
                self.messages,
                model_step=self.model_step,
                tool_round=self.tool_round,
                max_iterations=max_iterations,
                report=self._listen,
            )
            return resumed_outcome(outcome, self._listen.resumed)
        except ModelUnavailable:
            self.records.bump("retries_exhausted")
            raise

    def _send(self, request: JSON) -> JSON:
        return self.send(request)  # `send` may be replaced after the steps were made (a test does)

    def _build(self, messages: list[JSON]) -> JSON:
        """The request for this iteration, after the grammar check: a list the API would reject is never sent."""
        return self.requests.build(messages, self.context or self._set_context(), lambda: repair_advice(self.cid))
