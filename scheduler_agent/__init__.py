"""scheduler-agent: a scheduling agent that is a while-loop around a stateless model.

The message list is the whole of its state. Start reading at `scheduler_agent.agent` (the loop);
the names below are what another program, or a reader, uses:

    from scheduler_agent import run_turn, AskModel, AnswerCalls, Toolbox, ToolError

Each name is imported when first used (PEP 562), so `import scheduler_agent` stays cheap: it
loads neither the SDK nor vcrpy nor Click.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0"

# name -> the module that defines it
_EXPORTS = {
    # the loop and what it calls
    "run_turn": "scheduler_agent.agent.loop",
    "Send": "scheduler_agent.agent.loop",
    "Build": "scheduler_agent.agent.loop",
    "ModelStep": "scheduler_agent.agent.loop",
    "ToolRound": "scheduler_agent.agent.loop",
    "AskModel": "scheduler_agent.agent.steps",
    "AnswerCalls": "scheduler_agent.agent.steps",
    "build_request": "scheduler_agent.agent.request",
    "Toolbox": "scheduler_agent.agent.toolbox",
    "ToolError": "scheduler_agent.agent.toolbox",
    "CallStatus": "scheduler_agent.agent.toolbox",
    "run_call": "scheduler_agent.agent.toolbox",
    "JSON": "scheduler_agent.agent.types",
    # what the loop reports
    "Event": "scheduler_agent.agent.events",
    "Report": "scheduler_agent.agent.events",
    "RequestSent": "scheduler_agent.agent.events",
    "ReplyReceived": "scheduler_agent.agent.events",
    "ToolCalled": "scheduler_agent.agent.events",
    "ToolAnswered": "scheduler_agent.agent.events",
    "RoundAnswered": "scheduler_agent.agent.events",
    "TurnEnded": "scheduler_agent.agent.events",
    "TurnOutcome": "scheduler_agent.agent.events",
    "Stop": "scheduler_agent.agent.events",
    # a conversation around the loop
    "Session": "scheduler_agent.session.session",
    "Settings": "scheduler_agent.session.session",
    "AgentError": "scheduler_agent.agent.errors",
    # the grammar of the list
    "check": "scheduler_agent.grammar.check",
    "IncrementalChecker": "scheduler_agent.grammar.check",
    "GrammarError": "scheduler_agent.grammar.check",
    "Violation": "scheduler_agent.grammar.check",
    "conversation_state": "scheduler_agent.grammar.check",
    # the model, the calendar, the store
    "ModelAPI": "scheduler_agent.api.client",
    "make_client": "scheduler_agent.api.client",
    "CalendarTools": "scheduler_agent.calendar.tools",
    "Clock": "scheduler_agent.calendar.clock",
    "connect": "scheduler_agent.storage.db",
    # a scripted API on loopback, for tests and honest cassettes
    "ScriptedServer": "scheduler_agent.testing.scripted_server",
}

__all__ = [
    "JSON",
    "AgentError",
    "AnswerCalls",
    "AskModel",
    "Build",
    "CalendarTools",
    "CallStatus",
    "Clock",
    "Event",
    "GrammarError",
    "IncrementalChecker",
    "ModelAPI",
    "ModelStep",
    "ReplyReceived",
    "Report",
    "RequestSent",
    "RoundAnswered",
    "ScriptedServer",
    "Send",
    "Session",
    "Settings",
    "Stop",
    "ToolAnswered",
    "ToolCalled",
    "ToolError",
    "ToolRound",
    "Toolbox",
    "TurnEnded",
    "TurnOutcome",
    "Violation",
    "__version__",
    "build_request",
    "check",
    "connect",
    "conversation_state",
    "make_client",
    "run_call",
    "run_turn",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'scheduler_agent' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value  # later lookups skip this function
    return value


def __dir__() -> list[str]:
    return __all__


if TYPE_CHECKING:  # what type checkers and editors see; at run time the names come lazily
    from scheduler_agent.agent.errors import AgentError
    from scheduler_agent.agent.events import (
        Event,
        ReplyReceived,
        Report,
        RequestSent,
        RoundAnswered,
        Stop,
        ToolAnswered,
        ToolCalled,
        TurnEnded,
        TurnOutcome,
    )
    from scheduler_agent.agent.loop import Build, ModelStep, Send, ToolRound, run_turn
    from scheduler_agent.agent.request import build_request
    from scheduler_agent.agent.steps import AnswerCalls, AskModel
    from scheduler_agent.agent.toolbox import CallStatus, Toolbox, ToolError, run_call
    from scheduler_agent.agent.types import JSON
    from scheduler_agent.api.client import ModelAPI, make_client
    from scheduler_agent.calendar.clock import Clock
    from scheduler_agent.calendar.tools import CalendarTools
    from scheduler_agent.grammar.check import GrammarError, IncrementalChecker, Violation, check, conversation_state
    from scheduler_agent.session.session import Session, Settings
    from scheduler_agent.storage.db import connect
    from scheduler_agent.testing.scripted_server import ScriptedServer
