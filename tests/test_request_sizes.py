"""A request's size is kept by entry as the list grows, and it is the size of the body as encoded, exactly."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from helpers import DUMMY_KEY, demo_clock

from scheduler_agent.agent.events import Event, RequestSent
from scheduler_agent.agent.replies import CallIds, call_ids, judge
from scheduler_agent.agent.request import build_request, encode
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.session.sizes import EntrySizes, RequestSizes
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

UNICODE = 'Réunion avec Priya 🗓️ — 会議, נפגש, e\u0301, \u202e, \x1b[31m, "quoted" \\ back'


def user(value: str) -> dict[str, Any]:
    return {"role": "user", "content": [{"type": "text", "text": value}]}


def test_the_running_size_of_a_list_is_its_encoding_as_it_grows_and_changes() -> None:
    sizes, messages = EntrySizes(), [user(UNICODE)]
    assert sizes.total(messages) == len(encode(messages))  # type: ignore[arg-type]
    for number in range(20):
        call = {"type": "tool_use", "id": f"toolu_{number}", "name": "find_free_slots", "input": {"who": UNICODE}}
        messages.append({"role": "assistant", "content": [{"type": "text", "text": "ok"}, call]})
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "—"}]}
        )
        assert sizes.total(messages) == len(encode(messages))  # type: ignore[arg-type]
        assert sizes.measured == 3  # the two new entries, and the one that was last (it may have changed)
    messages[-1]["content"] = [*messages[-1]["content"], {"type": "text", "text": UNICODE}]  # text joins the turn
    assert sizes.total(messages) == len(encode(messages))  # type: ignore[arg-type]
    del messages[-3:]  # entries removed at the end
    assert sizes.total(messages) == len(encode(messages))  # type: ignore[arg-type]
    messages[5:] = [user("replaced"), user(UNICODE)]  # the end replaced by other objects: measured from there
    assert sizes.total(messages) == len(encode(messages))  # type: ignore[arg-type]
    assert sizes.measured == 2
    copy = list(messages)  # another list: measured whole
    assert sizes.total(copy) == len(encode(copy))  # type: ignore[arg-type]
    assert sizes.measured == len(copy)
    assert EntrySizes().total([]) == len(encode([]))  # type: ignore[arg-type]


def test_a_request_size_is_the_fixed_part_once_and_the_list_by_entry() -> None:
    tools = [{"name": "find_free_slots", "description": UNICODE, "input_schema": {"type": "object"}}]
    sizes, messages = RequestSizes(), [user(UNICODE)]
    for stream, system in ((False, "Système ✓"), (True, "Système ✓"), (True, UNICODE), (False, "")):
        request = build_request(model="m", system=system, tools=tools, messages=messages, stream=stream)
        assert sizes.of(request, messages) == len(encode(request))
        messages.append({"role": "assistant", "content": [{"type": "text", "text": system or "x"}]})
        messages.append(user("again"))


def test_every_request_a_session_sends_carries_its_exact_size(demo_db: Path) -> None:
    """Through the real SDK to the loopback server: the size on the event, in the reply rows, and of the body
    that arrived are one figure, with the system prompt, the tools and unicode in the list."""
    calls = [
        Reply([text(f"Looking {n} — ✓"), tool_use(f"toolu_z{n}", "find_free_slots", {"person": "priya"})], "tool_use")
        for n in range(3)
    ]
    events: list[Event] = []
    with ScriptedServer([*calls, Reply([text("Lundi 14:00 🗓️")])]) as server:
        send = ModelAPI(make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)).send
        conn = db.connect(demo_db)
        session = Session(conn, demo_clock(), send, Settings("claude-sonnet-5-5", 10, strict=True), events.append)
        session.store()
        session.ask(UNICODE)
        sent = [event for event in events if isinstance(event, RequestSent)]
        assert len(sent) == 4 == len(server.received)
        for event, arrived in zip(sent, server.received, strict=True):
            assert event.size == len(encode(event.request))
            assert event.size == len(encode(arrived))  # the body as the API got it (key order aside)
        assert session.cid is not None
        rows = [reply.request_bytes for reply in conversations.replies(conn, session.cid)]
        assert rows == [event.size for event in sent]
        assert session.requests.sizes.entries.measured <= 3  # only what the last round added was encoded


def test_call_ids_kept_by_entry_are_the_lists_call_ids() -> None:
    index, messages = CallIds(), [user("hi")]
    for number in range(5):
        call = {"type": "tool_use", "id": f"toolu_{number}", "name": "f", "input": {}}
        messages.append({"role": "assistant", "content": [call]})
        assert set(index.of(messages)) == set(call_ids(messages))
        messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "x"}]}
        )
    del messages[-2:]
    assert set(index.of(messages)) == set(call_ids(messages)) == {f"toolu_{n}" for n in range(4)}
    messages[-1] = {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_new", "name": "f", "input": {}}]}
    assert set(index.of(messages)) == set(call_ids(messages))
    reused = {"content": [{"type": "tool_use", "id": "toolu_1", "name": "f", "input": {}}]}
    assert judge(reused, index.of(messages)).problems == ["the tool call at content[0] reuses the id toolu_1"]
    assert judge(reused, ["toolu_1"]).problems == judge(reused, index.of(messages)).problems  # a list still works
