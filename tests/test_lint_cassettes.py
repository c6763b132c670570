"""`lint` on the cassettes people have: vcrpy's bodies (strings, YAML structures, gzip binary),
pytest-recording's, pydantic-ai's `parsed_body`, vcrpy's JSON files; only Messages API interactions
checked; python tags read as data by a safe loader; streamed responses assembled (gzip too); warnings
exit 0 unless strict. Each cassette here is written by the test, in the shape its recorder writes."""

from __future__ import annotations

import base64
import copy
import gzip
import json
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from scheduler_agent.agent.types import JSON
from scheduler_agent.cli import app
from scheduler_agent.grammar import recorded
from scheduler_agent.grammar.lint import EXIT_CLEAN, EXIT_VIOLATIONS, lint_file
from scheduler_agent.testing.scripted_server import Reply, sse, text, tool_use

URI = "https://api.anthropic.com/v1/messages"
ASK = {"role": "user", "content": [{"type": "text", "text": "Is Sam free on Tuesday morning?"}]}
FIRST = Reply(
    [text("Let me check Sam's Tuesday."), tool_use("toolu_t1", "find_free_slots", {"person": "sam"})], "tool_use"
)
SECOND = Reply([text("Sam is free from 9:00 to 11:00.")])
RESULTS = {
    "role": "user",
    "content": [{"type": "tool_result", "tool_use_id": "toolu_t1", "content": "Tue 09:00-11:00"}],
}


def request(messages: list[Any]) -> JSON:
    return {"max_tokens": 1024, "messages": messages, "model": "claude-sonnet-5-5"}


def rounds() -> list[tuple[JSON, Reply]]:
    """Two requests of one turn: the second carries the first reply's content as it came."""
    first = request([ASK])
    second = request([ASK, {"role": "assistant", "content": copy.deepcopy(FIRST.content)}, RESULTS])
    return [(first, FIRST), (second, SECOND)]


def stream_text(reply: Reply, sent: JSON, number: int) -> str:
    return "".join(sse(name, data).decode() for name, data in reply.events(sent, number))


# --- the formats ----------------------------------------------------------------------------------------

Writer = Callable[[JSON, Reply, int], JSON]


def vcrpy_strings(sent: JSON, reply: Reply, number: int) -> JSON:
    """vcrpy's YAML: bodies as JSON strings."""
    return {
        "request": {"body": json.dumps(sent), "headers": {"host": ["api.anthropic.com"]}, "method": "POST", "uri": URI},
        "response": {
            "body": {"string": json.dumps(reply.body(sent, number))},
            "headers": {"content-type": ["application/json"]},
            "status": {"code": 200, "message": "OK"},
        },
    }


def vcrpy_structure(sent: JSON, reply: Reply, number: int) -> JSON:
    """A recorder that writes the JSON bodies as YAML structures."""
    interaction = vcrpy_strings(sent, reply, number)
    interaction["request"]["body"] = copy.deepcopy(sent)
    interaction["response"]["body"] = copy.deepcopy(reply.body(sent, number))
    return interaction


def pytest_recording_gzip_stream(sent: JSON, reply: Reply, number: int) -> JSON:
    """pytest-recording (vcrpy's YAML): a streamed reply kept as the gzip bytes the server sent (`!!binary`)."""
    streamed = {**sent, "stream": True}
    return {
        "request": {"body": json.dumps(streamed), "headers": {}, "method": "POST", "uri": URI},
        "response": {
            "body": {"string": gzip.compress(stream_text(reply, streamed, number).encode())},
            "headers": {"Content-Encoding": ["gzip"], "Content-Type": ["text/event-stream; charset=utf-8"]},
            "status": {"code": 200, "message": "OK"},
        },
    }


def vcrpy_gzip_json(sent: JSON, reply: Reply, number: int) -> JSON:
    """vcrpy's YAML without decode_compressed_response: the JSON reply as gzip bytes."""
    interaction = vcrpy_strings(sent, reply, number)
    interaction["request"]["body"] = json.dumps(sent).encode()  # a bytes request body
    interaction["response"]["body"] = {"string": gzip.compress(json.dumps(reply.body(sent, number)).encode())}
    interaction["response"]["headers"]["content-encoding"] = ["gzip"]
    return interaction


def ruby_vcr_base64(sent: JSON, reply: Reply, number: int) -> JSON:
    """Ruby VCR's shape: `body: {encoding: ..., base64_string: ...}`."""
    interaction = vcrpy_strings(sent, reply, number)
    interaction["request"]["body"] = {"encoding": "UTF-8", "string": json.dumps(sent)}
    encoded = base64.b64encode(json.dumps(reply.body(sent, number)).encode()).decode()
    interaction["response"]["body"] = {"encoding": "ASCII-8BIT", "base64_string": encoded}
    return interaction


def pydantic_ai(sent: JSON, reply: Reply, number: int) -> JSON:
    """pydantic-ai's cassettes: `parsed_body` in place of the body, on both sides."""
    return {
        "request": {"headers": {"host": ["api.anthropic.com"]}, "method": "POST", "parsed_body": sent, "uri": URI},
        "response": {"headers": {}, "parsed_body": reply.body(sent, number), "status": {"code": 200, "message": "OK"}},
    }


def pydantic_ai_stream(sent: JSON, reply: Reply, number: int) -> JSON:
    """pydantic-ai's streamed replies: the event stream as a string body."""
    streamed = {**sent, "stream": True}
    interaction = pydantic_ai(streamed, reply, number)
    del interaction["response"]["parsed_body"]
    interaction["response"]["body"] = {"string": stream_text(reply, streamed, number)}
    return interaction


FORMATS: dict[str, Writer] = {
    "vcrpy strings": vcrpy_strings,
    "vcrpy YAML structures": vcrpy_structure,
    "pytest-recording gzip stream": pytest_recording_gzip_stream,
    "vcrpy gzip JSON": vcrpy_gzip_json,
    "Ruby VCR base64": ruby_vcr_base64,
    "pydantic-ai parsed_body": pydantic_ai,
    "pydantic-ai stream": pydantic_ai_stream,
}


def cassette(tmp_path: Path, writer: Writer, edit: Callable[[list[JSON]], None] | None = None) -> Path:
    interactions = copy.deepcopy([writer(sent, reply, n) for n, (sent, reply) in enumerate(rounds(), start=1)])
    if edit:
        edit(interactions)
    path = tmp_path / "recorded.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}, sort_keys=False), encoding="utf-8")
    return path


def second_messages(interaction: JSON) -> list[Any]:
    """The messages of a request, in whichever format the interaction holds them."""
    part = interaction["request"]
    if "parsed_body" in part:
        return part["parsed_body"]["messages"]  # type: ignore[no-any-return]
    raise AssertionError("only parsed_body cassettes are edited in place here")


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_lints_clean_and_its_answer_is_checked(tmp_path: Path, name: str) -> None:
    path = cassette(tmp_path, FORMATS[name])
    result = lint_file(path)
    assert (result.exit_code, result.lines, result.checked, result.skipped) == (EXIT_CLEAN, [], 2, 0)
    # the answer was read: a second request whose assistant turn differs from it is caught
    data = yaml.safe_load(path.read_text())
    first_reply = recorded.response_message(data["interactions"][0], Counter())
    assert first_reply["content"] == FIRST.content


@pytest.mark.parametrize("name", ["pydantic-ai parsed_body", "pydantic-ai stream"])
def test_a_turn_that_is_not_the_answer_it_came_from_is_a_warning(tmp_path: Path, name: str) -> None:
    def rebuild(interactions: list[JSON]) -> None:
        second_messages(interactions[1])[1]["content"][1]["input"] = {"person": "ana"}

    path = cassette(tmp_path, FORMATS[name], rebuild)
    result = lint_file(path)
    [line] = result.lines
    assert "request 2: messages[1]: warning: the assistant turn is not the provider's own content" in line
    assert "content[1].input.person" in line
    assert result.exit_code == EXIT_CLEAN
    assert lint_file(path, strict=True).exit_code == EXIT_VIOLATIONS


def test_a_vcrpy_json_cassette_is_read_too(tmp_path: Path) -> None:
    interactions = [vcrpy_strings(sent, reply, n) for n, (sent, reply) in enumerate(rounds(), start=1)]
    path = tmp_path / "recorded.json"
    path.write_text(json.dumps({"interactions": interactions, "version": 1}))
    result = lint_file(path)
    assert (result.kind, result.exit_code, result.checked) == ("cassette", EXIT_CLEAN, 2)


def test_only_messages_api_interactions_are_checked_and_the_others_counted(tmp_path: Path) -> None:
    def add_others(interactions: list[JSON]) -> None:
        count = copy.deepcopy(interactions[0])
        count["request"]["uri"] = URI + "/count_tokens"
        other = copy.deepcopy(interactions[0])
        other["request"]["uri"] = "https://api.openai.com/v1/chat/completions"
        other["request"]["body"] = json.dumps({"messages": [{"role": "system", "content": 3}]})  # not checked
        beta = copy.deepcopy(interactions[1])
        beta["request"]["uri"] = URI + "?beta=true"
        interactions[:] = [count, interactions[0], other, beta]

    path = cassette(tmp_path, vcrpy_strings, add_others)
    result = lint_file(path)
    assert (result.exit_code, result.checked, result.skipped, result.lines) == (EXIT_CLEAN, 2, 2, [])
    assert result.summary.endswith("(2 requests; skipped 2 interactions that are not Messages API requests)")


def test_python_tags_are_read_as_plain_data_and_nothing_runs(tmp_path: Path) -> None:
    marker = tmp_path / "ran"
    good = cassette(tmp_path, vcrpy_strings).read_text()
    tagged = good.replace(
        "  response:\n",
        f"    extra: !!python/object/apply:os.system ['touch {marker}']\n  response:\n",
        1,
    ).replace(
        "    headers:\n      content-type:",
        "    headers: !!python/object/apply:multidict._multidict.CIMultiDictProxy\n"
        "    - !!python/object/apply:multidict._multidict.CIMultiDict\n"
        "      - - [content-type, application/json]\n"
        "    headers_again:\n      content-type:",
        1,
    )
    assert "!!python/object/apply:os.system" in tagged
    assert "CIMultiDictProxy" in tagged
    path = tmp_path / "tagged.yaml"
    path.write_text(tagged)
    with pytest.raises(yaml.constructor.ConstructorError):
        yaml.safe_load(tagged)  # the plain safe loader refuses it; lint's reads it as data
    result = lint_file(path)
    assert (result.exit_code, result.checked) == (EXIT_CLEAN, 2)
    assert not marker.exists()  # os.system was never called
    data = recorded.load_yaml(tagged)
    assert data["interactions"][0]["request"]["extra"] == [f"touch {marker}"]


def test_a_stream_cut_off_is_noted_and_its_answer_not_used(tmp_path: Path) -> None:
    def cut(interactions: list[JSON]) -> None:
        body = gzip.decompress(interactions[0]["response"]["body"]["string"]).decode()
        kept = body[: body.rindex("event: content_block_stop")]  # the call's input was still arriving
        interactions[0]["response"]["body"]["string"] = gzip.compress(kept.encode())

    path = cassette(tmp_path, pytest_recording_gzip_stream, cut)
    result = lint_file(path)
    assert result.exit_code == EXIT_CLEAN
    assert result.errors == 0
    [note] = result.lines
    assert note == (
        f"{path}: response 1: not checked against the next request (block 1 (tool_use) still open when the "
        "stream ended: the reply was cut off)"
    )


def test_unknown_stream_events_are_skipped_and_counted(tmp_path: Path) -> None:
    def add_event(interactions: list[JSON]) -> None:
        body = interactions[1]["response"]["body"]["string"]
        extra = 'event: thread_heartbeat\ndata: {"type":"thread_heartbeat"}\n\n'
        interactions[1]["response"]["body"]["string"] = body.replace(
            "event: message_delta", extra * 2 + "event: message_delta"
        )

    result = lint_file(cassette(tmp_path, pydantic_ai_stream, add_event))
    assert result.exit_code == EXIT_CLEAN
    assert result.lines == [
        f"{result.path}: skipped stream events of types the assembler does not know: thread_heartbeat (2)"
    ]


def test_a_compressed_body_lint_cannot_read_is_a_note(tmp_path: Path) -> None:
    def brotli(interactions: list[JSON]) -> None:
        interactions[0]["response"]["headers"]["content-encoding"] = ["br"]
        interactions[0]["response"]["body"]["string"] = b"\x8b\x03\x80not really brotli"

    result = lint_file(cassette(tmp_path, vcrpy_gzip_json, brotli))
    assert result.exit_code == EXIT_CLEAN
    assert result.lines == [
        f"{result.path}: response 1: not checked against the next request (the body is br-compressed, which lint "
        "cannot read)"
    ]


# --- levels on the command line -------------------------------------------------------------------------

SPLIT_ROUND = [
    ASK,
    {
        "role": "assistant",
        "content": [text("Checking both."), tool_use("toolu_s", "find_free_slots", {"person": "sam"})],
    },
    {"role": "assistant", "content": [tool_use("toolu_a", "find_free_slots", {"person": "ana"})]},
    {
        "role": "user",
        "content": [
            {"type": "tool_result", "tool_use_id": "toolu_s", "content": "Tue 9-11"},
            {"type": "tool_result", "tool_use_id": "toolu_a", "content": "Tue 10-12"},
        ],
    },
]


def test_warnings_only_exit_0_and_strict_or_the_environment_makes_them_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "split.json"
    path.write_text(json.dumps(SPLIT_ROUND))
    runner = CliRunner()
    monkeypatch.delenv("SCHEDULER_AGENT_STRICT", raising=False)
    relaxed = runner.invoke(app, ["lint", str(path)])
    assert relaxed.exit_code == 0
    assert (
        relaxed.stdout
        == f"{path}: messages[2]: warning: two assistant turns in a row (messages[1] and messages[2])"
        + (
            ": the API would merge them, but the loop never builds this; every assistant turn is followed by the user "
            "turn that answers it\n"
        )
    )
    assert runner.invoke(app, ["lint", "--strict", str(path)]).exit_code == 1
    monkeypatch.setenv("SCHEDULER_AGENT_STRICT", "1")
    assert runner.invoke(app, ["lint", str(path)]).exit_code == 1


def test_an_error_exits_1_whatever_the_strictness(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    broken = copy.deepcopy(SPLIT_ROUND)
    del broken[3]["content"][1]  # toolu_a has no result now
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    monkeypatch.delenv("SCHEDULER_AGENT_STRICT", raising=False)
    result = CliRunner().invoke(app, ["lint", str(path)])
    assert result.exit_code == 1
    assert (
        f"{path}: messages[2]: `tool_use` ids were found without `tool_result` blocks immediately after: toolu_a."
        in result.stdout
    )
