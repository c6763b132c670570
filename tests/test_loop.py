"""The loop through the real SDK and HTTP, against scripted replies on loopback (no mocked client)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

import pytest
from helpers import scripted_send

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.events import Event, Stop, ToolCalled, TurnEnded
from scheduler_agent.agent.loop import add_user_text, iterations_in_turn, run_turn
from scheduler_agent.agent.request import build_request
from scheduler_agent.agent.steps import AnswerCalls, AskModel
from scheduler_agent.agent.toolbox import ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.testing.scripted_server import Reply, text, tool_use

ECHO_SCHEMA = {
    "type": "object",
    "properties": {"word": {"type": "string"}},
    "required": ["word"],
    "additionalProperties": False,
}


class EchoTools:
    """A toolbox whose `echo` answers its word, whose `fail` raises ToolError, whose `crash` raises."""

    definitions: ClassVar[list[JSON]] = [
        {"name": name, "description": f"{name} a word", "input_schema": ECHO_SCHEMA}
        for name in ("echo", "fail", "crash")
    ]

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.deadline_seconds = 30.0

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        self.ran.append(tool_use_id)
        if name == "fail":
            raise ToolError(f"fail refused {arguments['word']!r}; call echo instead")
        if name == "crash":
            raise ZeroDivisionError("division by zero")
        return f"echo: {arguments['word']}"

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        return None  # echo only reads


def build(messages: list[JSON]) -> JSON:
    return build_request(model="claude-sonnet-5-5", system="test", tools=EchoTools.definitions, messages=messages)


def run(replies: list[Reply], *, max_iterations: int = 10, toolbox: EchoTools | None = None):  # type: ignore[no-untyped-def]
    toolbox = toolbox or EchoTools()
    events: list[Event] = []
    messages: list[JSON] = []
    add_user_text(messages, "go")
    with scripted_send(replies) as (send, server):
        model_step, tool_round = AskModel(build, send, events.append), AnswerCalls(toolbox, events.append)
        outcome = run_turn(
            messages, model_step=model_step, tool_round=tool_round, max_iterations=max_iterations, report=events.append
        )
    return outcome, messages, server.received, events


def test_every_call_of_one_turn_is_answered_in_one_user_turn_in_order() -> None:
    calls = [tool_use("toolu_a", "echo", {"word": "one"}), tool_use("toolu_b", "echo", {"word": "two"})]
    outcome, messages, received, _ = run([Reply(calls, "tool_use"), Reply([text("done")])])
    assert outcome.stop is Stop.DONE
    assert outcome.text == "done"
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant"]
    results = messages[2]["content"]
    assert [r["tool_use_id"] for r in results] == ["toolu_a", "toolu_b"]
    assert [r["content"] for r in results] == ["echo: one", "echo: two"]
    assert len(received) == 2
    assert received[1]["messages"] == messages[:3]


def test_the_assistant_turn_is_the_providers_content_verbatim() -> None:
    content = [text("Looking."), tool_use("toolu_a", "echo", {"word": "x"})]
    _, messages, _, _ = run([Reply(content, "tool_use"), Reply([text("ok")])])
    assert messages[1] == {"role": "assistant", "content": content}


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        (tool_use("toolu_f", "fail", {"word": "x"}), "fail refused 'x'; call echo instead"),
        (tool_use("toolu_c", "crash", {"word": "x"}), "internal error (ZeroDivisionError: division by zero)"),
        (tool_use("toolu_u", "nope", {"word": "x"}), "There is no tool named 'nope'. The tools are: echo, fail, crash"),
        (tool_use("toolu_m", "echo", {}), "missing required field 'word'"),
        (tool_use("toolu_t", "echo", {"word": 3}), "field 'word' must be a string, got 3"),
        (tool_use("toolu_x", "echo", {"word": "x", "loud": True}), "unknown field 'loud'"),
    ],
)
def test_a_failing_call_still_gets_its_result_with_is_error(call: JSON, expected: str) -> None:
    ok = tool_use("toolu_ok", "echo", {"word": "fine"})
    outcome, messages, received, _ = run([Reply([call, ok], "tool_use"), Reply([text("handled")])])
    results = messages[2]["content"]
    assert results[0]["tool_use_id"] == call["id"]
    assert results[0]["is_error"] is True
    assert expected in results[0]["content"]
    assert results[1] == {"type": "tool_result", "tool_use_id": "toolu_ok", "content": "echo: fine"}
    assert outcome.stop is Stop.DONE
    assert received[1]["messages"][2] == messages[2]


def test_the_bound_stops_a_model_that_never_stops_asking_with_the_list_valid() -> None:
    replies = [Reply([tool_use(f"toolu_{i}", "echo", {"word": str(i)})], "tool_use") for i in range(3)]
    outcome, messages, received, events = run(replies, max_iterations=3)
    assert outcome.stop is Stop.ITERATION_BOUND
    assert outcome.stop.exit_code == 3
    assert len(received) == 3
    assert len(messages) == 7
    assert messages[-1]["content"][0]["tool_use_id"] == "toolu_2"
    assert "Stopped after 3 iterations" in outcome.statement
    assert 'echo(word="2")' in outcome.statement
    assert isinstance(events[-1], TurnEnded)
    assert iterations_in_turn(messages) == 3
    add_user_text(messages, "keep going")  # new text joins the results' turn: no two user turns in a row
    assert messages[-1]["content"][-1] == {"type": "text", "text": "keep going"}
    assert iterations_in_turn(messages) == 0


@pytest.mark.parametrize("reason", ["max_tokens", "refusal", "model_context_window_exceeded", "pause_turn"])
def test_model_stops_end_the_turn_with_exit_4(reason: str) -> None:
    outcome, messages, received, _ = run([Reply([text("partial")], reason)])
    assert outcome.stop is Stop.MODEL_STOPPED
    assert outcome.stop.exit_code == 4
    assert outcome.stop_reason == reason
    assert outcome.statement
    assert len(received) == 1
    assert messages[-1]["role"] == "assistant"


def test_a_call_cut_off_by_max_tokens_is_answered_without_running() -> None:
    toolbox = EchoTools()
    cut = [tool_use("toolu_cut", "echo", {"word": "half"})]
    outcome, messages, _, events = run([Reply(cut, "max_tokens")], toolbox=toolbox)
    assert outcome.stop is Stop.MODEL_STOPPED
    assert toolbox.ran == []
    assert messages[-1]["content"][0]["tool_use_id"] == "toolu_cut"
    assert messages[-1]["content"][0]["is_error"]
    assert not any(isinstance(e, ToolCalled) for e in events)
