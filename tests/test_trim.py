"""The context budget: a view at send time that keeps the first user turn and whole rounds."""

from __future__ import annotations

from scheduler_agent.agent.trim import estimate_tokens, trimmed
from scheduler_agent.agent.types import JSON


def conversation(rounds: int) -> list[JSON]:
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": "Never book before 10am."}]}]
    for i in range(rounds):
        call = {"type": "tool_use", "id": f"toolu_{i}", "name": "find_free_slots", "input": {"week": f"w{i}"}}
        messages.append({"role": "assistant", "content": [call]})
        result = {"type": "tool_result", "tool_use_id": f"toolu_{i}", "content": "x" * 400}
        messages.append({"role": "user", "content": [result]})
    return messages


def test_a_list_that_fits_is_sent_whole() -> None:
    messages = conversation(3)
    assert trimmed(messages, estimate_tokens(messages)) is messages


def test_the_cut_keeps_the_first_turn_and_never_splits_a_call_from_its_result() -> None:
    messages = conversation(10)
    view = trimmed(messages, estimate_tokens(messages) // 2)
    assert view[0] is messages[0]
    assert estimate_tokens(view) <= estimate_tokens(messages) // 2
    assert view[-4:] == messages[-4:]
    assert len(view) % 2 == 1
    for index in range(1, len(view), 2):
        assert view[index]["role"] == "assistant"
        assert view[index + 1]["content"][0]["tool_use_id"] == view[index]["content"][0]["id"]


def test_nothing_fits_gives_the_smallest_valid_view() -> None:
    messages = conversation(5)
    assert trimmed(messages, 1) == [messages[0], *messages[-2:]]


def test_the_cut_never_drops_the_question_of_the_turn_in_progress() -> None:
    messages = conversation(4)
    messages.append({"role": "assistant", "content": [{"type": "text", "text": "Done."}]})
    messages.append({"role": "user", "content": [{"type": "text", "text": "Now book Monday."}]})
    call = {"type": "tool_use", "id": "toolu_new", "name": "create_event", "input": {}}
    messages.append({"role": "assistant", "content": [call]})
    messages.append({"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_new", "content": "ok"}]})
    view = trimmed(messages, 1)
    assert view == [messages[0], *messages[9:]]  # the first turn, the last answer, and the whole current turn
    assert view[2]["content"][0]["text"] == "Now book Monday."
