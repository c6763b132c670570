"""The lesson suite: every cassette replays through the real SDK and loop and shows what it says it shows."""

from __future__ import annotations

import itertools
import json
import sqlite3
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from scheduler_agent.agent.errors import CassetteError
from scheduler_agent.agent.events import Event, RequestSent, TurnStarted
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.cli import app
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.grammar.lint import lint_file
from scheduler_agent.lessons.authoring import author
from scheduler_agent.lessons.catalogue import cassettes_dir, lessons
from scheduler_agent.lessons.scripts import LESSONS
from scheduler_agent.playback.cassette_file import read_setup
from scheduler_agent.playback.replay import Replayed, replay
from scheduler_agent.playback.vcr_cassette import KEPT_REQUEST_HEADERS, KEPT_RESPONSE_HEADERS
from scheduler_agent.session import prompt_loader
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text

CASSETTES = sorted(cassettes_dir().glob("*.yaml"))
NAMES = [path.stem for path in CASSETTES]


def run(path: Path, tmp_path: Path) -> tuple[Replayed, list[list[JSON]]]:
    """Replay, and group the requests sent by user turn."""
    turns: list[list[JSON]] = []

    def listen(event: Event) -> None:
        if isinstance(event, TurnStarted):
            turns.append([])
        elif isinstance(event, RequestSent):
            turns[-1].append(event.request)

    return replay(path, report=listen, keep_db=tmp_path), turns


def test_every_lesson_has_a_cassette_and_every_cassette_a_lesson() -> None:
    assert sorted(NAMES) == sorted(LESSONS)


@pytest.mark.parametrize("path", CASSETTES, ids=NAMES)
def test_each_cassette_replays_with_its_exit_code_and_an_append_only_list(path: Path, tmp_path: Path) -> None:
    setup = read_setup(path)
    result, turns = run(path, tmp_path)
    assert result.exit_code == setup["exit_code"]
    trimmed = setup["options"].get("context_budget") is not None
    for requests in turns:
        for request in requests:
            assert check(request["messages"], mode="request") == []
        for before, after in itertools.pairwise(requests):
            if not trimmed:  # within a turn, each request extends the one before it
                assert after["messages"][: len(before["messages"])] == before["messages"]
    assert check(result.messages, mode="conversation") == []


@pytest.mark.parametrize("path", CASSETTES, ids=NAMES)
def test_each_cassette_is_tagged_clean_and_free_of_secrets(path: Path) -> None:
    setup = read_setup(path)
    assert setup["kind"] in ("recordable", "scripted")
    assert setup["replies"] in ("recorded", "scripted")
    assert setup["title"]
    assert setup["lesson"]
    assert setup["how"]
    assert setup["inputs"]
    assert setup["clock"]
    assert setup["calendar"]["owner"]
    assert "model" in setup["options"]
    assert lint_file(path).exit_code == 0
    data = yaml.safe_load(path.read_text())
    for interaction in data["interactions"]:
        assert set(interaction["request"]["headers"]) <= set(KEPT_REQUEST_HEADERS)
        assert set(interaction["response"]["headers"]) <= set(KEPT_RESPONSE_HEADERS)
    lowered = path.read_text().lower()
    for secret in ("authorization", "x-api-key", "sk-ant-", "cookie", "organization", "x-stainless", "user-agent"):
        assert secret not in lowered


@pytest.mark.parametrize("name", NAMES)
def test_authoring_each_lesson_again_gives_the_same_file(name: str, tmp_path: Path) -> None:
    fresh = tmp_path / f"{name}.yaml"
    author(name, fresh)
    assert fresh.read_text() == (cassettes_dir() / f"{name}.yaml").read_text(), (
        f"{name}.yaml is stale: run `python -m scheduler_agent.lessons.authoring {name}` from the repository root"
    )


def test_changing_one_word_of_the_system_prompt_breaks_every_replay(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    original = prompt_loader.read_prompt

    def edited(name: str) -> str:
        text = original(name)
        return text.replace("Look before you book", "Look before you schedule") if name == "system.md" else text

    monkeypatch.setattr(prompt_loader, "read_prompt", edited)
    for path in CASSETTES:
        with pytest.raises(CassetteError, match=r"Request 1 of \d+ in .* differs from the recording at system: "):
            replay(path, report=lambda event: None)


def tool_results(messages: list[JSON]) -> list[JSON]:
    return [b for m in messages if m["role"] == "user" for b in m["content"] if b.get("type") == "tool_result"]


def events_at(db_path: Path, start_utc: str) -> int:
    query = "SELECT count(*) FROM events WHERE start_utc = ?"
    return int(sqlite3.connect(db_path).execute(query, (start_utc,)).fetchone()[0])


def test_wrong_day_the_conflict_names_the_clash_and_the_windows_and_monday_is_booked(tmp_path: Path) -> None:
    result, _ = run(cassettes_dir() / "wrong_day.yaml", tmp_path)
    conflict = tool_results(result.messages)[1]
    assert conflict["is_error"]
    assert "Tue 2026-09-01 14:00-14:30 (Europe/London) is not free" in conflict["content"]
    assert "'Customer visit: Northwind'" in conflict["content"]
    assert "Mon 2026-08-31 14:00-15:00" in conflict["content"]
    assert events_at(tmp_path / "calendar.db", "2026-08-31T13:00:00Z") == 1
    assert events_at(tmp_path / "calendar.db", "2026-09-01T13:00:00Z") == 0


def test_parallel_calls_both_answered_in_one_user_turn(tmp_path: Path) -> None:
    result, _ = run(cassettes_dir() / "parallel_calls.yaml", tmp_path)
    answers = result.messages[2]["content"]
    assert [a["tool_use_id"] for a in answers] == ["toolu_scripted_pc_01", "toolu_scripted_pc_02"]
    assert "is_error" not in answers[0]
    assert answers[1]["is_error"] is True
    assert "No one called 'sam'" in answers[1]["content"]
    assert "priya (Priya Raman)" in answers[1]["content"]


def test_iteration_bound_stops_valid_and_resume_continues_it(tmp_path: Path) -> None:
    result, _ = run(cassettes_dir() / "iteration_bound.yaml", tmp_path)
    assert result.exit_code == 3
    assert len(result.messages) == 7
    assert conversation_state(result.messages) == "waiting"  # ends with results: the next request is valid
    with ScriptedServer([Reply([text("The week of 2026-08-31 has Monday 14:00-15:00.")])]) as server:
        send = ModelAPI(make_client(api_key="sk-ant-test-dummy", base_url=server.url, max_retries=0)).send
        session = Session.stored(db.connect(tmp_path / "calendar.db"), 1, send, Settings("m", 3), lambda e: None, None)
        outcome = session.resume()
    assert outcome.stop.exit_code == 0
    assert server.received[0]["messages"] == result.messages


def test_overloaded_retries_then_completes_and_every_attempt_was_recorded(tmp_path: Path) -> None:
    path = cassettes_dir() / "overloaded.yaml"
    result, turns = run(path, tmp_path)
    assert result.exit_code == 0
    assert len(turns[0]) == 3  # three requests of the loop ...
    statuses = [i["response"]["status"]["code"] for i in yaml.safe_load(path.read_text())["interactions"]]
    assert statuses == [529, 529, 200, 200, 200]  # ... five HTTP attempts


def test_overloaded_exhausted_stops_with_exit_5_the_list_intact_and_counted(tmp_path: Path) -> None:
    result, _ = run(cassettes_dir() / "overloaded_exhausted.yaml", tmp_path)
    assert result.exit_code == 5
    assert result.error is not None
    assert "529" in str(result.error)
    record, stored = conversations.load(db.connect(tmp_path / "calendar.db"), 1)
    assert stored == result.messages
    assert conversation_state(stored) == "waiting"
    assert record.counters["retries_exhausted"] == 1


@pytest.mark.parametrize(
    ("name", "booked", "rule_in_every_request"), [("forgotten_rule", "08:00", False), ("kept_rule", "13:00", True)]
)
def test_the_first_turn_decides_whether_the_rule_is_kept(
    name: str, booked: str, rule_in_every_request: bool, tmp_path: Path
) -> None:
    result, turns = run(cassettes_dir() / f"{name}.yaml", tmp_path)
    has_rule = [any("before 10am" in json.dumps(m) for m in request["messages"]) for request in turns[1]]
    if rule_in_every_request:
        assert all(has_rule)
    else:
        assert not has_rule[0]  # the dump shows it: the rule was not in the array the model saw
    assert events_at(tmp_path / "calendar.db", f"2026-08-31T{booked}:00Z") == 1
    assert len(result.messages) == 8  # the stored list is whole: trimming is a view at send time


runner = CliRunner()


def test_demo_lists_the_lessons_and_teaches_each() -> None:
    listed = runner.invoke(app, ["demo", "--list"])
    assert listed.exit_code == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()] == [lesson.name for lesson in lessons()]
    assert listed.stdout.splitlines()[0].startswith("no_mornings")
    assert "scripted" in listed.stdout
    shown = runner.invoke(app, ["demo", "wrong_day"])
    assert shown.exit_code == 0
    assert "What this shows: The model books 2026-09-01T14:00" in shown.stdout
    assert "usage:" in shown.stderr
    assert "(estimates: the reply was scripted)" in shown.stderr
    unknown = runner.invoke(app, ["demo", "nope"])
    assert unknown.exit_code == 1
    assert "No lesson 'nope'. The lessons are: no_mornings" in unknown.stderr


def test_demo_exits_as_the_lesson_did() -> None:
    assert runner.invoke(app, ["demo", "iteration_bound"]).exit_code == 3
    exhausted = runner.invoke(app, ["demo", "overloaded_exhausted"])
    assert exhausted.exit_code == 5
    assert exhausted.stderr.strip().splitlines()[-1].startswith("Error: The API is unavailable")
