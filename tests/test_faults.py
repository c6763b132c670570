"""The fault suite: every malformed reply, stalled response and hostile input leaves a conversation that can go on.

Each case runs the CLI against the loopback scripted server and asserts: no traceback, one clear line and
its exit code, the stored list still lints, and the next `ask` continues the same conversation.
"""

from __future__ import annotations

import json
import sqlite3
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from scheduler_agent.cli import app
from scheduler_agent.grammar.check import check
from scheduler_agent.storage import conversations
from scheduler_agent.storage.db import connect
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
FIND = {"person": "priya", "week": "2026-08-31"}


def invoke(*args: str) -> Result:
    return runner.invoke(app, list(args))


def ask(db: Path, words: str, *more: str) -> Result:
    return invoke("ask", words, "--yes", "--db", str(db), "--today", "2026-08-27", *more)


def assert_clean(result: Result, code: int, says: str) -> None:
    """The exit code, the line that says what happened, and no traceback or "this is a bug"."""
    shown = result.stdout + result.stderr
    assert result.exit_code == code, (result.exit_code, shown, result.exception)
    assert says in shown, shown
    assert "Traceback" not in shown
    assert "internal error" not in shown
    assert "bug in scheduler-agent" not in shown


def stored(db: Path, cid: int = 1) -> list[Any]:
    return conversations.load(connect(db), cid)[1]


def assert_lints(db: Path, cid: int = 1) -> None:
    messages = stored(db, cid)
    assert check(messages, mode="conversation") == [], messages


def assert_goes_on(db: Path, serve: Serve, words: str = "go on") -> dict[str, Any]:
    """The next ask continues conversation 1 and is answered; returns the request it sent."""
    server = serve([Reply([text("Done.")])])
    result = ask(db, words, "--cid", "1")
    assert_clean(result, 0, "Done.")
    assert_lints(db)
    request: dict[str, Any] = server.received[-1]
    return request


EMPTY = {
    "content-empty": Reply([]),
    "refusal-no-text": Reply([], "refusal"),
    "text-empty": Reply([text("")]),
    "text-whitespace": Reply([text("  \n ")]),
    "text-null": Reply([{"type": "text", "text": None}]),
}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("reply", EMPTY.values(), ids=EMPTY.keys())
def test_an_empty_reply_is_kept_beside_the_list_and_the_next_text_joins_the_user_turn(
    demo_db: Path, api: Serve, reply: Reply, stream: bool
) -> None:
    api([reply])
    result = ask(demo_db, "Book Priya", *([] if stream else ["--no-stream"]))
    assert_clean(result, 4, "answered with nothing")
    messages = stored(demo_db)
    assert [m["role"] for m in messages] == ["user"]  # not appended: the list ends with the user turn
    kept = [r for r in conversations.replies(connect(demo_db), 1) if not r.appended]
    assert len(kept) == 1
    assert kept[0].body is not None
    assert kept[0].body["stop_reason"] == reply.stop_reason
    assert kept[0].usage["output_tokens"] >= 1  # counted, though not in the list
    shown = invoke("conversations", "show", "1", "--db", str(demo_db))
    assert "answered with nothing" in shown.stdout
    request = assert_goes_on(demo_db, api, "Monday please")
    assert request["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "Book Priya"}, {"type": "text", "text": "Monday please"}]}
    ]


UNUSABLE = {
    "name-empty": ([tool_use("toolu_1", "", FIND)], "no tool name"),
    "name-missing": ([{"type": "tool_use", "id": "toolu_1", "input": FIND}], "no tool name"),
    "id-missing": ([{"type": "tool_use", "name": "find_free_slots", "input": FIND}], "has no id"),
    "input-missing": ([{"type": "tool_use", "id": "toolu_1", "name": "find_free_slots"}], "has no input"),
    "input-string": ([tool_use("toolu_1", "find_free_slots", "priya")], "input that is a string"),  # type: ignore[arg-type]
    "input-list": ([tool_use("toolu_1", "find_free_slots", [1, 2])], "input that is a list"),  # type: ignore[arg-type]
    "ids-twice": (
        [tool_use("toolu_1", "find_free_slots", FIND), tool_use("toolu_1", "find_free_slots", FIND)],
        "reuses the id toolu_1",
    ),
    "blank-text-beside-a-call": ([text(""), tool_use("toolu_1", "find_free_slots", FIND)], "text block with no text"),
}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize(("content", "says"), UNUSABLE.values(), ids=UNUSABLE.keys())
def test_a_reply_the_api_would_refuse_back_ends_the_turn_with_exit_7_and_never_poisons_the_list(
    demo_db: Path, api: Serve, content: list[Any], says: str, stream: bool
) -> None:
    api([Reply(content, "tool_use")])
    result = ask(demo_db, "Find Priya a slot", *([] if stream else ["--no-stream"]))
    assert_clean(result, 7, "The model's reply could not be used")
    assert says in result.stderr
    assert [m["role"] for m in stored(demo_db)] == ["user"]
    kept = [r for r in conversations.replies(connect(demo_db), 1) if not r.appended]
    assert len(kept) == 1
    assert kept[0].body is not None
    assert kept[0].body["content"] == content
    assert "could not be used" in invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    assert_goes_on(demo_db, api)


def test_a_reply_that_reuses_an_id_from_an_earlier_turn_is_not_appended(demo_db: Path, api: Serve) -> None:
    call = tool_use("toolu_1", "find_free_slots", FIND)
    api([Reply([call], "tool_use"), Reply([tool_use("toolu_1", "find_free_slots", FIND)], "tool_use")])
    result = ask(demo_db, "Find Priya a slot")
    assert_clean(result, 7, "reuses the id toolu_1")
    assert [m["role"] for m in stored(demo_db)] == ["user", "assistant", "user"]
    assert_goes_on(demo_db, api)


def test_a_body_that_is_not_json_exits_7_and_stores_nothing_from_it(demo_db: Path, api: Serve) -> None:
    api([Reply([text("x")], raw=b'{"id": "msg_1", "content": [')])
    assert_clean(ask(demo_db, "Book Priya", "--no-stream"), 7, "is not JSON")
    assert [m["role"] for m in stored(demo_db)] == ["user"]
    assert_goes_on(demo_db, api)


@pytest.mark.parametrize("words", ["", "   ", "\n\t"])
def test_an_empty_text_is_refused_before_anything_is_stored(demo_db: Path, api: Serve, words: str) -> None:
    server = api([Reply([text("never")])])
    assert_clean(ask(demo_db, words), 1, "The text to send is empty")
    assert server.received == []
    assert sqlite3.connect(demo_db).execute("SELECT count(*) FROM conversations").fetchone()[0] == 0


STALLS = {
    "before-the-headers": Reply([text("late")], delay=20),
    "after-the-headers": Reply([text("late")], stall=20),
}


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
@pytest.mark.parametrize("reply", STALLS.values(), ids=STALLS.keys())
def test_a_stalled_response_gives_up_at_the_timeout_and_the_conversation_goes_on(
    demo_db: Path, api: Serve, reply: Reply, stream: bool
) -> None:
    api([reply])
    began = time.monotonic()
    result = ask(demo_db, "Book Priya", "--timeout", "1", *([] if stream else ["--no-stream"]))
    took = time.monotonic() - began
    assert_clean(result, 5, "no whole reply within 1 s")
    assert took < 8, took  # not the 20 s the server stalls, nor the SDK's 600 s
    assert [m["role"] for m in stored(demo_db)] == ["user"]
    assert_goes_on(demo_db, api)


def test_a_stream_that_stalls_midway_gives_up_at_the_timeout(demo_db: Path, api: Serve) -> None:
    api([Reply([text("Monday at two works.")], stall=20, stall_after=3)])
    began = time.monotonic()
    result = invoke("ask", "Book Priya", "--db", str(demo_db), "--today", "2026-08-27", "--timeout", "1")
    assert_clean(result, 5, "--timeout")
    assert time.monotonic() - began < 8
    assert_goes_on(demo_db, api)


def test_the_timeout_comes_from_the_environment_too(demo_db: Path, api: Serve, monkeypatch: pytest.MonkeyPatch) -> None:
    api([Reply([text("late")], delay=20)])
    monkeypatch.setenv("SCHEDULER_AGENT_TIMEOUT", "1")
    assert_clean(ask(demo_db, "Book Priya"), 5, "within 1 s")


def test_each_retry_is_announced_with_its_wait_and_attempt(demo_db: Path, api: Serve) -> None:
    overloaded = Reply(
        status=529, error_type="overloaded_error", error_message="Overloaded", headers={"retry-after-ms": "150"}
    )
    server = api([overloaded, overloaded, Reply([text("Booked.")])])
    result = ask(demo_db, "Book Priya")
    assert_clean(result, 0, "Booked.")
    assert "529 overloaded: retrying in 0.1 s (attempt 2 of 3)" in result.stderr
    assert "529 overloaded: retrying in 0.1 s (attempt 3 of 3)" in result.stderr
    assert len(server.received) == 3


def test_a_long_retry_after_is_not_waited_for_exit_5_with_the_time_asked(demo_db: Path, api: Serve) -> None:
    limited = Reply(
        status=429, error_type="rate_limit_error", error_message="Slow down", headers={"retry-after": "3600"}
    )
    server = api([limited, Reply([text("never")])])
    began = time.monotonic()
    result = ask(demo_db, "Book Priya")
    assert_clean(result, 5, "asked to wait 60 minutes")
    assert "try again after" in result.stderr
    assert time.monotonic() - began < 5
    assert len(server.received) == 1
    assert_lints(demo_db)


def test_a_booking_id_reused_with_another_input_is_refused_with_a_clear_result(demo_db: Path, api: Serve) -> None:
    first = tool_use("toolu_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    api([Reply([first], "tool_use"), Reply([text("Booked.")])])
    assert_clean(ask(demo_db, "Book Priya Monday 2pm"), 0, "Booked.")
    other = tool_use("toolu_1", "create_event", {"with": "priya", "start": "2026-09-01T14:00", "minutes": 30})
    server = api([Reply([other], "tool_use"), Reply([text("It was not booked.")])])
    assert_clean(ask(demo_db, "And Tuesday 2pm"), 0, "It was not booked.")  # a new conversation, the same id
    answer = server.received[1]["messages"][2]["content"][0]
    assert answer["is_error"] is True
    assert "already answered a create_event call with another input" in answer["content"]
    count = sqlite3.connect(demo_db).execute("SELECT count(*) FROM events WHERE start_utc = '2026-09-01T13:00:00Z'")
    assert count.fetchone()[0] == 0


def test_conversations_show_lists_what_was_kept_beside_the_list(demo_db: Path, api: Serve) -> None:
    api([Reply([], "refusal")])
    ask(demo_db, "Book Priya")
    shown = invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    line = next(line for line in shown.splitlines() if "answered with nothing" in line)
    assert "refusal" in line
    assert "kept beside the list" in line
    as_json = json.loads(invoke("conversations", "show", "1", "--db", str(demo_db), "--json").stdout)
    assert as_json == [{"role": "user", "content": [{"type": "text", "text": "Book Priya"}]}]  # the array, exactly


# --- dates near the ends of the calendar ---------------------------------------------------------------


@pytest.mark.parametrize("pin", ["9999-12-31T23:59", "9999-12-31", "0001-01-01T00:00"])
def test_a_pin_near_the_end_of_the_calendar_is_one_clear_line(demo_db: Path, pin: str) -> None:
    result = invoke("calendar", "show", "--db", str(demo_db), "--today", pin)
    assert_clean(result, 1, "is outside the calendar: give a date in the years 1000 to 9998")


@pytest.mark.parametrize(
    ("name", "arguments"),
    [
        ("create_event", {"with": "priya", "start": "9999-12-31T23:30", "minutes": 30}),
        ("create_event", {"with": "priya", "start": "0001-01-01T00:30", "minutes": 30}),
        ("find_free_slots", {"person": "priya", "week": "9999-12-31"}),
    ],
)
def test_a_date_near_the_end_of_the_calendar_is_a_clear_result_not_an_internal_error(
    tools: Any, name: str, arguments: dict[str, Any]
) -> None:
    from scheduler_agent.agent.toolbox import answer_call

    result = answer_call(tools, {"type": "tool_use", "id": "toolu_end", "name": name, "input": arguments})
    assert result["is_error"] is True
    assert "is outside the calendar: give a date in the years 1000 to 9998" in result["content"]
    assert "internal error" not in result["content"]


# --- a rule that expands without end ---------------------------------------------------------------------

EVERY_SECOND_ONCE_A_YEAR = (
    "FREQ=YEARLY;BYHOUR="
    + ",".join(map(str, range(24)))
    + ";BYMINUTE="
    + ",".join(map(str, range(60)))
    + ";BYSECOND="
    + ",".join(map(str, range(60)))
)


def repeating(db: Path, rule: str) -> None:
    from datetime import UTC, datetime

    from scheduler_agent.calendar.events import add_event
    from scheduler_agent.calendar.types import Recurrence

    conn = connect(db)
    first = datetime(2026, 8, 31, 8, tzinfo=UTC)
    add_event(conn, "Storm", first, first.replace(minute=30), ["you"], tz="Europe/London", recurrence=Recurrence(rule))
    conn.close()


def test_a_rule_listing_every_hour_minute_and_second_gives_a_clear_text_not_a_long_wait(
    demo_db: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from datetime import UTC, datetime

    from scheduler_agent.calendar import recurrence
    from scheduler_agent.calendar.busy import events_for
    from scheduler_agent.calendar.types import CalendarError

    with pytest.raises(CalendarError, match="repeats up to 86,400 times a day, more than the 250 a week's search"):
        repeating(demo_db, EVERY_SECOND_ONCE_A_YEAR)  # refused where it comes in now
    monkeypatch.setattr(recurrence, "MAX_PER_DAY", 86_400)  # as a version before that check stored it
    repeating(demo_db, EVERY_SECOND_ONCE_A_YEAR)
    monkeypatch.undo()
    with pytest.raises(
        CalendarError, match=r"more than (the )?\d[\d,]* occurrences .* busy time can repeat hourly at most"
    ):
        events_for(connect(demo_db), "you", datetime(2026, 8, 31, tzinfo=UTC), datetime(2026, 9, 7, tzinfo=UTC))
    result = invoke("calendar", "show", "--week", "2026-08-31", "--db", str(demo_db), "--today", "2026-08-27")
    assert_clean(result, 1, "busy time can repeat hourly at most")


def test_an_hourly_rule_over_a_week_is_still_expanded_whole(demo_db: Path) -> None:
    from datetime import UTC, datetime

    from scheduler_agent.calendar.busy import events_for

    repeating(demo_db, "FREQ=HOURLY")
    week = events_for(
        connect(demo_db), "you", datetime(2026, 8, 31, 8, tzinfo=UTC), datetime(2026, 9, 7, 8, tzinfo=UTC)
    )
    assert len([event for event in week if event.title == "Storm"]) == 7 * 24


# --- what reaches the terminal ---------------------------------------------------------------------------

HOSTILE = "Booked.\x1b[2J\x1b]0;pwned\x07 \u202eevil\u202c\x00\rX\x9b"


@pytest.mark.parametrize("stream", [True, False], ids=["streamed", "whole"])
def test_control_and_bidi_characters_are_shown_not_obeyed_and_stored_verbatim(
    demo_db: Path, api: Serve, stream: bool
) -> None:
    api([Reply([text(HOSTILE)])])
    result = ask(demo_db, "Book Priya", *([] if stream else ["--no-stream"]))
    assert result.exit_code == 0, result.stderr
    for raw in ("\x1b", "\u202e", "\u202c", "\x00", "\r", "\x07", "\x9b"):
        assert raw not in result.stdout
    assert "Booked.␛[2J␛]0;pwned␇ <U+202E>evil<U+202C>␀␍X<U+009B>" in result.stdout
    assert stored(demo_db)[1]["content"] == [text(HOSTILE)]  # the list keeps what the model sent
    shown = invoke("conversations", "show", "1", "--db", str(demo_db)).stdout
    assert "\x1b" not in shown
    assert "\u202e" not in shown
    assert "␛[2J" in shown
    as_json = json.loads(invoke("conversations", "show", "1", "--db", str(demo_db), "--json").stdout)
    assert as_json[1]["content"][0]["text"] == HOSTILE


def test_every_character_that_is_marked_is_marked_alone_or_in_text_and_plain_text_is_kept() -> None:
    from scheduler_agent.cli.terminal import _VISIBLE, visible

    for code, mark in _VISIBLE.items():  # visible() searches first and translates only what has one
        assert visible(chr(code)) == mark
        assert visible(f"Sync {chr(code)} ok") == f"Sync {mark} ok"
    plain = "Réunion 🗓️ — 会議\n\tnext line"
    assert visible(plain) is plain


def test_a_tool_result_quoting_a_hostile_title_is_shown_safely_in_the_trace(demo_db: Path, api: Serve) -> None:
    call = tool_use(
        "toolu_1",
        "create_event",
        {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30, "title": "Sync \x1b]0;title\x07 \u202egnp.exe"},
    )
    api([Reply([call], "tool_use"), Reply([text("Done.")])])
    result = ask(demo_db, "Book Priya Monday 2pm")
    assert result.exit_code == 0, result.stderr
    assert "\x1b" not in result.stderr
    assert "\u202e" not in result.stderr
    assert "<U+202E>gnp.exe" in result.stderr


def test_help_names_exit_codes_7_and_8() -> None:
    shown = " ".join(invoke("--help").stdout.split())
    assert "7 the model's reply could not be used" in shown
    assert "8 the conversation is being run elsewhere" in shown


def test_a_malformed_fault_setting_is_one_plain_line_not_a_bug() -> None:
    from helpers import run_cli

    done = run_cli(["demo"], fault="after_assistant_stored@x")
    assert done.returncode == 1
    assert done.stderr.splitlines()[-1] == (
        "Error: SCHEDULER_AGENT_FAULT entry 'after_assistant_stored@x' is malformed: give POINT or POINT@N with N >= 1"
    )
    assert "internal error" not in done.stderr
