"""One call of a calendar tool from an MCP client, run by the loop's own dispatch (`agent.toolbox.run_call`).

The client sends a tool's name and input; the answer is the text our model would get in the loop, an
error result when the loop's `tool_result` would be `is_error`. Each call opens its own connection to
the database (a worker thread runs it), so calls from several clients never share one.

The three change tools take an optional `idempotency_key`, which MCP itself lacks. It becomes the call's
id in the bookings record (`calendar/bookings.py`) the loop keeps by `tool_use` id: a repeat with the same
key and the same input gets the recorded answer and changes nothing, even after a crash between the write
and the answer; the same key with another input is refused by name. A call without a key gets an id of
its own, used once: an ordinary call.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import TOOL_DEADLINE_SECONDS, ToolError, run_call, schema_problems
from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.bookings import input_hash
from scheduler_agent.calendar.opening import open_calendar
from scheduler_agent.calendar.slots import format_window
from scheduler_agent.calendar.tools import DEFAULT_MINUTES, CalendarTools, tool_definitions
from scheduler_agent.calendar.tools.inputs import resolve_group
from scheduler_agent.session.approval import BOOKINGS, Decision, refusal_text
from scheduler_agent.storage.db import Location, open_db

KEY = "idempotency_key"
CHANGES = ("create_event", "move_event", "cancel_event")
KEYED = "mcp-key:"  # the record of a call with a key: `mcp-key:<key>`
UNKEYED = "mcp-call:"  # a call without one: a fresh id, never repeated
MAX_KEY_CHARS = 200

KEY_SCHEMA: JSON = {
    "type": "string",
    "minLength": 1,
    "maxLength": MAX_KEY_CHARS,
    "description": (
        "Optional. Any text unique to this change (e.g. a UUID). Send the same key again with the same input "
        "after a timeout or a lost connection: the change is made once, and the repeat gets the first answer."
    ),
}

# What the person must allow at start-up when the client cannot ask them (no elicitation).
_ALLOW = {
    "create_event": ("Nothing was booked.", "--yes", "bookings and moves"),
    "move_event": ("Nothing was moved.", "--yes", "bookings and moves"),
    "cancel_event": ("Nothing was cancelled.", "--yes-cancel", "cancellations"),
}


@dataclass(frozen=True)
class Serving:
    """What every call of one server shares: the database, the clock pin, what is approved without asking."""

    db: Location | None
    today: str | None = None
    approved: frozenset[str] = frozenset()  # `--yes`: BOOKINGS; `--yes-cancel`: cancel_event too
    invites: bool | None = None

    @classmethod
    def started_with(
        cls, db: Location | None, today: str | None, yes: bool, yes_cancel: bool, invites: bool | None = None
    ) -> Serving:
        approved = (BOOKINGS if yes else frozenset()) | ({"cancel_event"} if yes_cancel else frozenset())
        return cls(db, today, frozenset(approved), invites)


@dataclass(frozen=True)
class Verdict:
    """What a change call needs before it runs: nothing (go on), or an error text (stop), or a question."""

    error: str | None = None
    question: str | None = None


def input_schema(name: str) -> JSON:
    """The tool's input schema from `prompts/tools.json`, with `idempotency_key` on the three change tools."""
    definition = next(d for d in tool_definitions() if d["name"] == name)
    schema: JSON = definition["input_schema"]
    if name in CHANGES:
        schema["properties"][KEY] = KEY_SCHEMA
    return schema


def descriptions() -> dict[str, str]:
    return {d["name"]: d["description"] for d in tool_definitions()}


@contextmanager
def calendar_tools(serving: Serving) -> Iterator[CalendarTools]:
    """The loop's toolbox on a connection of this call's own, closed after it."""
    from scheduler_agent.session.clock import clock_for

    conn = open_db(serving.db)
    try:
        calendar = open_calendar(conn, invites=serving.invites)
        yield CalendarTools(conn, clock_for(conn, serving.today), calendar=calendar)
    finally:
        conn.close()


def split_key(name: str, raw: Mapping[str, Any]) -> tuple[dict[str, Any], str | None, str | None]:
    """(the tool's own input, the idempotency key or None, a problem with the key or None)."""
    arguments = dict(raw)
    if name not in CHANGES or KEY not in arguments:
        return arguments, None, None
    key = arguments.pop(KEY)
    if not isinstance(key, str) or not 1 <= len(key) <= MAX_KEY_CHARS:
        problem = (
            f"{name} was not run: {KEY} must be a text of 1 to {MAX_KEY_CHARS} characters, got {key!r}. "
            f"Nothing was changed. Call it again with a fitting key, or without one."
        )
        return arguments, None, problem
    return arguments, key, None


def call_id(key: str | None) -> str:
    return KEYED + key if key is not None else UNKEYED + uuid.uuid4().hex


def prepare(serving: Serving, name: str, raw: Mapping[str, Any], can_ask: bool) -> Verdict:
    """Before a change: every check the call will make, then whether the person must be asked.

    Input that does not fit the schema, and a repeat of a recorded call, go on without a question:
    the dispatch answers them (with its schema text, or with the recorded answer) and changes nothing.
    """
    arguments, key, problem = split_key(name, raw)
    if problem is not None:
        return Verdict(error=problem)
    definition = next(d for d in tool_definitions() if d["name"] == name)
    if schema_problems(definition["input_schema"], arguments):
        return Verdict()
    with calendar_tools(serving) as tools:
        if key is not None:
            recorded = tools.calendar.recorded(KEYED + key)
            if recorded is not None:
                if recorded.kind == name and recorded.input_hash == input_hash(arguments):
                    return Verdict()
                return Verdict(error=reused_key_text(key, recorded.kind, recorded.result))
        try:
            summary = tools.preview(name, arguments, call_id(key))
        except ToolError as exc:
            return Verdict(error=str(exc))
    if summary is None or name in serving.approved:
        return Verdict()
    if not can_ask:
        return Verdict(error=cannot_ask_text(name, summary))
    return Verdict(question=summary)


def run(serving: Serving, name: str, raw: Mapping[str, Any]) -> tuple[str, bool]:
    """The call, by the loop's dispatch: (the result text, whether it is an error)."""
    arguments, key, problem = split_key(name, raw)
    if problem is not None:
        return problem, True
    with calendar_tools(serving) as tools:
        call = {"type": "tool_use", "id": call_id(key), "name": name, "input": arguments}
        block = run_call(tools, call, Deadline.after(TOOL_DEADLINE_SECONDS)).block
        text, failed = str(block["content"]), bool(block.get("is_error"))
        if name == "find_free_slots" and not failed:
            text += windows_elsewhere(tools, arguments)
    return text, failed


def windows_elsewhere(tools: CalendarTools, arguments: Mapping[str, Any]) -> str:
    """find_free_slots' windows again in the zone of each person who is not in the owner's, so that a client's
    model need not convert them ('' when everyone shares the owner's zone). The same search, just made."""
    owner = tools.calendar.owner()
    people = resolve_group(tools.calendar, arguments["person"], arguments.get("also", []), field="person")
    away = [person for person in people if person.tz != owner.tz]
    if not away:
        return ""
    day = tools.parse_week(arguments["week"], owner)
    search = tools.search(owner, people, day, arguments.get("minutes", DEFAULT_MINUTES))
    return "".join(
        f"\nThe same windows for {p.name} ({p.key}) in {p.tz}: "
        + ", ".join(format_window(window, p.tz) for window in search.windows)
        + "."
        for p in away
    )


def declined_text(name: str, raw: Mapping[str, Any], question: str, reason: str) -> str:
    """The loop's refusal text: what the person declined, and their reason when they gave one."""
    arguments, _, _ = split_key(name, raw)
    return refusal_text({"name": name, "input": arguments}, question, Decision(False, reason))


def reused_key_text(key: str, kind: str, result: str) -> str:
    return (
        f"Not run: the idempotency key {key!r} already answered a {kind} call with another input ({result}). "
        "Nothing was changed now. Give a new key for a new change; the same key only repeats the same call."
    )


def cannot_ask_text(name: str, summary: str) -> str:
    unchanged, flag, what = _ALLOW[name]
    return (
        f"Not run: this change needs the user's approval ({summary}), and this MCP client cannot ask them "
        f"(it does not support elicitation). {unchanged} Tell the user to start the server as "
        f"`scheduler-agent mcp {flag}` to allow {what} without asking, or to use a client that asks."
    )
