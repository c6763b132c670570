"""The package's public surface: what `from scheduler_agent import ...` offers, pinned (as httpx pins its own)."""

from __future__ import annotations

import subprocess
import sys
import tempfile
from importlib import import_module
from importlib.metadata import version

import pytest

import scheduler_agent

EXPECTED = [
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


def test_all_is_the_curated_list() -> None:
    assert scheduler_agent.__all__ == EXPECTED


@pytest.mark.parametrize("name", EXPECTED)
def test_every_exported_name_is_the_object_its_module_defines(name: str) -> None:
    if name == "__version__":
        assert scheduler_agent.__version__ == version("scheduler-agent")
        return
    home = scheduler_agent._EXPORTS[name]
    assert home.startswith("scheduler_agent.")
    assert getattr(scheduler_agent, name) is getattr(import_module(home), name)


def test_the_loop_imports_from_the_top() -> None:
    from scheduler_agent import Toolbox, ToolError, run_turn
    from scheduler_agent.agent.loop import run_turn as the_loop
    from scheduler_agent.agent.toolbox import Toolbox as the_protocol
    from scheduler_agent.agent.toolbox import ToolError as the_error

    assert (run_turn, Toolbox, ToolError) == (the_loop, the_protocol, the_error)


def test_an_unknown_name_is_an_attribute_error() -> None:
    with pytest.raises(AttributeError, match="no attribute 'run_loop'"):
        scheduler_agent.run_loop  # noqa: B018


def test_dir_lists_the_surface() -> None:
    assert dir(scheduler_agent) == sorted(EXPECTED)


def test_importing_the_package_loads_no_heavy_dependency() -> None:
    code = (
        "import sys, scheduler_agent\n"
        "from scheduler_agent import run_turn, check, Session\n"
        "print(sorted(m for m in ('anthropic', 'vcr', 'click', 'typer', 'yaml', 'httpx2') if m in sys.modules))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60, cwd=tempfile.gettempdir()
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"
