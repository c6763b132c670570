"""The canonical trace, replayed offline through the real SDK and loop from cassettes/no_mornings.yaml."""

from __future__ import annotations

import json
import shutil
import sqlite3
from pathlib import Path

import pytest
import yaml

from scheduler_agent.agent.errors import CassetteError
from scheduler_agent.agent.events import Event, RequestSent, Stop
from scheduler_agent.agent.types import JSON
from scheduler_agent.cli.render import ArrayDumpFile
from scheduler_agent.lessons.authoring import cassette_path
from scheduler_agent.playback.cassette_file import ReadableYaml
from scheduler_agent.playback.replay import replay

CANONICAL = cassette_path("no_mornings")
RULE = "Nothing before 10am."


def recorded_bodies(path: Path) -> list[JSON]:
    cassette = ReadableYaml.deserialize(path.read_text())
    return [json.loads(i["request"]["body"]) for i in cassette["interactions"]]


def test_the_canonical_trace_replays_and_books_monday_at_two(tmp_path: Path) -> None:
    events: list[Event] = []
    result = replay(CANONICAL, report=events.append, keep_db=tmp_path)
    requests = [e.request for e in events if isinstance(e, RequestSent)]

    assert [len(r["messages"]) for r in requests] == [1, 3, 5]
    assert all(RULE in r["messages"][0]["content"][0]["text"] for r in requests)  # the rule is in every array
    calls = [b for m in result.messages if m["role"] == "assistant" for b in m["content"] if b["type"] == "tool_use"]
    assert [(c["name"], c["input"]) for c in calls] == [
        ("find_free_slots", {"person": "priya", "week": "2026-08-31"}),
        ("create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}),
    ]
    found = result.messages[2]["content"][0]["content"]
    assert "Mon 2026-08-31 09:00-09:30" in found
    assert "Wed 2026-09-02 09:15-09:45" in found
    assert result.outcomes[-1].stop is Stop.DONE
    assert "14:00" in result.outcomes[-1].text
    assert result.messages[-1]["role"] == "assistant"  # the final answer stays in the list

    conn = sqlite3.connect(tmp_path / "calendar.db")
    rows = conn.execute(
        "SELECT e.start_utc, e.end_utc FROM events e JOIN event_attendees a ON a.event_id = e.id "
        "WHERE a.person_key = 'priya' AND e.start_utc LIKE '2026-08-31%' ORDER BY e.start_utc"
    ).fetchall()
    assert ("2026-08-31T13:00:00Z", "2026-08-31T13:30:00Z") in rows  # 14:00-14:30 London (BST)


def test_the_dump_file_is_exactly_the_bodies_that_were_sent(tmp_path: Path) -> None:
    dump = tmp_path / "dump.jsonl"
    replay(CANONICAL, report=ArrayDumpFile(dump))
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    assert [r["iteration"] for r in records] == [1, 2, 3]
    assert [r["request"] for r in records] == recorded_bodies(CANONICAL)
    assert all(r["messages"] == r["request"]["messages"] for r in records)


def copy_cassette(tmp_path: Path) -> tuple[Path, dict]:  # type: ignore[type-arg]
    path = tmp_path / "copy.yaml"
    shutil.copy(CANONICAL, path)
    return path, yaml.safe_load(path.read_text())


def test_a_diverging_request_names_the_first_differing_path(tmp_path: Path) -> None:
    path, data = copy_cassette(tmp_path)
    data["metadata"]["scheduler_agent"]["clock"] = "2026-08-26T09:00"  # the prompt would say Wednesday
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CassetteError, match=r"Request 1 of 3 in .* differs from the recording at system: recorded"):
        replay(path, report=lambda e: None)


def test_a_recorded_interaction_never_used_fails_the_replay(tmp_path: Path) -> None:
    path, data = copy_cassette(tmp_path)
    data["interactions"].append(data["interactions"][-1])
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    with pytest.raises(CassetteError, match=r"1 of 4 recorded interactions .* were never requested"):
        replay(path, report=lambda e: None)


def test_the_canonical_cassette_says_how_it_was_made_and_holds_no_secret() -> None:
    text = CANONICAL.read_text()
    assert text.startswith("# The canonical trace")
    assert "scripted replies" in text
    assert "estimates" in text
    data = yaml.safe_load(text)
    setup = data["metadata"]["scheduler_agent"]
    assert setup["kind"] == "recordable"
    assert setup["clock"] == "2026-08-27T09:00"
    assert setup["calendar"]["owner"]
    for interaction in data["interactions"]:
        assert set(interaction["request"]["headers"]) <= {"anthropic-version", "content-type"}
        assert interaction["response"]["headers"]["x-scripted-reply"]
    assert "authorization" not in text.lower()
    assert "x-api-key" not in text.lower()
