"""What the loop needs from tools, and how a call becomes a `tool_result` block.

A tool never leaves a call unanswered. Whatever happens (bad input, a tool's own
`ToolError`, an unexpected exception, an unknown name, a passed deadline, Ctrl-C),
`run_call` builds a `tool_result` with `is_error: true` and a text the model can act on.
A call that did not finish says what it changed, read from durable state
(`Toolbox.side_effect_of`), so the model never books again on a false "failed".

The block is exactly what the API takes (`type`, `tool_use_id`, `content`, `is_error`);
how the call ended travels beside it, in `CallOutcome.status`:

    outcome = run_call(toolbox, call)      # outcome.block, outcome.status
    block = answer_call(toolbox, call)     # the block alone

A KeyboardInterrupt inside a tool is not swallowed: the result is built, then
`Interrupted` (a KeyboardInterrupt) is raised carrying it, so the caller can store the
answer and stop, and anything that only knows KeyboardInterrupt still stops.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Protocol

from scheduler_agent.agent.deadline import Deadline, DeadlineExceeded
from scheduler_agent.agent.types import JSON

TOOL_DEADLINE_SECONDS = 30.0
"""The default time one call gets (`--tool-deadline`)."""

MAX_RESULT_CHARS = 4_000
"""A result text longer than this is cut, and says so: it is re-sent with every later request."""

_CUT_NOTE_ROOM = 200  # room kept for the note, so that a cut result stays within MAX_RESULT_CHARS


ToolOutput = str | list[JSON]
"""A result as a tool gives it: its text, or the blocks of a `tool_result`'s content (an MCP server's text and
images, already within MAX_RESULT_CHARS)."""


class ToolError(Exception):
    """Raised by a tool for a failure the model should read: the message is a prompt.

    Say what went wrong, with the inputs, and what to do next.
    """


class Toolbox(Protocol):
    """The tools the model may call: their definitions as sent, a way to run one, and what one changed."""

    deadline_seconds: float  # the time one call gets

    @property
    def definitions(self) -> list[JSON]: ...

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> ToolOutput:
        """Run one call and return its result text (or content blocks: text and images, within the bounds);
        raise ToolError for an actionable failure.

        Raise DeadlineExceeded (and write nothing) when `deadline` passes before the call commits.
        """
        ...

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        """What call `tool_use_id` of tool `name` changed, read from durable state, as sentences for
        the model (e.g. "Nothing was booked."); None for a tool that only reads."""
        ...


class CallStatus(StrEnum):
    """How a call ended. Only ANSWERED is a result without `is_error`."""

    ANSWERED = "answered"
    FAILED = "failed"  # not run, a ToolError, or a bug in the tool
    TIMED_OUT = "timed_out"  # the tool raised DeadlineExceeded
    INTERRUPTED = "interrupted"  # the tool was stopped by KeyboardInterrupt


@dataclass(frozen=True)
class CallOutcome:
    """A call's `tool_result` block (API-shaped, nothing added) and how the call ended."""

    block: JSON
    status: CallStatus


class Interrupted(KeyboardInterrupt):
    """Ctrl-C reached a tool: `outcome.block` answers the call (it says what was changed).

    Raised by `run_call`/`answer_call` after building that answer. It is a KeyboardInterrupt,
    so code that does not know it still stops; the loop catches it to store the answer first.
    """

    def __init__(self, outcome: CallOutcome) -> None:
        super().__init__(outcome.block["content"])
        self.outcome = outcome

    @property
    def block(self) -> JSON:
        return self.outcome.block


_JSON_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
}


def schema_problems(schema: Mapping[str, Any], arguments: object) -> list[str]:
    """Check arguments against the subset of JSON Schema our tools use; one sentence per problem."""
    if not isinstance(arguments, dict):
        return [f"the input must be a JSON object, got {type(arguments).__name__}"]
    properties: Mapping[str, Any] = schema.get("properties", {})
    problems = [f"missing required field {field!r}" for field in schema.get("required", []) if field not in arguments]
    for field, value in arguments.items():
        spec = properties.get(field)
        if spec is None:
            if schema.get("additionalProperties", True) is False:
                problems.append(f"unknown field {field!r} (known: {', '.join(properties)})")
            continue
        expected = spec.get("type")
        allowed = _JSON_TYPES.get(expected, (object,)) if isinstance(expected, str) else (object,)
        is_bool = isinstance(value, bool)
        if not isinstance(value, allowed) or (is_bool and expected in ("integer", "number")):
            problems.append(f"field {field!r} must be {_article(expected)} {expected}, got {value!r}")
    return problems


def _article(word: object) -> str:
    return "an" if str(word)[:1] in "aeiou" else "a"


def answer_call(toolbox: Toolbox, call: Mapping[str, Any], deadline: Deadline | None = None) -> JSON:
    """Run one `tool_use` block and return its `tool_result` block; see `run_call`."""
    return run_call(toolbox, call, deadline).block


def run_call(toolbox: Toolbox, call: Mapping[str, Any], deadline: Deadline | None = None) -> CallOutcome:
    """Run one `tool_use` block under `deadline` (default: TOOL_DEADLINE_SECONDS from now).

    Never raises for a tool's failure or a passed deadline; raises `Interrupted`, carrying the
    answer, when the tool was stopped by KeyboardInterrupt.
    """
    name, call_id, arguments = call["name"], call["id"], call.get("input", {})
    deadline = deadline if deadline is not None else Deadline.after(toolbox.deadline_seconds)
    definition = next((d for d in toolbox.definitions if d["name"] == name), None)
    if definition is None:
        known = ", ".join(d["name"] for d in toolbox.definitions)
        return _failed(call_id, f"There is no tool named {name!r}. The tools are: {known}.")
    problems = schema_problems(definition.get("input_schema", {}), arguments)
    if problems:
        text = f"{name} was not run: {'; '.join(problems)}. Call it again with input that fits its schema."
        return _failed(call_id, text)
    try:
        output = toolbox.run(name, arguments, call_id, deadline)
    except ToolError as exc:
        return _failed(call_id, str(exc))
    except DeadlineExceeded as exc:
        head = f"{name} did not finish: it timed out after {exc.deadline.seconds:g} seconds and was stopped."
        tail = (
            "If that left the task undone, you may call it again once; "
            "if it times out again, tell the user the calendar is not responding."
        )
        text = f"{head} {_side_effect(toolbox, name, call_id)} {tail}"
        return CallOutcome(_block(call_id, text, error=True), CallStatus.TIMED_OUT)
    except KeyboardInterrupt as exc:
        head = f"{name} did not finish: it was interrupted (the user pressed Ctrl-C)."
        text = f"{head} {_side_effect(toolbox, name, call_id)} Ask the user before calling it again."
        raise Interrupted(CallOutcome(_block(call_id, text, error=True), CallStatus.INTERRUPTED)) from exc
    except Exception as exc:  # a bug in a tool still answers its call
        text = (
            f"{name} failed with an internal error ({type(exc).__name__}: {exc}). The same input will "
            "likely fail the same way: tell the user what you were trying to do and that this tool failed."
        )
        return _failed(call_id, text)
    return CallOutcome(_block(call_id, output), CallStatus.ANSWERED)


def _side_effect(toolbox: Toolbox, name: str, call_id: str) -> str:
    try:
        effect = toolbox.side_effect_of(name, call_id)
    except Exception as exc:
        return (
            f"Whether it changed anything could not be checked ({type(exc).__name__}: {exc}): "
            "tell the user to look at the calendar before anything is tried again."
        )
    return "It only reads, so nothing changed." if effect is None else effect


def cut(text: str, limit: int = MAX_RESULT_CHARS) -> str:
    """`text`, or its start (at a line end when there is one) with a note, within `limit` characters."""
    if len(text) <= limit:
        return text
    keep = text[: max(0, limit - _CUT_NOTE_ROOM)]
    line_end = keep.rfind("\n")
    if line_end >= len(keep) // 2:
        keep = keep[:line_end]
    note = (
        f"[Cut at {len(keep)} of {len(text)} characters: the rest was left out. "
        "Ask for less at once, e.g. a narrower range or one person or week at a time.]"
    )
    return f"{keep}\n{note}"


def _failed(call_id: str, text: str) -> CallOutcome:
    return CallOutcome(_block(call_id, text, error=True), CallStatus.FAILED)


def _block(call_id: str, text: ToolOutput, *, error: bool = False) -> JSON:
    block: JSON = {
        "type": "tool_result",
        "tool_use_id": call_id,
        "content": cut(text) if isinstance(text, str) else text,
    }
    if error:
        block["is_error"] = True
    return block


class Previewing(Toolbox, Protocol):
    """A Toolbox that can say what a side-effecting call would do, after its checks, without doing it."""

    def preview(self, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str | None:
        """A sentence for the person; None when nothing needs asking (a read, or a call already done)."""
        ...
