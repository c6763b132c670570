"""Streaming: the real SDK against the scripted server's server-sent events, the message they assemble
into (which must be exactly the unstreamed body), the errors, Ctrl-C, the cassettes and the `streamed` lesson.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
import yaml

from scheduler_agent.agent.errors import ModelRequestFailed, ModelUnavailable
from scheduler_agent.agent.events import (
    Event,
    ReplyReceived,
    RequestSent,
    StreamedText,
    TextDelta,
    ToolAnswered,
    ignore,
)
from scheduler_agent.agent.loop import run_turn
from scheduler_agent.agent.request import build_request
from scheduler_agent.agent.steps import AnswerCalls, AskModel
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.api.sse import IncompleteStream, assemble
from scheduler_agent.calendar.tools import CalendarTools
from scheduler_agent.lessons.catalogue import cassettes_dir
from scheduler_agent.lessons.scripts import LESSONS, OVERLOADED
from scheduler_agent.playback import vcr_cassette as cassette
from scheduler_agent.playback.cassette_file import ReadableYaml, read_setup
from scheduler_agent.playback.replay import calendar_from, replay, settings_of
from scheduler_agent.session.session import system_prompt
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, sse, text, tool_use

DUMMY_KEY = "sk-ant-test-dummy"
FIND = tool_use("toolu_st_01", "find_free_slots", {"person": "priya", "week": "2026-08-31"})
USER = {"role": "user", "content": [{"type": "text", "text": "When is Priya free next week?"}]}


def request(*, stream: bool = True, messages: list[JSON] | None = None) -> JSON:
    tools = [{"name": "t", "description": "d", "input_schema": {"type": "object", "properties": {}}}]
    return build_request(model="claude-sonnet-5-5", system="s", tools=tools, messages=messages or [USER], stream=stream)


def exact(value: object) -> str:
    """JSON text, key order included: two values are exactly equal when these are."""
    return json.dumps(value, ensure_ascii=False)


@contextmanager
def served(replies: list[Reply], *, max_retries: int = 0) -> Iterator[tuple[ScriptedServer, list[str], ModelAPI]]:
    """A streaming ModelAPI (text pieces collected in the list) on the real SDK against the scripted server."""
    pieces: list[str] = []
    with ScriptedServer(replies) as server:
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=max_retries)
        yield server, pieces, ModelAPI(client, on_text=pieces.append)


REPLIES = {
    "text": Reply([text("Booked Monday 2026-08-31, 14:00-14:30 with Priya Raman.")]),
    "text_and_call": Reply([text("Let me look that up."), FIND], "tool_use"),
    "two_calls": Reply(
        [FIND, tool_use("toolu_st_02", "find_free_slots", {"person": "sam", "week": "2026-09-07"})], "tool_use"
    ),
    "unicode_and_lines": Reply([text("Café — 14:00 ✓\nSecond line, “quoted”.\n")]),
    "no_arguments": Reply([tool_use("toolu_st_03", "list_people", {})], "tool_use"),
    "cut_off": Reply([text("I was about to")], "max_tokens"),
}


@pytest.mark.parametrize("name", REPLIES)
def test_the_events_assemble_into_exactly_the_unstreamed_body(name: str) -> None:
    reply, sent = REPLIES[name], request()
    pieces: list[str] = []
    assembled = assemble(reply.events(sent, 1), pieces.append)
    assert exact(assembled) == exact(reply.body(sent, 1))
    assert "".join(pieces) == "".join(b["text"] for b in reply.content if b["type"] == "text")


def test_a_key_the_start_lacks_takes_its_unstreamed_place_and_usage_counts_are_replaced() -> None:
    start: JSON = {"id": "msg_1", "type": "message", "role": "assistant", "model": "m", "content": []}
    start |= {"stop_reason": None, "usage": {"input_tokens": 5, "output_tokens": 1}}
    usage = {"output_tokens": 7, "input_tokens": 9, "cache_read_input_tokens": None}
    events: list[tuple[str, JSON]] = [
        ("message_start", {"type": "message_start", "message": start}),
        ("content_block_start", {"type": "content_block_start", "index": 0, "content_block": text("")}),
        (
            "content_block_delta",
            {"type": "content_block_delta", "index": 0, "delta": {"type": "text_delta", "text": "hi"}},
        ),
        ("content_block_stop", {"type": "content_block_stop", "index": 0}),
        (
            "message_delta",
            {"type": "message_delta", "delta": {"stop_reason": "end_turn", "stop_details": None}, "usage": usage},
        ),
        ("message_stop", {"type": "message_stop"}),
    ]
    message = assemble(events)
    assert list(message) == ["id", "type", "role", "model", "content", "stop_reason", "stop_details", "usage"]
    assert message["usage"] == {"input_tokens": 9, "output_tokens": 7}
    assert message["content"] == [text("hi")]
    assert start["content"] == []
    assert start["usage"]["output_tokens"] == 1  # the events are left as they came


def test_an_event_stream_body_round_trips_through_the_cassette_format_unchanged() -> None:
    body = "".join(sse(name, data).decode() for name, data in REPLIES["unicode_and_lines"].events(request(), 1))
    interaction = {
        "request": {"method": "POST", "uri": "u", "body": exact(request()), "headers": {}},
        "response": {"status": {"code": 200, "message": "OK"}, "headers": {}, "body": {"string": body}},
    }
    written = ReadableYaml.serialize({"version": 1, "interactions": [interaction]})
    assert "string: |" in written
    assert "\n        event: content_block_delta\n" in written
    assert ReadableYaml.deserialize(written)["interactions"][0]["response"]["body"]["string"] == body


def test_the_server_streams_each_block_in_a_few_pieces_with_a_ping() -> None:
    events = REPLIES["text_and_call"].events(request(), 1)
    names = [name for name, _ in events]
    assert names[0] == "message_start"
    assert names[-2:] == ["message_delta", "message_stop"]
    assert "ping" in names
    deltas = [data["delta"] for name, data in events if name == "content_block_delta"]
    assert len([d for d in deltas if d["type"] == "text_delta"]) > 1
    assert len([d for d in deltas if d["type"] == "input_json_delta"]) > 1
    start = events[0][1]["message"]
    assert start["content"] == []
    assert start["stop_reason"] is None
    assert start["usage"]["output_tokens"] == 1


def test_a_stream_that_ends_before_message_stop_gives_no_message() -> None:
    events = REPLIES["text"].events(request(), 1)
    with pytest.raises(IncompleteStream):
        assemble(events[:-1])
    with pytest.raises(IncompleteStream):
        assemble(events[1:])
    calls = REPLIES["no_arguments"].events(request(), 1)
    broken = ("content_block_delta", {"index": 0, "delta": {"type": "input_json_delta", "partial_json": '{"a":'}})
    with pytest.raises(IncompleteStream, match="the input of block 0 is not JSON"):
        assemble([*calls[:2], broken, *calls[2:]])


def test_streaming_through_the_sdk_sends_the_request_as_built_and_returns_the_unstreamed_body() -> None:
    reply = REPLIES["text_and_call"]
    sent = request()
    with served([reply, reply]) as (server, pieces, api):
        streamed = api.send(sent)
        plain = api.send(request(stream=False))
    assert sent["stream"] is True
    assert list(sent).index("stream") == list(sent).index("system") - 1
    assert exact(server.received[0]) == exact(sent)  # the HTTP body IS the request dict, "stream": true and all
    assert "stream" not in server.received[1]
    assert pieces == [
        p["delta"]["text"] for n, p in reply.events(sent, 1) if n == "content_block_delta" and "text" in p["delta"]
    ]
    assert "".join(pieces) == "Let me look that up."
    assert len(pieces) > 1  # in order, in pieces
    assert exact(streamed["content"]) == exact(plain["content"])
    assert exact({**streamed, "id": ""}) == exact({**plain, "id": ""})  # the whole message, usage included


def test_the_sdk_stream_helper_agrees_on_the_values_but_not_on_the_key_order() -> None:
    """Why model_api assembles the JSON itself instead of serialising `get_final_message()`."""
    sent = request()
    with served([REPLIES["text_and_call"], REPLIES["text_and_call"]]) as (_, _, api):
        ours = api.send(sent)
        body = {key: value for key, value in sent.items() if key != "stream"}
        with api.client.messages.stream(**body) as stream:
            theirs: JSON = stream.get_final_message().to_dict()
    assert theirs["content"] == ours["content"]  # equal as dicts ...
    assert exact(theirs["content"]) != exact(ours["content"])  # ... but not as the API wrote them
    assert list(theirs["content"][0]) == ["text", "type"]
    assert list(ours["content"][0]) == ["type", "text"]


@pytest.fixture
def calendar(tmp_path: Path) -> Iterator[tuple[CalendarTools, str]]:
    """The canonical lesson's calendar and clock: its toolbox, and its system prompt."""
    setup = read_setup(cassettes_dir() / "no_mornings.yaml")
    with calendar_from(setup, tmp_path) as (conn, clock):
        yield CalendarTools(conn, clock), system_prompt(conn, clock)


def run_streamed(
    replies: list[Reply], toolbox: CalendarTools, system: str
) -> tuple[list[JSON], list[Event], list[JSON]]:
    """run_turn (the loop itself) with every request streamed: the list, the events, what the server got."""
    messages: list[JSON] = [{"role": "user", "content": [{"type": "text", "text": LESSONS["no_mornings"].inputs[0]}]}]
    events: list[Event] = []
    reporter = StreamedText(events.append)

    def build(current: list[JSON]) -> JSON:
        return build_request(
            model="claude-sonnet-5-5", system=system, tools=toolbox.definitions, messages=current, stream=True
        )

    with served(replies) as (server, _, _):
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)
        send = ModelAPI(client, on_text=reporter.on_text).send
        model_step, tool_round = AskModel(build, send, reporter), AnswerCalls(toolbox, reporter)
        run_turn(messages, model_step=model_step, tool_round=tool_round, max_iterations=10, report=reporter)
    return messages, events, server.received


def assistant_turns(messages: list[JSON]) -> list[JSON]:
    return [message for message in messages if message["role"] == "assistant"]


def test_a_tool_call_streamed_as_json_pieces_is_assembled_and_run(calendar: tuple[CalendarTools, str]) -> None:
    replies = [REPLIES["text_and_call"], Reply([text("Priya is free Monday 14:00-15:00.")])]
    messages, events, received = run_streamed(replies, *calendar)
    assert all(body["stream"] is True for body in received)
    assert len(received) == 2
    assert exact(messages[1]["content"]) == exact(REPLIES["text_and_call"].content)
    answered = [e for e in events if isinstance(e, ToolAnswered)]
    assert len(answered) == 1
    assert "Mon 2026-08-31 14:00-15:00" in answered[0].result["content"]
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert "".join(d.text for d in deltas if d.iteration == 1) == "Let me look that up."
    assert "".join(d.text for d in deltas if d.iteration == 2) == "Priya is free Monday 14:00-15:00."
    # the assistant turn is appended once the message is whole: no delta comes after its ReplyReceived
    order = [type(e).__name__ for e in events if isinstance(e, (TextDelta, ReplyReceived))]
    assert (
        order
        == ["TextDelta"] * order.index("ReplyReceived") + ["ReplyReceived"] + order[order.index("ReplyReceived") + 1 :]
    )


def test_the_canonical_script_streamed_gives_the_canonical_assistant_turns_exactly(
    calendar: tuple[CalendarTools, str], tmp_path: Path
) -> None:
    messages, events, _ = run_streamed(LESSONS["no_mornings"].replies, *calendar)
    canonical = replay(cassettes_dir() / "no_mornings.yaml", report=lambda event: None, keep_db=tmp_path / "nm")
    assert len(assistant_turns(messages)) == 3
    assert exact(assistant_turns(messages)) == exact(assistant_turns(canonical.messages))
    final = "".join(e.text for e in events if isinstance(e, TextDelta))
    assert final == messages[-1]["content"][0]["text"]


def test_an_error_event_after_the_200_is_model_unavailable_and_not_retried() -> None:
    failing = Reply([text("Booked Monday at two.")], midstream_error="overloaded_error", error_message="Overloaded")
    unavailable = pytest.raises(ModelUnavailable, match=r"while streaming the reply \(overloaded_error: Overloaded\)")
    with served([failing, REPLIES["text"]], max_retries=2) as (server, pieces, api), unavailable:
        api.send(request())
    assert len(server.received) == 1  # the SDK does not retry an error that arrives inside a 200
    assert pieces  # some text had been shown: it stays display only


def test_an_invalid_request_error_in_the_stream_is_a_request_failure() -> None:
    failing = Reply([text("x")], midstream_error="invalid_request_error", error_message="bad block")
    with served([failing]) as (_, _, api), pytest.raises(ModelRequestFailed, match="bad block"):
        api.send(request())


def test_an_error_before_the_stream_is_json_and_retried_as_for_any_request() -> None:
    with served([OVERLOADED, REPLIES["text"]], max_retries=2) as (server, pieces, api):
        reply = api.send(request())
    assert len(server.received) == 2
    assert reply["stop_reason"] == "end_turn"
    assert "".join(pieces).startswith("Booked")
    exhausted = pytest.raises(ModelUnavailable, match=r"unavailable \(529: Overloaded\) after 2 retries")
    with served([OVERLOADED, OVERLOADED, OVERLOADED], max_retries=2) as (_, _, api), exhausted:
        api.send(request())


def test_ctrl_c_while_streaming_propagates_and_leaves_the_list_valid() -> None:
    def interrupt(piece: str) -> None:
        raise KeyboardInterrupt

    messages: list[JSON] = [USER]
    with ScriptedServer([REPLIES["text"], REPLIES["text"]]) as server:
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)
        with pytest.raises(KeyboardInterrupt):
            run_turn(
                messages,
                model_step=AskModel(
                    lambda current: request(messages=current), ModelAPI(client, on_text=interrupt).send, ignore
                ),
                tool_round=AnswerCalls(CalendarTools.__new__(CalendarTools), ignore),  # never reached: no tool asked
                max_iterations=3,
                report=ignore,
            )
        assert messages == [USER]  # nothing appended: the reply was never whole
        again = ModelAPI(client).send(request(messages=messages))  # the same list can be sent again
    assert again["content"] == REPLIES["text"].content


def test_sse_responses_are_recorded_readably_and_replay(tmp_path: Path) -> None:
    path = tmp_path / "streamed.yaml"
    reply = REPLIES["unicode_and_lines"]
    with served([reply]) as (_, recorded_pieces, api), cassette.recording(path, {"title": "t"}):
        recorded = api.send(request())
    interaction = yaml.safe_load(path.read_text())["interactions"][0]
    body = interaction["response"]["body"]["string"]
    assert isinstance(body, str)
    assert body.startswith("event: message_start\ndata: {")  # the wire text, as it came
    assert "\n      string: |" in path.read_text()  # a block of lines, not an escaped one-line string
    assert interaction["response"]["headers"]["content-type"] == ["text/event-stream; charset=utf-8"]
    assert interaction["request"]["body"]["json"]["stream"] is True  # the request is a structure, as ever
    with cassette.replaying(path) as played:
        client = make_client(api_key=DUMMY_KEY, max_retries=0, middleware=[cassette.replay_middleware(played)])
        pieces: list[str] = []
        again = ModelAPI(client, on_text=pieces.append).send(request())
        played.check_all_played()
    assert exact(again) == exact(recorded)
    assert pieces == recorded_pieces


def test_settings_of_reads_stream_from_the_setup() -> None:
    assert settings_of({"options": {"stream": True}}).stream is True
    assert settings_of({"options": {}}).stream is False


def test_streamed_text_reports_deltas_of_the_iteration_last_sent() -> None:
    events: list[Event] = []
    reporter = StreamedText(events.append)
    reporter.on_text("a")
    reporter(RequestSent(2, {}))
    reporter.on_text("b")
    assert events == [TextDelta(0, "a"), RequestSent(2, {}), TextDelta(2, "b")]


# --- the lesson -----------------------------------------------------------------------------------


STREAMED = cassettes_dir() / "streamed.yaml"


def test_the_streamed_lesson_replays_streaming_and_equals_the_canonical_list(tmp_path: Path) -> None:
    events: list[Event] = []
    result = replay(STREAMED, report=events.append, keep_db=tmp_path / "streamed")
    canonical = replay(cassettes_dir() / "no_mornings.yaml", report=lambda event: None, keep_db=tmp_path / "nm")
    assert result.exit_code == 0
    assert read_setup(STREAMED)["options"]["stream"] is True
    requests = [e.request for e in events if isinstance(e, RequestSent)]
    assert [len(r["messages"]) for r in requests] == [1, 3, 5]
    assert all(r["stream"] is True for r in requests)
    assert exact(result.messages) == exact(canonical.messages)  # every turn, the assistant's included, exactly
    deltas = [e for e in events if isinstance(e, TextDelta)]
    assert len(deltas) > 1
    assert {d.iteration for d in deltas} == {3}
    assert "".join(d.text for d in deltas) == result.outcomes[-1].text


def test_the_streamed_cassette_stores_the_event_streams_as_they_came() -> None:
    data = yaml.safe_load(STREAMED.read_text())
    bodies = [i["response"]["body"]["string"] for i in data["interactions"]]
    assert all(isinstance(b, str) and "event: content_block_delta" in b for b in bodies)
    assert sum(b.count('"type":"input_json_delta"') for b in bodies) > 2


# --- the assembler on what the API also sends: compaction, new event types, cut-off blocks ----------


def stream_of(*blocks: tuple[JSON, list[JSON]], stop: bool = True) -> list[tuple[str, JSON]]:
    """A stream of blocks, each (its start, its deltas), closed properly."""
    start: JSON = {"id": "msg_c1", "type": "message", "role": "assistant", "model": "m", "content": []}
    start |= {"stop_reason": None, "usage": {"input_tokens": 3, "output_tokens": 1}}
    events: list[tuple[str, JSON]] = [("message_start", {"type": "message_start", "message": start})]
    for index, (block, deltas) in enumerate(blocks):
        events.append(("content_block_start", {"type": "content_block_start", "index": index, "content_block": block}))
        for delta in deltas:
            events.append(("content_block_delta", {"type": "content_block_delta", "index": index, "delta": delta}))
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
    events.append(("message_delta", {"type": "message_delta", "delta": {"stop_reason": "end_turn"}, "usage": {}}))
    return [*events, ("message_stop", {"type": "message_stop"})] if stop else events


SUMMARY = "The person asked for a slot with Sam; Tuesday 9:00 was booked."
COMPACTED = stream_of(
    ({"type": "compaction", "content": None}, [{"type": "compaction_delta", "content": SUMMARY}]),
    (text(""), [{"type": "text_delta", "text": "Hello"}, {"type": "text_delta", "text": " again."}]),
)


def test_a_compaction_block_gets_its_content_from_the_compaction_delta() -> None:
    message = assemble(COMPACTED)
    assert message["content"] == [{"type": "compaction", "content": SUMMARY}, text("Hello again.")]
    assert list(message["content"][0]) == ["type", "content"]  # the API's key order


def test_an_event_type_the_assembler_does_not_know_is_skipped_and_counted() -> None:
    from collections import Counter

    heartbeat: tuple[str, JSON] = ("thread_heartbeat", {"type": "thread_heartbeat"})
    events = [COMPACTED[0], heartbeat, *COMPACTED[1:4], heartbeat, *COMPACTED[4:]]
    skipped: Counter[str] = Counter()
    assert assemble(events, skipped=skipped) == assemble(COMPACTED)
    assert skipped == {"thread_heartbeat": 2}
    assert assemble(events)["content"][1] == text("Hello again.")  # no counter given: skipped all the same


def test_a_delta_type_the_assembler_does_not_know_is_an_error_that_names_it() -> None:
    events = stream_of((text(""), [{"type": "text_delta", "text": "Hi"}, {"type": "shimmer_delta", "glow": 1}]))
    with pytest.raises(IncompleteStream, match=r"block 0 \(a 'text' block\) got a delta of type 'shimmer_delta'"):
        assemble(events)


def test_a_block_still_open_at_message_stop_or_at_the_end_is_an_incomplete_stream() -> None:
    call = tool_use("toolu_cut", "find_free_slots", {})
    pieces = [{"type": "input_json_delta", "partial_json": '{"person": "sam", '}]
    whole = stream_of((text(""), [{"type": "text_delta", "text": "Looking."}]), (call, pieces))
    without_stop = [
        event for event in whole if event != ("content_block_stop", {"type": "content_block_stop", "index": 1})
    ]
    with pytest.raises(IncompleteStream, match=r"block 1 \(tool_use\) still open at message_stop"):
        assemble(without_stop)  # never a tool call whose input is {} although the model sent part of it
    cut = without_stop[: without_stop.index(("message_delta", without_stop[-2][1]))]
    with pytest.raises(IncompleteStream, match=r"block 1 \(tool_use\) still open when the stream ended"):
        assemble(cut)


def test_an_error_event_and_misplaced_events_are_incomplete_streams_not_crashes() -> None:
    events = stream_of((text(""), [{"type": "text_delta", "text": "Hi"}]))
    error: tuple[str, JSON] = (
        "error",
        {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
    )
    with pytest.raises(IncompleteStream, match="the stream carried an error event"):
        assemble([*events[:3], error])
    stray = (
        "content_block_delta",
        {"type": "content_block_delta", "index": 5, "delta": {"type": "text_delta", "text": "x"}},
    )
    with pytest.raises(IncompleteStream, match="a delta for block 5, which is not open"):
        assemble([*events[:3], stray, *events[3:]])
    with pytest.raises(IncompleteStream, match="a content_block_delta event the assembler cannot place"):
        assemble([*events[:2], ("content_block_delta", {"type": "content_block_delta", "index": 0})])


def test_a_message_delta_field_beside_the_delta_is_kept_before_usage() -> None:
    events = stream_of((text(""), [{"type": "text_delta", "text": "Done."}]))
    management = {"applied_edits": []}
    name, data = events[-2]
    events[-2] = (name, {**data, "context_management": management})
    message = assemble(events)
    assert message["context_management"] == management
    assert list(message)[-3:] == ["stop_reason", "context_management", "usage"]
