"""A session's two steps: the loop's own (agent/steps.py), with the grammar check, the store and the calendar.

Each step stores what it appends before anyone hears of it: the assistant turn the instant the reply is in
hand (before any tool runs), a round's results in one transaction. And each is safe to run again on the list
as it was before it ran, which a durable engine does after a crash: what the step already stored is taken
from the store instead of being done again. The docstrings say which property makes each repeat safe.
"""

from __future__ import annotations

from collections.abc import Callable

from scheduler_agent.agent import faults
from scheduler_agent.agent.events import Report, RoundAnswered, TurnOutcome
from scheduler_agent.agent.loop import Build, Send
from scheduler_agent.agent.replies import CallIds
from scheduler_agent.agent.steps import AnswerCalls, AskModel
from scheduler_agent.agent.toolbox import Toolbox
from scheduler_agent.agent.types import JSON
from scheduler_agent.session.checked_request import RequestBuilder
from scheduler_agent.session.store import SessionStore
from scheduler_agent.storage.conversations import Reply

Sync = Callable[[Reply | None], None]  # store what changed in the session's list, and a reply's row beside it


class StoredModelStep(AskModel):
    """The session's model step. `build` checks the list's grammar first (a list the API would refuse is never
    sent: GrammarError); the reply is stored the instant it arrives, with its row (iteration, usage, the
    request's size), before any tool runs and before the person hears of it.

    Safe to run twice because the store only appends, at the list's length, in the order the list grows: an
    assistant turn stored at the length of the list this step is given can only be the reply an earlier run
    of this same step stored before it could say so. That reply is taken from the store and judged again (a
    pure function): the model is not asked again and nothing is stored twice. A reply kept beside the list
    (empty, or one the API would refuse back) is not in it, so a second run asks the model again, as
    `resume` does; the list is the same either way."""

    def __init__(
        self,
        build: Build,
        send: Send,
        report: Report,
        known_calls: CallIds,
        records: SessionStore,
        requests: RequestBuilder,
        sync: Sync,
    ) -> None:
        super().__init__(build, send, report, known_calls)
        self.records, self.requests, self.sync = records, requests, sync

    def __call__(self, messages: list[JSON], iteration: int) -> TurnOutcome | None:
        stored = self.records.stored_reply(len(messages))
        if stored is not None:  # this step ran before, and stored its reply: take it, do not ask again
            return self.take(messages, iteration, stored)
        return super().__call__(messages, iteration)

    def keep_reply(self, messages: list[JSON], iteration: int, reply: JSON, appended: bool) -> None:
        if not appended:
            self.sync(self.records.reply_record(iteration, reply, len(messages), kept=True))
            return
        position = len(messages) - 1
        if not self.records.holds(position):
            self.sync(self.records.reply_record(iteration, reply, position))
        self.requests.received(position, reply["content"])  # after the store encoded it
        faults.reach("after_assistant_stored")

    def keep_round(self, messages: list[JSON], iteration: int) -> None:
        keep_round(self.records, self.sync, len(messages) - 1)


class StoredToolRound(AnswerCalls):
    """The session's tool round: the calendar's tools (each side effect approved first, when the person is
    asked), the round stored in one transaction before the person hears of it.

    Safe to run twice for two reasons. The round is stored in one transaction, so it is stored whole or not at
    all: a round stored at the length of the list this step is given is taken from the store, and no tool runs
    again. A round not stored is run again, and a call that changed the calendar before the crash is answered
    from its `tool_use` record (the calendar keeps each change by the id of the call that made it): the change
    is found, not made again, and the answer says what it did."""

    def __init__(self, toolbox: Toolbox, report: Report, records: SessionStore, sync: Sync) -> None:
        super().__init__(toolbox, report)
        self.records, self.sync = records, sync

    def __call__(self, messages: list[JSON], iteration: int) -> None:
        stored = self.records.stored_entry(len(messages))
        if stored is not None and stored["role"] == "user":  # this round ran before, and was stored whole
            messages.append(stored)
            self.report(RoundAnswered(iteration, messages[-1]))
            return
        super().__call__(messages, iteration)

    def keep_round(self, messages: list[JSON], iteration: int) -> None:
        keep_round(self.records, self.sync, len(messages) - 1)


def keep_round(records: SessionStore, sync: Sync, position: int) -> None:
    """Store the round at `position` (unless it is already): one transaction, the journal's."""
    if not records.holds(position):
        sync(None)
    faults.reach("after_results_stored")
