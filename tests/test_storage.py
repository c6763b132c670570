"""Stored conversations through the CLI: ids, continuing, --no-store, show/--json, delete, stats, lint."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.events import Event, GrammarWarning, ReplyReceived, RoundAnswered
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.cli import app
from scheduler_agent.grammar.check import GrammarError
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
FIND = tool_use("toolu_s1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def stored(path: Path, cid: int = 1) -> list[dict]:  # type: ignore[type-arg]
    return conversations.load(db.connect(path), cid)[1]


def test_ask_stores_the_list_as_sent_and_prints_its_id(demo_db: Path, api: Serve) -> None:
    server = api([Reply([FIND], "tool_use"), Reply([text("Monday 14:00 is free.")])])
    result = invoke("ask", "When is Priya free?", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0
    assert "conversation 1" in result.stderr
    assert stored(demo_db) == [
        *server.received[-1]["messages"],
        {"role": "assistant", "content": [text("Monday 14:00 is free.")]},
    ]
    record, _ = conversations.load(db.connect(demo_db), 1)
    assert record.context.system == server.received[0]["system"]  # what else the API saw, kept with the list
    assert record.context.tools == server.received[0]["tools"]
    assert record.clock_pin is not None


def test_continue_sends_the_stored_list_with_the_new_turn(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Hello.")]), Reply([text("Again.")]), Reply([text("Third.")])])
    assert invoke("ask", "hi", "--db", str(demo_db), *TODAY).exit_code == 0
    assert invoke("ask", "and again", "-c", "--db", str(demo_db)).exit_code == 0
    second = server.received[1]["messages"]
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[0]["content"][0]["text"] == "hi"
    assert second[2]["content"][0]["text"] == "and again"
    assert "Today is Thursday 2026-08-27" in server.received[1]["system"]  # the stored clock pin holds
    assert invoke("ask", "third", "--cid", "1", "--db", str(demo_db)).exit_code == 0
    assert len(server.received[2]["messages"]) == 5
    assert len(stored(demo_db)) == 6


def test_no_store_keeps_nothing(demo_db: Path, api: Serve) -> None:
    api([Reply([text("ok")])])
    result = invoke("ask", "hi", "--no-store", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0
    assert "conversation" not in result.stderr
    assert conversations.latest_id(db.connect(demo_db)) is None
    clash = invoke("ask", "hi", "--no-store", "-c", "--db", str(demo_db))
    assert clash.exit_code == 2
    assert "--no-store cannot continue" in clash.stderr


def test_continue_with_nothing_stored_is_one_line(demo_db: Path) -> None:
    result = invoke("ask", "hi", "-c", "--db", str(demo_db))
    assert result.exit_code == 1
    assert "No stored conversation to continue" in result.stderr
    assert invoke("conversations", "show", "9", "--db", str(demo_db)).exit_code == 1


def test_show_json_is_the_array_exactly_and_lint_reads_it(demo_db: Path, api: Serve, tmp_path: Path) -> None:
    api([Reply([FIND], "tool_use"), Reply([text("Done.")])])
    invoke("ask", "find", "--db", str(demo_db), *TODAY)
    shown = invoke("conversations", "show", "1", "--json", "--db", str(demo_db))
    assert json.loads(shown.stdout) == stored(demo_db)
    array = tmp_path / "array.json"
    array.write_text(shown.stdout)
    assert invoke("lint", str(array)).exit_code == 0
    array.write_text(json.dumps(stored(demo_db)[:2]))  # ends with an unanswered call: interrupted
    linted = invoke("lint", str(array))
    assert linted.exit_code == 6
    assert "toolu_s1" in linted.stdout
    human = invoke("conversations", "show", "1", "--db", str(demo_db))
    assert "4 entries · complete" in human.stdout
    assert '→ find_free_slots(person="priya"' in human.stdout
    listed = invoke("conversations", "list", "--db", str(demo_db))
    assert listed.stdout.split()[0] == "1"
    assert "find" in listed.stdout
    assert invoke("conversations", "delete", "1", "--db", str(demo_db)).exit_code == 0
    assert invoke("conversations", "show", "1", "--db", str(demo_db)).exit_code == 1


def test_lint_finds_the_article_bug_in_a_file(tmp_path: Path) -> None:
    broken = [
        {"role": "user", "content": "Book it"},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "ok"}]},
        {"role": "assistant", "content": [{"type": "tool_use", "id": "toolu_9", "name": "x", "input": {}}]},
    ]
    path = tmp_path / "broken.json"
    path.write_text(json.dumps(broken))
    result = invoke("lint", str(path))
    assert result.exit_code == 1
    assert "messages[1]" in result.stdout
    assert "unexpected `tool_use_id`" in result.stdout


def test_resume_of_a_complete_conversation_says_so(demo_db: Path, api: Serve) -> None:
    api([Reply([text("ok")])])
    invoke("ask", "hi", "--db", str(demo_db), *TODAY)
    result = invoke("resume", "1", "--db", str(demo_db))
    assert result.exit_code == 1
    assert "is complete: nothing to resume" in result.stderr


def test_resume_after_the_bound_continues_the_same_turn(demo_db: Path, api: Serve) -> None:
    server = api([Reply([FIND], "tool_use"), Reply([text("Monday at 14:00.")])], by_length=True)
    first = invoke("ask", "find", "--max-iterations", "1", "--db", str(demo_db), *TODAY)
    assert first.exit_code == 3
    second = invoke("resume", "1", "--db", str(demo_db))
    assert second.exit_code == 0
    assert second.stdout.strip() == "Monday at 14:00."
    assert [len(body["messages"]) for body in server.received] == [1, 3]


def test_counters_count_retries_exhausted_and_restarts(demo_db: Path, api: Serve) -> None:
    overloaded = Reply(
        status=529, error_type="overloaded_error", error_message="Overloaded", headers={"retry-after-ms": "1"}
    )
    api([overloaded] * 3 + [Reply([text("back")])])
    assert invoke("ask", "hi", "--db", str(demo_db), *TODAY).exit_code == 5
    assert stored(demo_db) == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]  # waiting, resumable
    assert invoke("resume", "1", "--db", str(demo_db)).exit_code == 0
    shown = invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    assert "model retries exhausted 1" in shown
    assert "process restarts 1" in shown
    stats = invoke("stats", "--db", str(demo_db)).stdout
    assert "model retries exhausted:     1" in stats
    assert "process restarts (resumes):  1" in stats


def test_a_tool_past_its_deadline_is_counted_and_says_nothing_was_booked(
    demo_db: Path, api: Serve, monkeypatch: pytest.MonkeyPatch
) -> None:
    book = tool_use("toolu_slow", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    server = api([Reply([book], "tool_use"), Reply([text("It timed out.")])])
    monkeypatch.setenv("SCHEDULER_AGENT_TEST_PAUSE_AT", "between_check_and_insert")
    monkeypatch.setenv("SCHEDULER_AGENT_TEST_PAUSE", "1.2")
    result = invoke("ask", "book", "--yes", "--tool-deadline", "1", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    answer = server.received[1]["messages"][2]["content"][0]
    assert answer["is_error"]
    assert "timed out after 1 seconds" in answer["content"]
    assert "Nothing was booked" in answer["content"]
    assert "tools past their deadline 1" in invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    count = sqlite3.connect(demo_db).execute("SELECT count(*) FROM events WHERE start_utc = '2026-08-31T13:00:00Z'")
    assert count.fetchone()[0] == 0


def session_with(server: ScriptedServer, demo_db: Path, report: Callable[[Event], None], strict: bool) -> Session:
    day, at = parse_pin("2026-08-27T09:00")
    send = ModelAPI(make_client(api_key="sk-ant-test-dummy", base_url=server.url, max_retries=0)).send
    settings = Settings("claude-sonnet-5-5", 10, strict=strict)
    return Session(db.connect(demo_db), Clock.pinned_at(day, at, "Europe/London"), send, settings, report)


def test_a_list_the_api_would_reject_is_never_sent(demo_db: Path) -> None:
    def drop_a_result(event: Event) -> None:  # the `continue` in an exception handler, done to the list
        if isinstance(event, RoundAnswered):
            event.results["content"][0]["tool_use_id"] = "toolu_other"

    with ScriptedServer([Reply([FIND], "tool_use"), Reply([text("never")])]) as server:
        session = session_with(server, demo_db, drop_a_result, strict=False)
        with pytest.raises(
            GrammarError, match=r"(?s)NOT sent.*messages\[1\]: `tool_use` ids were found without.*toolu_other"
        ):
            session.ask("find")
        assert len(server.received) == 1


@pytest.mark.parametrize("strict", [True, False])
def test_a_rebuilt_assistant_turn_is_refused_when_strict_and_warned_otherwise(demo_db: Path, strict: bool) -> None:
    warnings: list[Event] = []

    def rebuild(event: Event) -> None:  # keep only a few fields of the provider's turn
        if isinstance(event, ReplyReceived) and event.iteration == 1:
            session.messages[-1] = {"role": "assistant", "content": [event.reply["content"][1]]}  # text dropped
        warnings.append(event)

    with ScriptedServer([Reply([text("Looking."), FIND], "tool_use"), Reply([text("ok")])]) as server:
        session = session_with(server, demo_db, rebuild, strict=strict)
        if strict:
            with pytest.raises(GrammarError, match="not the provider's own content"):
                session.ask("find")
            assert len(server.received) == 1
        else:
            session.ask("find")
            assert len(server.received) == 2
            assert any(isinstance(e, GrammarWarning) for e in warnings)


def test_a_shrinking_list_is_refused_by_the_journal(demo_db: Path) -> None:
    with ScriptedServer([Reply([text("hi")])]) as server:
        session = session_with(server, demo_db, lambda e: None, strict=True)
        session.store()
        session.ask("hello")
        session.messages.pop()
        with pytest.raises(AgentError, match="the list shrank"):
            session.ask("again")


def test_the_context_budget_trims_what_is_sent_never_what_is_stored(demo_db: Path, api: Serve) -> None:
    week = {"person": "priya", "week": "2026-08-31"}
    calls = [Reply([tool_use(f"toolu_b{i}", "find_free_slots", week)], "tool_use") for i in range(3)]
    server = api([*calls, Reply([text("Monday 14:00.")])])
    asked = ["ask", "Never before 10am. Find Priya.", "--db", str(demo_db), *TODAY]
    too_small = invoke(*asked, "--context-budget", "150")  # less than the system prompt and tools: refused
    smallest = too_small.stderr.split("give --context-budget ")[1].split()[0]  # the smallest that can work
    result = invoke(*asked, "--context-budget", smallest)
    assert result.exit_code == 0, result.stderr
    sent = [body["messages"] for body in server.received]
    assert [len(m) for m in sent] == [1, 3, 3, 3]  # whole old rounds left out once the list outgrew the budget
    assert all(m[0]["content"][0]["text"].startswith("Never before 10am") for m in sent)  # the rule stays
    assert sent[-1][1:] == stored(demo_db)[5:7]  # the newest round, call and result together
    assert len(stored(demo_db)) == 8  # the store holds the whole list


@pytest.mark.parametrize("stream", [True, False])
def test_resume_sends_the_body_the_first_process_would_have_sent(demo_db: Path, api: Serve, stream: bool) -> None:
    server = api([Reply([FIND], "tool_use"), Reply([text("Monday at 14:00.")])], by_length=True)
    flags = [] if stream else ["--no-stream"]
    assert invoke("ask", "find", *flags, "--max-iterations", "1", "--db", str(demo_db), *TODAY).exit_code == 3
    assert invoke("resume", "1", "--db", str(demo_db)).exit_code == 0
    first, resumed = server.received
    assert resumed.get("stream", False) is stream
    assert first.get("stream", False) is stream
    assert {k: v for k, v in resumed.items() if k != "messages"} == {k: v for k, v in first.items() if k != "messages"}


def test_a_list_read_from_the_store_is_kept_out_of_the_collectors_passes(demo_db: Path) -> None:
    """`load` freezes what it read: the collector's passes in the turn that follows never walk a long list again."""
    import gc

    conn = db.connect(demo_db)
    context = conversations.Context("claude-sonnet-5-5", 1024, "s", [])
    cid = conversations.create(conn, context, started_on="2026-08-27", clock_pin=None)
    entries = [{"role": "user" if n % 2 == 0 else "assistant", "content": [text(f"entry {n}")]} for n in range(20)]
    conversations.Journal(conn, cid, []).sync(entries)
    try:
        _, messages = conversations.load(conn, cid)
        assert messages == entries
        tracked = {id(o) for o in gc.get_objects()}  # the generations' objects: not the frozen ones
        assert id(messages) not in tracked and id(messages[7]) not in tracked
        assert id(messages[7]["content"][0]) not in tracked
        assert gc.isenabled()
    finally:
        gc.unfreeze()
        conn.close()
