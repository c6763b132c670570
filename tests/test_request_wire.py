"""The bytes a request is sent as: the entries' kept texts joined, byte for byte the plain encoding of the body."""

from __future__ import annotations

import copy
import json
import pickle
from pathlib import Path
from typing import Any

import pytest
from helpers import scripted_session, slot_searches, stored_session
from sqlalchemy import text as sql

from scheduler_agent.agent.events import Event, RequestSent
from scheduler_agent.agent.request import Request, build_request, encode, encode_text
from scheduler_agent.session.entry_texts import EntryTexts
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use


def body_of(messages: list[Any]) -> dict[str, Any]:
    return build_request(model="m", system="Plan — 会議.", tools=[{"name": "t", "input_schema": {}}], messages=messages)


def odd_entries() -> list[Any]:
    return [
        {"role": "user", "content": 'plain text — 🗓️ "quoted" \\ back'},
        {"role": "assistant", "content": [text("Looking."), tool_use("toolu_1", "find_free_slots", {"x": 1.5})]},
        {"content": [text("content first")], "role": "user"},  # keys in another order: encoded as they are
        {"role": "assistant", "content": [text("more")], "extra": True},  # more than a role and a content
        {"role": 7, "content": "a role that is not a string"},
        ["not an object"],
        {"role": "user", "content": [text("the last")]},
    ]


def test_a_request_joined_from_kept_texts_is_the_bytes_of_its_plain_encoding() -> None:
    messages = odd_entries()
    texts = EntryTexts()
    texts.update(messages)
    request = Request(body_of(messages), texts.aligned)
    plain = json.dumps(dict(request), ensure_ascii=False, separators=(",", ":")).encode()
    assert encode(request) == encode(dict(request)) == plain
    messages[-1]["content"] = [text("changed in place while it is the last")]
    texts.update(messages)
    changed = Request(body_of(messages), texts.aligned)
    assert b"changed in place" in encode(changed)
    assert encode(changed) == encode(dict(changed))


@pytest.mark.parametrize("count", [0, 1, 2, 7])
@pytest.mark.parametrize("where", ["first", "between", "last"])
def test_the_joined_body_has_the_fields_around_the_list_in_their_order(count: int, where: str) -> None:
    """The list joined with the fields before it and after it: any length (none, one entry), wherever the
    list stands among the body's keys, entries whose text is not known (None) encoded on the spot."""
    messages = odd_entries()[:count]
    known = [encode_text(entry) if number % 2 else None for number, entry in enumerate(messages)]
    fields: dict[str, Any] = {"model": "m", "max_tokens": 5, "stream": False}
    keys = list(fields)
    keys.insert({"first": 0, "between": 1, "last": 3}[where], "messages")
    body = {key: messages if key == "messages" else fields[key] for key in keys}
    request = Request(body, lambda listed: known if listed is messages else None)
    assert encode(request) == json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode()


def test_a_list_that_is_not_the_one_kept_is_encoded_from_its_entries() -> None:
    messages = odd_entries()
    texts = EntryTexts()
    texts.update(messages)
    other = [*messages[:-1], {"role": "user", "content": "a replaced entry"}]
    request = Request(body_of(other), texts.aligned)
    assert texts.aligned(other) is None
    assert b"a replaced entry" in encode(request)
    assert encode(request) == encode(dict(request))
    assert texts.aligned(messages[:-1]) is None  # a shorter list is not the one kept either


def test_a_copy_of_a_request_is_a_plain_dict_with_the_same_bytes() -> None:
    messages = odd_entries()[:3]
    texts = EntryTexts()
    texts.update(messages)
    request = Request(body_of(messages), texts.aligned)
    for copied in (copy.deepcopy(request), pickle.loads(pickle.dumps(request)), dict(request)):
        assert type(copied) is dict
        assert copied == request
        assert encode(copied) == encode(request)


def test_each_request_of_a_session_and_of_its_resume_arrives_as_its_plain_encoding(demo_db: Path) -> None:
    calls = slot_searches("toolu_w", 4, say="Looking — 会議")
    events: list[Event] = []
    with ScriptedServer([*calls, Reply([text("Monday.")]), Reply([text("Tuesday.")])]) as server:
        conn = db.connect(demo_db)
        first = stored_session(conn, server, events, "When is Priya free? 🗓️")
        # a row edited by hand: the same content, spelled with spaces; its stored size is no longer its text's
        spaced = json.dumps(conversations.load(conn, first.cid)[1][1]["content"], indent=1)
        conn.execute(sql("UPDATE entries SET content = :spaced WHERE position = 1"), {"spaced": spaced})
        record, stored = conversations.load(conn, first.cid)
        assert record.written[1] is None
        assert record.sizes[1] is None  # measured again, from what was parsed
        assert all(known is not None for index, known in enumerate(record.written) if index != 1)
        again = scripted_session(conn, server, events, first.cid)
        assert again.requests.texts.written[:-1] == list(record.written[:-1])  # as stored, sent as they are
        again.ask("And Tuesday?")
        sent = [event.request for event in events if isinstance(event, RequestSent)]
        assert len(sent) == len(server.bodies) == 6
        for request, body in zip(sent, server.bodies, strict=True):
            assert type(request) is Request
            assert body == encode(dict(request))  # byte for byte what the plain encoding of the request is
        assert server.received[-1]["messages"][:-1] == stored
        assert spaced.encode() not in server.bodies[-1]


def test_the_one_encoder_writes_what_json_dumps_writes_and_keeps_nothing_between_calls() -> None:
    """`encode_text` calls one C encoder made once (json.dumps makes one a call): the same text for every kind of
    value, the same errors, and an encoding that failed part-way changes nothing for the next one."""
    values: list[Any] = [
        {"b": [1, 2.5, -0.0, 10**30, True, None, 'é \u2028 \x00 "q" \\'], "a": {"nan": float("nan")}},
        "🗓️ — 会議",
        "\ud800",
        {2: "int key", True: "bool key", None: "null key", 1.5: "float key"},
        [],
        {},
        1e300,
    ]
    for value in values:
        assert encode_text(value) == json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    shared = [text("held by both")]
    cycle: list[Any] = [shared]
    cycle.append(cycle)
    for _ in range(2):  # a cycle is found each time, and leaves no mark on what it held
        with pytest.raises(ValueError, match="Circular reference"):
            encode_text(cycle)
        assert encode_text([shared, shared]) == json.dumps([shared, shared], ensure_ascii=False, separators=(",", ":"))
    with pytest.raises(TypeError, match="set is not JSON serializable"):
        encode_text({"a": {1}})
    with pytest.raises(TypeError, match="keys must be str"):
        encode_text({(1, 2): 1})
