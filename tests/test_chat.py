"""The chat as a person drives it: scripted standard input, slash commands, Ctrl-C that keeps the list valid."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.agent.types import JSON
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.clock import Clock, parse_pin
from scheduler_agent.cli import app
from scheduler_agent.cli.chat import Chat, UsageLog
from scheduler_agent.grammar.check import check
from scheduler_agent.session.approval import Decision
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]


def chat(demo_db: Path, lines: str, *extra: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, ["chat", "--db", str(demo_db), *TODAY, *extra], input=lines)


def test_slash_commands(demo_db: Path, api: Serve) -> None:
    find = tool_use("toolu_c1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})
    server = api([Reply([find], "tool_use"), Reply([text("Monday 14:00 works.")]), Reply([text("Fresh start.")])])
    result = chat(demo_db, "when is priya free?\n/tokens\n/dump\n/history\n/help\n/nope\n/new\nhello\n/quit\n")
    assert result.exit_code == 0, result.stderr
    out = result.stdout
    assert "Monday 14:00 works." in out
    assert "Fresh start." in out
    # /tokens: a header, one row per iteration (entries sent, input, output, cache), then the turn's total
    assert re.search(r"^iteration entries +input +output cache read cache write  cost$", out, re.M)
    rows = re.findall(r"^ +(\d) +(\d) +([\d,]+) +(\d+) +0 +0  \$(0\.\d{4})$", out, re.M)
    assert [(r[0], r[1]) for r in rows] == [("1", "1"), ("2", "3")]
    total = re.search(r"^ +turn +([\d,]+) +(\d+) +0 +0  \$(0\.\d{4})$", out, re.M)
    assert total
    assert int(total[1].replace(",", "")) == sum(int(r[2].replace(",", "")) for r in rows)
    assert float(total[3]) > 0  # the scripted server names claude-sonnet-5-5, which genai-prices knows
    dumped = json.JSONDecoder().raw_decode(out[out.index("[\n") :])[0]
    assert dumped == [*server.received[1]["messages"], {"role": "assistant", "content": [text("Monday 14:00 works.")]}]
    assert '[1] assistant → find_free_slots(person="priya", week="2026-08-31")' in out  # /history
    assert "/dump" in out
    assert "/tokens" in out  # /help
    assert "Unknown command /nope; /help lists them." in result.stderr
    assert "Started a new conversation." in result.stderr
    assert len(server.received[2]["messages"]) == 1  # /new: the next request starts a new list
    assert "conversation 1" in result.stderr
    assert "conversation 2" in result.stderr


def test_end_of_input_leaves_cleanly(demo_db: Path, api: Serve) -> None:
    api([Reply([text("Hi.")])])
    result = chat(demo_db, "hello\n")
    assert result.exit_code == 0
    assert result.stdout.strip() == "Hi."


def session_against(server: ScriptedServer, demo_db: Path, decide=None) -> Session:  # type: ignore[no-untyped-def]
    day, at = parse_pin("2026-08-27T09:00")
    send = ModelAPI(make_client(api_key="sk-ant-test-dummy", base_url=server.url, max_retries=0)).send
    clock = Clock.pinned_at(day, at, "Europe/London")
    return Session(db.connect(demo_db), clock, send, Settings("claude-sonnet-5-5", 10), lambda e: None, decide=decide)


def drive(session: Session, lines: list[str | BaseException]) -> tuple[int, str]:
    """Run a chat whose input is `lines`; an exception in the list is raised where a line would be read."""
    feed = iter(lines)
    err = io.StringIO()

    def read_line(prompt: str) -> str | None:
        item = next(feed, None)
        if isinstance(item, BaseException):
            raise item
        return item

    code = Chat(session, lambda: session, read_line, io.StringIO(), err, UsageLog()).run()
    return code, err.getvalue()


def test_ctrl_c_while_waiting_cancels_the_request_and_keeps_the_list(demo_db: Path) -> None:
    with ScriptedServer([Reply([text("Both parts, yes.")])]) as server:
        session = session_against(server, demo_db)
        real_send, calls = session.send, []

        def send(request: JSON) -> JSON:  # the person presses Ctrl-C while the first request is in flight
            calls.append(request)
            if len(calls) == 1:
                raise KeyboardInterrupt
            return real_send(request)

        session.send = send
        code, err = drive(session, ["book priya", "on monday", None])
    assert code == 0
    assert "Cancelled. The list is intact" in err
    second = server.received[0]["messages"]
    assert second == [
        {"role": "user", "content": [{"type": "text", "text": "book priya"}, {"type": "text", "text": "on monday"}]}
    ]
    assert check(session.messages, mode="conversation") == []


def test_ctrl_c_during_a_tool_answers_the_round_and_says_nothing_was_booked(demo_db: Path) -> None:
    book = tool_use("toolu_c2", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    find = tool_use("toolu_c3", "find_free_slots", {"person": "priya", "week": "2026-08-31"})

    def ctrl_c_at_the_approval_prompt(call: JSON, summary: str) -> Decision:
        raise KeyboardInterrupt

    with ScriptedServer([Reply([book, find], "tool_use"), Reply([text("Stopped, as you asked.")])]) as server:
        session = session_against(server, demo_db, ctrl_c_at_the_approval_prompt)
        code, err = drive(session, ["book priya monday 2pm", "go on", None])
    assert code == 0
    assert "Interrupted: every call of the round was answered" in err
    results = session.messages[2]["content"]
    assert results[0]["is_error"]
    assert "interrupted" in results[0]["content"]
    assert "Nothing was booked" in results[0]["content"]
    assert results[1]["is_error"]
    assert "was not run" in results[1]["content"]
    assert check(session.messages, mode="conversation") == []
    assert server.received[-1]["messages"][2]["content"][-1]["text"] == "go on"


def test_ctrl_c_at_the_prompt_clears_the_line_and_a_second_leaves(demo_db: Path) -> None:
    with ScriptedServer([]) as server:
        code, err = drive(session_against(server, demo_db), [KeyboardInterrupt(), KeyboardInterrupt()])
    assert code == 130
    assert "the line was cleared" in err
    assert server.received == []


def test_one_ctrl_c_at_the_prompt_does_not_leave(demo_db: Path) -> None:
    with ScriptedServer([Reply([text("Hello.")])]) as server:
        session = session_against(server, demo_db)
        code, _ = drive(session, [KeyboardInterrupt(), "hello", KeyboardInterrupt(), None])
    assert code == 0
    assert len(server.received) == 1
    assert server.received[0]["messages"][0]["content"][0]["text"] == "hello"


def test_multi_sends_the_lines_as_one_message(demo_db: Path) -> None:
    with ScriptedServer([Reply([text("Noted.")])]) as server:
        code, _ = drive(
            session_against(server, demo_db), ["/multi", "Book Priya.", "", "Never before 10am.", "/end", None]
        )
    assert code == 0
    assert server.received[0]["messages"][0]["content"][0]["text"] == "Book Priya.\n\nNever before 10am."


def test_edit_sends_what_the_editor_wrote(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "Find 45 minutes with Omar\\n" > "$1"\n')
    editor.chmod(0o700)
    monkeypatch.setenv("EDITOR", str(editor))
    with ScriptedServer([Reply([text("Tuesday.")])]) as server:
        code, err = drive(session_against(server, demo_db), ["/edit", None])
    assert code == 0
    assert "you> Find 45 minutes with Omar" in err
    assert server.received[0]["messages"][0]["content"][0]["text"] == "Find 45 minutes with Omar"


def test_edit_with_a_failing_editor_sends_nothing_and_says_so(
    demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    editor = tmp_path / "editor.sh"
    editor.write_text('#!/bin/sh\nprintf "never sent\\n" > "$1"\nexit 3\n')
    editor.chmod(0o700)
    monkeypatch.setenv("VISUAL", str(editor))  # click.edit reads $VISUAL before $EDITOR
    monkeypatch.setenv("EDITOR", "false")
    with ScriptedServer([]) as server:
        code, err = drive(session_against(server, demo_db), ["/edit", None])
    assert code == 0
    assert f"Nothing sent: {editor}: Editing failed" in err
    assert server.received == []


def test_edit_with_nothing_saved_sends_nothing(demo_db: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", "true")  # exits at once, the file untouched
    with ScriptedServer([]) as server:
        code, err = drive(session_against(server, demo_db), ["/edit", None])
    assert code == 0
    assert "Nothing sent: the message was empty." in err
    assert server.received == []
