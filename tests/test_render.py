"""What a person sees: the trace on stderr (colour, spinner, usage), the answers on stdout (streamed or not)."""

from __future__ import annotations

import io
import time

import pytest

from scheduler_agent.agent.events import (
    Event,
    ReplyReceived,
    RequestSent,
    Stop,
    TextDelta,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
    TurnOutcome,
)
from scheduler_agent.agent.types import JSON
from scheduler_agent.cli.render import Answers, Spinner, Trace, colour_for, spinner_for

CALL = {
    "type": "tool_use",
    "id": "toolu_r1",
    "name": "find_free_slots",
    "input": {"person": "priya", "week": "2026-08-31"},
}
REQUEST = {"max_tokens": 10, "messages": [{"role": "user", "content": "hi"}], "model": "m"}
USAGE = {"input_tokens": 100, "output_tokens": 20, "cache_read_input_tokens": 50, "cache_creation_input_tokens": 5}
ASKS = {"content": [{"type": "text", "text": "Let me look."}, CALL], "stop_reason": "tool_use", "usage": USAGE}
ANSWER = "Priya is free Monday 14:00-15:00."
FINAL = {"content": [{"type": "text", "text": ANSWER}], "stop_reason": "end_turn", "usage": USAGE}
FOUND = {"type": "tool_result", "tool_use_id": "toolu_r1", "content": "- Mon 2026-08-31 14:00-15:00"}
FAILED = {"type": "tool_result", "tool_use_id": "toolu_r1", "content": "No one called 'sam'", "is_error": True}
DONE = TurnEnded(TurnOutcome(Stop.DONE, 2, text=ANSWER, stop_reason="end_turn"))


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def turn(*, streamed: bool, result: JSON = FOUND) -> list[Event]:
    """Two iterations: the model asks for a tool, then answers; text as deltas when `streamed`."""
    events: list[Event] = [RequestSent(1, REQUEST)]
    if streamed:
        events += [TextDelta(1, "Let "), TextDelta(1, "me look.")]
    events += [ReplyReceived(1, ASKS), ToolCalled(1, CALL), ToolAnswered(1, CALL, result), RequestSent(2, REQUEST)]
    if streamed:
        events += [TextDelta(2, "Priya is free "), TextDelta(2, "Monday 14:00-15:00.")]
    return [*events, ReplyReceived(2, FINAL), DONE]


def play(events: list[Event], *listeners: Trace | Answers) -> None:
    for event in events:
        for listener in listeners:
            listener(event)


@pytest.fixture
def terminal_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)


def test_a_tool_call_is_one_line_with_its_result_under_it() -> None:
    out = io.StringIO()
    play(turn(streamed=False), Trace(out))
    lines = out.getvalue().splitlines()
    at = lines.index('  → find_free_slots(person="priya", week="2026-08-31")')
    assert lines[at + 1] == "  ← - Mon 2026-08-31 14:00-15:00"
    assert "  model: Let me look." in lines


def test_no_colour_and_no_spinner_when_not_a_terminal(terminal_env: None) -> None:
    out = io.StringIO()
    trace = Trace(out, usage=True)
    assert trace.spinner is None
    assert not trace.style.enabled
    play(turn(streamed=False, result=FAILED), trace)
    assert "\x1b[" not in out.getvalue()
    assert "⠋" not in out.getvalue()
    assert "  ✗ No one called 'sam'" in out.getvalue().splitlines()


def test_no_colour_and_no_spinner_on_a_terminal_when_no_color_is_set(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    out = FakeTerminal()
    trace = Trace(out)
    assert trace.spinner is None
    assert not colour_for(out)
    assert not spinner_for(out)
    play(turn(streamed=False, result=FAILED), trace)
    assert "\x1b[" not in out.getvalue()


def test_force_color_colours_a_pipe_but_never_spins_there(terminal_env: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert colour_for(io.StringIO())
    assert not spinner_for(io.StringIO())
    monkeypatch.setenv("FORCE_COLOR", "0")
    assert not colour_for(io.StringIO())


def test_on_a_terminal_calls_are_styled_and_errors_stand_out(terminal_env: None) -> None:
    out = FakeTerminal()
    trace = Trace(out, spinner=False)
    play(turn(streamed=False, result=FAILED), trace)
    shown = out.getvalue()
    assert '\x1b[36m→\x1b[0m \x1b[1mfind_free_slots(person="priya", week="2026-08-31")\x1b[0m' in shown
    assert "\x1b[31;1m  ✗ No one called 'sam'\x1b[0m" in shown


def test_the_spinner_turns_on_stderr_until_the_first_delta_and_is_erased(terminal_env: None) -> None:
    out = FakeTerminal()
    trace = Trace(out)
    assert trace.spinner is not None
    trace(RequestSent(1, REQUEST))
    time.sleep(0.3)
    assert trace.spinner.running
    trace(TextDelta(1, "Priya"))
    assert not trace.spinner.running
    shown = out.getvalue()
    assert "\r⠋ thinking" in shown
    assert shown.endswith("\r\x1b[K")  # erased: the text starts on a clean line
    written = len(shown)
    time.sleep(0.2)
    assert len(out.getvalue()) == written  # nothing turns any more


def test_the_spinner_stops_at_the_reply_and_at_close(terminal_env: None) -> None:
    out = FakeTerminal()
    trace = Trace(out)
    trace(RequestSent(1, REQUEST))
    trace(ReplyReceived(1, FINAL))
    assert trace.spinner is not None
    assert not trace.spinner.running
    trace(RequestSent(2, REQUEST))
    trace.close()  # a turn that ended by an exception (Ctrl-C, the API unavailable)
    assert not trace.spinner.running


def test_a_fast_reply_shows_no_spinner_at_all() -> None:
    out = FakeTerminal()
    spinner = Spinner(out, interval=0.5)
    spinner.start()
    spinner.stop()
    assert out.getvalue() == ""


def test_usage_lines_only_when_asked_with_a_total_per_turn() -> None:
    quiet, loud = io.StringIO(), io.StringIO()
    play(turn(streamed=False), Trace(quiet))
    play(turn(streamed=False), Trace(loud, estimated=True, usage=True))
    assert "usage" not in quiet.getvalue()
    assert "turn total" not in quiet.getvalue()
    lines = loud.getvalue().splitlines()
    each = (
        "  usage: 100 input tokens (+50 read from cache, +5 written to it), 20 output "
        "(estimates: the reply was scripted) · no price"  # the replies name no model: no price, never $0
    )
    assert lines.count(each) == 2
    assert lines[-1] == (
        "turn total (2 iterations): 200 input tokens (+100 read from cache, +10 written to it), 40 output "
        "(estimates: the reply was scripted) · no price"
    )


def test_answers_prints_a_whole_turn_once_when_not_streamed() -> None:
    out = io.StringIO()
    play(turn(streamed=False), Answers(out))
    assert out.getvalue() == ANSWER + "\n"


def test_answers_prints_streamed_text_as_it_arrives_and_not_again_at_the_end() -> None:
    out = io.StringIO()
    answers = Answers(out)
    events = turn(streamed=True)
    seen = []
    for event in events:
        answers(event)
        seen.append(out.getvalue())
    assert seen[1] == "Let "  # the first piece is out before the rest arrives
    assert out.getvalue() == "Let me look.\n" + ANSWER + "\n"  # each reply's text once, on its own line


def test_a_streamed_reply_is_not_repeated_in_the_trace() -> None:
    out = io.StringIO()
    play(turn(streamed=True), Trace(out))
    assert "model:" not in out.getvalue()


def test_on_one_screen_the_trace_waits_for_the_streamed_line_to_end(terminal_env: None) -> None:
    screen = io.StringIO()  # stdout and stderr on the same terminal
    play(turn(streamed=True), Trace(screen, usage=True, spinner=False), Answers(screen))
    lines = screen.getvalue().splitlines()
    assert lines[1] == "Let me look."
    assert lines[2].startswith("  usage: ")
    assert lines[3].startswith("  → ")
    assert lines[-3] == ANSWER
    assert lines[-1].startswith("turn total")


def test_answers_ends_an_interrupted_line_on_close() -> None:
    out = io.StringIO()
    answers = Answers(out)
    play([RequestSent(1, REQUEST), TextDelta(1, "Priya is")], answers)
    answers.close()
    assert out.getvalue() == "Priya is\n"


def test_the_trace_shows_the_size_the_session_kept_and_encodes_only_when_none_is_given() -> None:
    from scheduler_agent.agent.request import encode

    out = io.StringIO()
    trace = Trace(out, colour=False, spinner=False)
    trace(RequestSent(1, REQUEST, size=123_456))  # a Session's running figure: the trace does not encode again
    trace(RequestSent(2, REQUEST))  # a sender that keeps no size: the body is encoded
    lines = out.getvalue().splitlines()
    assert lines[0] == "[iteration 1] sending 1 entry (123,456 bytes)"
    assert lines[1] == f"[iteration 2] sending 1 entry ({len(encode(REQUEST)):,} bytes)"
