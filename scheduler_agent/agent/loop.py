"""The agent: a while-loop around a stateless model. The message list is the whole of its state.

`run_turn` below is the five-line loop of this package's docstring (`agent/__init__.py`), plus a
bound, over two steps it is given: a model step (ask the model once, append its reply) and a tool
round (answer every call of that reply in one user turn). `agent/steps.py` has the two as they run
in one process with nothing around them; a session gives its own, which store what they append
(`session/steps.py`). Everything else here is a helper they call.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Protocol

from scheduler_agent.agent.events import (
    Report,
    Stop,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
    TurnOutcome,
)
from scheduler_agent.agent.replies import Fit, Verdict
from scheduler_agent.agent.toolbox import CallStatus, Interrupted, Toolbox, run_call
from scheduler_agent.agent.types import JSON

Send = Callable[[JSON], JSON]  # a request body in, the API's response body out
Build = Callable[[list[JSON]], JSON]  # the message list in, the whole request body out


class ModelStep(Protocol):
    """Ask the model once: build the request from `messages` (a session checks the list's grammar first), send
    it, judge the reply, and append the assistant turn verbatim (a reply that cannot join the list is kept
    beside it, never in it).

    Returns None when the reply asked for tools (the turn goes on: the tool round answers them), else how
    the turn ended. `iteration` counts the model calls of this user turn, from 1. A durable engine runs a step
    again, on the list as it was, when a crash kept it from hearing that the step had run: a step given to one
    must be safe to run twice, and its docstring says what makes it so."""

    def __call__(self, messages: list[JSON], iteration: int) -> TurnOutcome | None: ...


class ToolRound(Protocol):
    """Answer every call of the assistant turn that ends `messages`: one `tool_result` per call, in order, all
    in ONE user turn appended to `messages`. Ctrl-C in a tool: the round is answered (and stored), then
    KeyboardInterrupt goes on. Safe to run twice, as a model step is; its docstring says what makes it so."""

    def __call__(self, messages: list[JSON], iteration: int) -> None: ...


def run_turn(
    messages: list[JSON],
    *,
    model_step: ModelStep,
    tool_round: ToolRound,
    max_iterations: int,
    report: Report,
) -> TurnOutcome:
    """Run the model on `messages` (which ends with a user turn) until it stops asking for tools.

    `messages` is changed in place, by the two steps only, and is valid to send again whenever this returns
    or raises. The steps: `agent/steps.py` (in one process), `session/steps.py` (a stored session).
    """
    iteration = iterations_in_turn(messages)  # a resumed turn goes on counting; each pass appends one reply
    while True:
        iteration += 1
        if iteration > max_iterations:
            return ended(report, bound_reached(messages, max_iterations))
        stopped = model_step(messages, iteration)  # build, check, send, judge; the reply appended verbatim
        if stopped is not None:  # the model answered or stopped, or its reply was kept beside the list
            return ended(report, stopped)
        tool_round(messages, iteration)  # ONE user turn: one tool_result per call, before the next request


def answer_all(toolbox: Toolbox, calls: list[JSON], iteration: int, report: Report) -> tuple[list[JSON], bool]:
    """One `tool_result` per call, in order, and whether Ctrl-C stopped the round.

    An interrupted call is answered with what it changed; the calls after it with "not run".
    """
    results: list[JSON] = []
    for call in calls:
        report(ToolCalled(iteration, call))
        try:
            outcome = run_call(toolbox, call)
        except Interrupted as stop:
            outcome = stop.outcome
        report(ToolAnswered(iteration, call, outcome.block, outcome.status))
        results.append(outcome.block)
        if outcome.status is CallStatus.INTERRUPTED:
            rest = calls[len(results) :]
            return results + [not_run(call, "the user interrupted the round (Ctrl-C)") for call in rest], True
    return results, False


def tool_uses(reply: JSON) -> list[JSON]:
    return [block for block in reply["content"] if block.get("type") == "tool_use"]


def is_user_input(message: JSON) -> bool:
    """A user turn that holds something the person said (not only tool results)."""
    if message["role"] != "user":
        return False
    content = message["content"]
    return isinstance(content, str) or any(block.get("type") != "tool_result" for block in content)


def iterations_in_turn(messages: list[JSON]) -> int:
    """Model calls made since the person last spoke, counted from the list itself."""
    count = 0
    for message in reversed(messages):
        if is_user_input(message):
            break
        count += message["role"] == "assistant"
    return count


def add_user_text(messages: list[JSON], text: str) -> None:
    """Start a user turn; after a stop that left tool results last, the text joins that same turn."""
    block = {"type": "text", "text": text}
    if messages and messages[-1]["role"] == "user":
        content = messages[-1]["content"]
        earlier = [{"type": "text", "text": content}] if isinstance(content, str) else content
        messages[-1]["content"] = [*earlier, block]
    else:
        messages.append({"role": "user", "content": [block]})


def text_of(reply: JSON) -> str:
    return "".join(block.get("text", "") for block in reply["content"] if block.get("type") == "text")


def describe_call(call: JSON) -> str:
    """`create_event(with="priya", minutes=30)`: a call as a person reads it, its values as JSON."""
    arguments = call.get("input")
    items = arguments.items() if isinstance(arguments, dict) else []  # a malformed call is still shown
    args = ", ".join(f"{key}={_as_json(value)}" for key, value in items)
    return f"{call.get('name')}({args})"


_as_json = json.JSONEncoder(ensure_ascii=False).encode  # json.dumps makes an encoder at each call


def last_calls(messages: list[JSON]) -> list[JSON]:
    assistant = next((m for m in reversed(messages) if m["role"] == "assistant"), None)
    return tool_uses(assistant) if assistant else []


def bound_reached(messages: list[JSON], max_iterations: int) -> TurnOutcome:
    calls = last_calls(messages)
    asked = "; ".join(describe_call(call) for call in calls) or "nothing"
    statement = (
        f"Stopped after {max_iterations} iterations (the bound) with every call answered; the model last asked "
        f"for {asked}. Send a new message to go on, or raise --max-iterations."
    )
    return TurnOutcome(Stop.ITERATION_BOUND, max_iterations, statement=statement, last_calls=calls)


_STOP_STATEMENTS: dict[str, str] = {
    "max_tokens": "The reply was cut off at the max_tokens limit before the model finished.",
    "refusal": "The model declined to continue this request.",
    "model_context_window_exceeded": "The conversation no longer fits the model's context window.",
    "pause_turn": "The model paused its turn; send a new message to let it continue.",
}


def model_stopped(reply: JSON, iteration: int) -> TurnOutcome:
    reason = reply.get("stop_reason")
    if reason in ("end_turn", "stop_sequence"):
        return TurnOutcome(Stop.DONE, iteration, text=text_of(reply), stop_reason=reason)
    statement = _STOP_STATEMENTS.get(str(reason), f"The model stopped with stop_reason {reason!r}.")
    details = reply.get("stop_details")
    if details:
        statement += f" ({details})"
    return TurnOutcome(Stop.MODEL_STOPPED, iteration, text_of(reply), statement, reason, tool_uses(reply))


def set_aside(reply: JSON, verdict: Verdict, iteration: int) -> TurnOutcome:
    """The outcome of a reply that was not appended; the statement says it was the model's."""
    reason = reply.get("stop_reason") if isinstance(reply, dict) else None
    kept = "Its reply is kept beside the conversation (`conversations show`), not in the list"
    if verdict.fit is Fit.EMPTY:
        head = "The model answered with nothing"
        if reason not in (None, "end_turn", "stop_sequence"):
            stopped = _STOP_STATEMENTS.get(str(reason), f"The model stopped ({reason}).")
            head = f"{stopped[:-1]}, and answered with nothing"
        statement = (
            f"{head} (stop_reason {reason!r}). {kept}, which ends with your turn: send a new message "
            "(it joins your last one) or resume to ask again."
        )
        return TurnOutcome(Stop.MODEL_STOPPED, iteration, statement=statement, stop_reason=reason)
    statement = (
        f"The model's reply could not be used: {'; '.join(verdict.problems)} (the API would refuse it back). "
        f"{kept}, which is unchanged: send a new message or resume to ask again."
    )
    return TurnOutcome(Stop.UNUSABLE_REPLY, iteration, statement=statement, stop_reason=reason)


def not_run(call: JSON, why: str) -> JSON:
    text = f"{call['name']} was not run: {why}. Nothing was changed."
    return {"type": "tool_result", "tool_use_id": call["id"], "content": text, "is_error": True}


def ended(report: Report, outcome: TurnOutcome) -> TurnOutcome:
    report(TurnEnded(outcome))
    return outcome
