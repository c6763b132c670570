"""The cassette file format and matching, on their own (the replay tests use them end to end)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from scheduler_agent.grammar.jsondiff import first_difference
from scheduler_agent.playback.cassette_file import METADATA_KEY, ReadableYaml


@pytest.mark.parametrize(
    ("recorded", "sent", "expected"),
    [
        ({"a": 1}, {"a": 1}, None),
        (
            {"messages": [{"content": [{"input": {"start": "2026-08-31T14:00"}}]}]},
            {"messages": [{"content": [{"input": {"start": "2026-09-01T14:00"}}]}]},
            'messages[0].content[0].input.start: recorded "2026-08-31T14:00", sent "2026-09-01T14:00"',
        ),
        ({"messages": [1, 2]}, {"messages": [1, 2, 3]}, "messages (recorded 2 items, sent 3)"),
        ({"a": 1}, {"a": 1, "b": 2}, "b (only sent)"),
        ({"system": "x"}, {}, "system (only recorded)"),
        ({"n": 1}, {"n": 1.0}, "n: recorded 1, sent 1.0"),
    ],
)
def test_first_difference_names_the_path(recorded: object, sent: object, expected: str | None) -> None:
    assert first_difference(recorded, sent) == expected


def test_json_bodies_are_stored_as_yaml_structures_and_come_back_equal() -> None:
    body = {"max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], "system": "line one\nline two\n"}
    reply = {"id": "msg_1", "content": [{"type": "text", "text": "ok"}]}
    cassette = {
        "version": 1,
        "interactions": [
            {
                "request": {"method": "POST", "uri": "u", "body": json.dumps(body), "headers": {}},
                "response": {
                    "status": {"code": 200, "message": "OK"},
                    "headers": {},
                    "body": {"string": json.dumps(reply)},
                },
            }
        ],
    }
    text = ReadableYaml.serialize(json.loads(json.dumps(cassette)))
    assert "max_tokens: 10" in text
    assert "system: |" in text  # readable, not an escaped JSON string
    assert '"max_tokens"' not in text
    back = ReadableYaml.deserialize(text)["interactions"][0]
    assert json.loads(back["request"]["body"]) == body
    assert json.loads(back["response"]["body"]["string"]) == reply
    assert list(json.loads(back["response"]["body"]["string"])) == ["id", "content"]  # key order kept


def test_the_header_sends_a_reader_to_the_docs_page_that_explains_cassettes() -> None:
    """The line a cassette's header ends with names a page of the site and a heading on it; every committed
    cassette carries the line the authoring code writes now."""
    root = Path(__file__).resolve().parent.parent
    setup = {"title": "T", "kind": "scripted", "how": "by hand"}
    written = ReadableYaml.serialize({"metadata": {METADATA_KEY: setup}, "interactions": []})
    replay = next(line for line in written.splitlines() if line.startswith("# Replay:"))
    named = re.search(r"see (docs/[\w/-]+\.md), '([^']+)'", replay)
    assert named is not None, replay
    page = (root / named[1]).read_text()
    assert f"\n## {named[2]}\n" in page
    for cassette in sorted((root / "cassettes").glob("*.yaml")):
        assert replay in cassette.read_text().splitlines(), cassette.name
