"""`lint_file`: the grammar check on a conversation, a dump, or a cassette; one line per violation."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import RequestSent
from scheduler_agent.cli.render import ArrayDumpFile
from scheduler_agent.grammar.check import API_MISSING_RESULTS, API_PREFILL
from scheduler_agent.grammar.lint import EXIT_CLEAN, EXIT_INTERRUPTED, EXIT_VIOLATIONS, interruption_note, lint_file
from scheduler_agent.lessons.authoring import cassette_path

CANONICAL = cassette_path("no_mornings")

USER = {"role": "user", "content": [{"type": "text", "text": "Book 30 minutes with Priya next week."}]}
ASKS = {
    "role": "assistant",
    "content": [
        {"type": "text", "text": "Let me look."},
        {"type": "tool_use", "id": "toolu_1", "name": "find_free_slots", "input": {"person": "priya"}},
        {"type": "tool_use", "id": "toolu_2", "name": "create_event", "input": {"with": "priya"}},
    ],
}
ANSWERS = {
    "role": "user",
    "content": [
        {"type": "tool_result", "tool_use_id": "toolu_1", "content": "Mon 14:00-16:00"},
        {"type": "tool_result", "tool_use_id": "toolu_2", "content": "Booked."},
    ],
}
FINAL = {"role": "assistant", "content": [{"type": "text", "text": "Booked Monday at 14:00."}]}


def write(path: Path, data: Any) -> Path:
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


# --- the canonical files lint clean -------------------------------------------------------------------


def test_the_canonical_cassette_lints_clean() -> None:
    result = lint_file(CANONICAL)
    assert (result.exit_code, result.lines, result.kind, result.checked) == (EXIT_CLEAN, [], "cassette", 3)
    assert result.summary == f"{CANONICAL}: ok (3 requests)"


def test_a_dump_written_by_array_dump_file_lints_clean(tmp_path: Path) -> None:
    from scheduler_agent.playback.replay import replay

    dump = tmp_path / "dump.jsonl"
    replay(CANONICAL, report=ArrayDumpFile(dump))
    result = lint_file(dump)
    assert (result.exit_code, result.lines, result.kind, result.checked) == (EXIT_CLEAN, [], "dump", 3)


# --- conversations --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "data",
    [[USER, ASKS, ANSWERS, FINAL], {"messages": [USER, ASKS, ANSWERS, FINAL]}, [USER, ASKS, ANSWERS]],
    ids=["array", "object", "waiting for the model"],
)
def test_a_valid_conversation_is_clean(tmp_path: Path, data: Any) -> None:
    result = lint_file(write(tmp_path / "c.json", data))
    assert (result.exit_code, result.lines, result.kind) == (EXIT_CLEAN, [], "conversation")


def test_an_interrupted_conversation_exits_6_and_says_how_to_finish_it(tmp_path: Path) -> None:
    path = write(tmp_path / "c.json", [USER, ASKS])
    result = lint_file(path)
    assert result.exit_code == EXIT_INTERRUPTED == 6
    [line] = result.lines
    assert line == (
        f"{path}: interrupted: the last assistant turn (messages[1]) asked for find_free_slots (toolu_1), "
        "create_event (toolu_2) and the list holds no results for them; if it is a stored conversation, "
        "finish the round with `scheduler-agent resume ID`, otherwise append a user turn with one "
        "tool_result per call id"
    )
    assert interruption_note([USER, ASKS], "c42").endswith("finish the round with `scheduler-agent resume c42`")


def test_violations_exit_1_one_line_each(tmp_path: Path) -> None:
    """The article's shapes (a) and (b) in one file: results before their question, a call without result."""
    broken = {**ANSWERS, "content": ANSWERS["content"][:1]}
    path = write(tmp_path / "c.json", [USER, ANSWERS, ASKS, broken, FINAL])
    result = lint_file(path)
    assert result.exit_code == EXIT_VIOLATIONS
    assert [line.split(": ")[1] for line in result.lines] == [
        "messages[1]",
        "messages[1].content[0]",
        "messages[1].content[1]",
        "messages[2]",
    ]
    assert result.lines[3] == f"{path}: messages[2]: {API_MISSING_RESULTS.format(ids='toolu_2')}"
    assert result.summary == f"{path}: 4 violations (3 errors, 1 warning) in a conversation of 5 entries"
    assert result.lines[0].startswith(f"{path}: messages[1]: warning: two user turns in a row")


def test_violations_and_an_interruption_exit_1_and_say_both(tmp_path: Path) -> None:
    result = lint_file(write(tmp_path / "c.json", [{"role": "user", "content": ""}, ASKS]))
    assert result.exit_code == EXIT_VIOLATIONS
    assert len(result.lines) == 2
    assert "interrupted" in result.lines[1]


# --- dumps ----------------------------------------------------------------------------------------------


def dump_of(tmp_path: Path, *lists: list[Any], iterations: list[int] | None = None) -> Path:
    path = tmp_path / "dump.jsonl"
    record = ArrayDumpFile(path)
    for iteration, messages in zip(iterations or range(1, len(lists) + 1), lists, strict=True):
        record(RequestSent(iteration, {"model": "m", "messages": messages}))
    return path


def test_a_dump_names_the_iteration_of_each_violation(tmp_path: Path) -> None:
    path = dump_of(tmp_path, [USER], [USER, ASKS], [USER, ASKS, ANSWERS])
    result = lint_file(path)
    assert result.exit_code == EXIT_VIOLATIONS
    assert result.kind == "dump"
    assert result.checked == 3
    assert result.lines == [
        f"{path}: iteration 2: messages[1]: {API_MISSING_RESULTS.format(ids='toolu_1, toolu_2')}",
        f"{path}: iteration 2: messages[1]: a request must end with a user turn, and this one ends with an "
        f'assistant turn (the API: "{API_PREFILL}")',
    ]


def test_a_dump_of_several_turns_names_lines_too(tmp_path: Path) -> None:
    path = dump_of(tmp_path, [USER], [USER, FINAL], iterations=[1, 1])
    assert [line.split(": ")[1] for line in lint_file(path).lines] == ["line 2 (iteration 1)"]


def test_a_dump_of_one_iteration_is_a_request_not_a_conversation(tmp_path: Path) -> None:
    path = dump_of(tmp_path, [USER, FINAL])
    result = lint_file(path)
    assert result.kind == "dump"
    assert result.exit_code == EXIT_VIOLATIONS
    assert result.lines[0].startswith(f"{path}: iteration 1: messages[1]: a request must end with a user turn")


def test_a_dump_line_without_messages(tmp_path: Path) -> None:
    path = tmp_path / "d.jsonl"
    path.write_text(json.dumps({"iteration": 1, "messages": [USER]}) + "\n" + json.dumps({"x": 1}) + "\n")
    assert lint_file(path).lines == [f'{path}: line 2: not a dump record: it has no "messages" array']


# --- cassettes ------------------------------------------------------------------------------------------


def edited_cassette(tmp_path: Path, edit: Any) -> Path:
    data = yaml.safe_load(CANONICAL.read_text(encoding="utf-8"))
    edit(data["interactions"])
    path = tmp_path / "edited.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


def messages_of(interactions: list[Any], number: int) -> list[Any]:
    messages: list[Any] = interactions[number - 1]["request"]["body"]["json"]["messages"]
    return messages


def test_a_cassette_names_the_request_of_each_violation(tmp_path: Path) -> None:
    path = edited_cassette(tmp_path, lambda i: messages_of(i, 3)[2]["content"].pop())
    result = lint_file(path)
    assert result.exit_code == EXIT_VIOLATIONS
    assert result.lines == [
        f"{path}: request 3: messages[1]: {API_MISSING_RESULTS.format(ids='toolu_scripted_nm_01')}",
        f"{path}: request 3: messages[2].content: all messages must have non-empty content except for the "
        "optional final assistant message",
    ]


def test_a_cassette_catches_an_assistant_turn_rebuilt_from_a_few_fields(tmp_path: Path) -> None:
    """Shape (c): the request carries a turn that is not the response it came from; only the response shows it."""

    def rebuild(interactions: list[Any]) -> None:
        turn = messages_of(interactions, 2)[1]
        turn["content"] = [{**block, "input": {"person": "priya"}} for block in turn["content"]]

    path = edited_cassette(tmp_path, rebuild)
    result = lint_file(path)
    [line] = result.lines
    assert line.startswith(
        f"{path}: request 2: messages[1]: warning: the assistant turn is not the provider's own content: it "
        "differs at content[0].input.week (only received)"
    )
    assert result.exit_code == EXIT_CLEAN  # the API cannot see it: a warning, printed ...
    assert lint_file(path, strict=True).exit_code == EXIT_VIOLATIONS  # ... that fails when strict


def test_a_cassette_with_json_string_bodies(tmp_path: Path) -> None:
    """vcrpy's own format stores bodies as strings; those are read too."""

    def stringify(interactions: list[Any]) -> None:
        for interaction in interactions:
            interaction["request"]["body"] = json.dumps(interaction["request"]["body"]["json"])

    assert lint_file(edited_cassette(tmp_path, stringify)).exit_code == EXIT_CLEAN


def test_a_cassette_request_without_messages(tmp_path: Path) -> None:
    path = edited_cassette(tmp_path, lambda i: i[0]["request"].update(body="not json"))
    assert lint_file(path).lines == [f'{path}: request 1: the request body has no "messages" array']


# --- files that cannot be linted: one actionable line ------------------------------------------------


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("missing.json", None, "No file at {path}: give a JSON array of messages, a dump or a cassette"),
        ("bad.json", "[{", "{path} is not valid JSON (Expecting property name enclosed in double quotes: line 1"),
        ("bad.jsonl", '{"messages": []}\n{', "{path} is not valid JSON (line 2: Expecting property name"),
        ("empty.json", "\n", "{path} is empty: lint reads a JSON array of messages"),
        ("number.json", "3", "{path} is JSON but not a message list: give an array of messages, an object with"),
        ("object.json", '{"model": "m"}', "{path} is JSON but not a message list: give an array of messages"),
        ("bad.yaml", "a: [", "{path} is not valid YAML: "),
        ("other.yaml", "a: 1\n", '{path} is not a cassette: it has no "interactions" list'),
        ("binary.json", b"\xff\xfe", "Cannot read {path}: "),
    ],
)
def test_an_unreadable_file_is_one_actionable_line(
    tmp_path: Path, name: str, text: str | bytes | None, message: str
) -> None:
    path = tmp_path / name
    if isinstance(text, bytes):
        path.write_bytes(text)
    elif text is not None:
        path.write_text(text, encoding="utf-8")
    with pytest.raises(AgentError) as caught:
        lint_file(path)
    assert str(caught.value).startswith(message.format(path=path))
    assert "\n" not in str(caught.value)


def test_a_rebuilt_turn_is_caught_in_a_streamed_cassette_too(tmp_path: Path) -> None:
    from scheduler_agent.lessons.catalogue import cassettes_dir

    data = yaml.safe_load((cassettes_dir() / "streamed.yaml").read_text())
    assert lint_file(cassettes_dir() / "streamed.yaml").exit_code == 0  # assembled from its events: clean
    request = data["interactions"][1]["request"]["body"]["json"]
    request["messages"][1]["content"][0]["input"]["week"] = "2026-09-07"  # not what the stream said
    path = tmp_path / "rebuilt.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    result = lint_file(path)
    assert (result.exit_code, result.warnings, result.errors) == (0, 1, 0)  # the API accepts it: a warning
    assert lint_file(path, strict=True).exit_code == 1
    assert any(
        "request 2: messages[1]: warning: the assistant turn is not the provider's own content" in line
        for line in result.lines
    )


@pytest.mark.parametrize("name", ["deep.json", "deep.yaml"])
def test_a_file_nested_too_deep_for_the_parser_is_one_line_through_the_cli(tmp_path: Path, name: str) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    path = tmp_path / name
    path.write_text("[" * 10_000 + "]" * 10_000)
    result = CliRunner().invoke(app, ["lint", str(path)])
    assert result.exit_code == 2  # a file that cannot be read as a list is a usage problem (issue 33)
    assert (
        result.stderr == f"Error: {path} is too deeply nested to be a message list (arrays or objects hundreds "
        "of levels deep): give a JSON array of messages, a dump or a cassette (.yaml)\n"
    )


@pytest.mark.parametrize(
    ("text", "held"),
    [
        (
            "interactions: [5, null]\n",
            "none of its 2 interactions is a request to https://api.anthropic.com/v1/messages",
        ),
        ("interactions: []\n", "no interactions"),
        (
            "interactions:\n- request: {uri: 'https://dav.example.com/cal/', method: GET, body: x}\n",
            "none of its 1 interaction is a request to",
        ),
    ],
)
def test_a_cassette_with_no_messages_api_request_is_not_called_clean(tmp_path: Path, text: str, held: str) -> None:
    from click.testing import CliRunner

    from scheduler_agent.cli import app

    path = tmp_path / "c.yaml"
    path.write_text(text)
    result = CliRunner().invoke(app, ["lint", str(path)])
    assert result.exit_code == 2  # it passed, with nothing said, though nothing in it was checked (2: issue 33)
    assert result.stderr.startswith(f"Error: {path} holds no Messages API request to check (")
    assert held in result.stderr
    assert result.stderr.count("\n") == 1
