"""What finishing an interrupted turn needs besides the loop: whether there is one, and the bound's statement."""

from __future__ import annotations

import dataclasses

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import Stop, TurnOutcome
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import State, conversation_state


def resumable(messages: list[JSON], cid: int | None) -> State:
    """The list's state ("interrupted" or "waiting"); AgentError saying what to do when there is no turn to finish."""
    state = conversation_state(messages)
    if state == "empty":
        raise AgentError(
            f"Nothing to resume: conversation {cid} has no turn yet. Start it with "
            f"`scheduler-agent ask --cid {cid} TEXT`."
        )
    if state == "complete":
        raise AgentError(
            f"Conversation {cid} is complete: nothing to resume. Continue it with "
            f"`scheduler-agent ask --cid {cid} TEXT`."
        )
    return state


def resumed_outcome(outcome: TurnOutcome, resumed: int | None) -> TurnOutcome:
    """At the bound after a resume (`resumed`: the iterations done before it), say both counts:
    --max-iterations counts the iterations since resuming."""
    if resumed is None or outcome.stop is not Stop.ITERATION_BOUND:
        return outcome
    since = outcome.iterations - resumed
    _, bound, tail = outcome.statement.partition("(the bound)")
    if not bound:
        return outcome
    statement = (
        f"Stopped after {outcome.iterations} iterations in this turn, {since} since resuming (the bound: "
        f"--max-iterations counts those after a resume){tail}"
    )
    return dataclasses.replace(outcome, statement=statement)
