"""The loop with nothing around it: a plain list of replies as the model, an in-process `send`.

No HTTP, no SDK, no store: what `run_turn` does to the list, and nothing else (pydantic-ai's
FunctionModel is the model for this). The other loop tests go through the real SDK on loopback.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from scheduler_agent import JSON, AnswerCalls, AskModel, Event, Stop, run_turn
from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.loop import add_user_text

SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}


class Weather:
    definitions: ClassVar[list[JSON]] = [
        {"name": "weather", "description": "The weather in a city.", "input_schema": SCHEMA}
    ]
    deadline_seconds = 5.0

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str:
        return f"sunny in {arguments['city']}"

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        return None


def fake_model(replies: list[JSON]) -> tuple[list[JSON], Any]:
    """A `send` that answers each request with the next reply, keeping a copy of every request."""
    requests: list[JSON] = []

    def send(request: JSON) -> JSON:
        requests.append({"messages": [dict(m) for m in request["messages"]]})
        return replies[len(requests) - 1]

    return requests, send


def test_two_iterations_grow_the_list_by_two_entries_a_round() -> None:
    call = {"type": "tool_use", "id": "toolu_1", "name": "weather", "input": {"city": "Leeds"}}
    replies = [
        {"content": [call], "stop_reason": "tool_use"},
        {"content": [{"type": "text", "text": "It is sunny in Leeds."}], "stop_reason": "end_turn"},
    ]
    requests, send = fake_model(replies)
    messages: list[JSON] = []
    add_user_text(messages, "Weather in Leeds?")
    events: list[Event] = []

    outcome = run_turn(
        messages,
        model_step=AskModel(lambda m: {"messages": list(m)}, send, events.append),
        tool_round=AnswerCalls(Weather(), events.append),
        max_iterations=5,
        report=events.append,
    )

    assert outcome.stop is Stop.DONE
    assert outcome.text == "It is sunny in Leeds."
    assert [len(r["messages"]) for r in requests] == [1, 3]  # every request resends the whole list
    assert messages == [
        {"role": "user", "content": [{"type": "text", "text": "Weather in Leeds?"}]},
        {"role": "assistant", "content": [call]},  # verbatim, appended before the tool ran
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "sunny in Leeds"}]},
        {"role": "assistant", "content": replies[1]["content"]},
    ]
