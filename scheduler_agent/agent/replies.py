"""Whether a reply can join the list: the model's reply is judged before it is appended.

The list is sent back whole with every request, so one entry the API refuses wedges the
conversation for good. Two kinds of reply are therefore kept beside the list, never in it:

- an empty reply: `content: []`, or only text blocks that are empty, whitespace or `null`
  (the real API sends these, e.g. a `refusal` with no text). Nothing is invented for the model:
  the list ends with the user turn, and the person's next text joins that turn;
- an unusable reply: one the API itself would refuse to take back (a `tool_use` without a
  non-empty `name` or `id`, without an object `input`, two calls with one id, a content that
  is not a list of blocks, an empty text block beside other blocks).

Pure: the standard library and agent/ only.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, KeysView, Mapping, Sequence
from collections.abc import Set as AbstractSet
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from scheduler_agent.agent.growth import read_from
from scheduler_agent.agent.types import is_object


class Fit(StrEnum):
    USABLE = "usable"
    EMPTY = "empty"  # the model answered with nothing
    UNUSABLE = "unusable"  # the API would refuse the reply if it were sent back


@dataclass(frozen=True)
class Verdict:
    fit: Fit
    problems: list[str] = field(default_factory=list)  # one phrase per problem, for the person

    @property
    def usable(self) -> bool:
        return self.fit is Fit.USABLE


def _blank_text(block: object) -> bool:
    if not is_object(block) or block.get("type") != "text":
        return False
    text = block.get("text")
    return not isinstance(text, str) or not text.strip()


_SETS: tuple[type, ...] = (set, frozenset, type({}.keys()))


def judge(reply: object, earlier_ids: Collection[str] = ()) -> Verdict:
    """Judge `reply` (the API's response body); `earlier_ids` are the call ids already in the list (a set,
    or `CallIds`' view of them, is used as it is; anything else is copied into one)."""
    content = reply.get("content") if is_object(reply) else None
    if not isinstance(content, list):
        return Verdict(Fit.UNUSABLE, [f"its content is {_kind(content)}, not a list of blocks"])
    if all(_blank_text(block) for block in content):
        return Verdict(Fit.EMPTY)
    problems: list[str] = []
    as_set = type(earlier_ids) in _SETS or isinstance(earlier_ids, AbstractSet | KeysView)  # the ABCs' test is slow
    earlier = earlier_ids if as_set else set(earlier_ids)
    seen: set[str] = set()
    for position, block in enumerate(content):
        if not is_object(block) or not isinstance(block.get("type"), str):
            problems.append(f"content[{position}] is {_kind(block)}, not a block with a type")
        elif _blank_text(block):
            problems.append(f"content[{position}] is a text block with no text")
        elif block["type"] == "tool_use":
            problems += _call_problems(block, f"content[{position}]", earlier, seen)
    return Verdict(Fit.UNUSABLE, problems) if problems else Verdict(Fit.USABLE)


def _call_problems(block: Mapping[str, Any], where: str, earlier: Collection[str], seen: set[str]) -> list[str]:
    problems = []
    name, call_id = block.get("name"), block.get("id")
    if not isinstance(name, str) or not name:
        problems.append(f"the tool call at {where} has no tool name")
    if not isinstance(call_id, str) or not call_id:
        problems.append(f"the tool call at {where} has no id")
    elif call_id in earlier or call_id in seen:
        problems.append(f"the tool call at {where} reuses the id {call_id}")
    else:
        seen.add(call_id)
    arguments = block.get("input")
    if not is_object(arguments):
        got = "no input" if "input" not in block else f"an input that is {_kind(arguments)}"
        problems.append(f"the tool call at {where} has {got}, not an object")
    return problems


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def call_ids(messages: Iterable[Mapping[str, Any]]) -> list[str]:
    """Every tool_use id already in the list."""
    return [call_id for message in messages for call_id in _ids_of(message)]


def _ids_of(message: Mapping[str, Any]) -> list[str]:
    """The tool_use ids of one entry: none unless it is an assistant turn with a list of blocks."""
    content = message.get("content")
    if message.get("role") != "assistant" or not isinstance(content, list):
        return []
    return [b["id"] for b in content if is_object(b) and b.get("type") == "tool_use" and b.get("id")]


class CallIds:
    """`call_ids(messages)` as a set kept up to date while the list grows: each entry is read when it is new
    (and once more when the next one arrives), so asking costs the same at 10 entries and at 10,000.

    Where to read again is `growth.read_from`'s answer (entries appended or removed at the end, the last
    one perhaps changed in place); another list object is read from the start."""

    def __init__(self) -> None:
        self._list: Sequence[Mapping[str, Any]] | None = None
        self._entries: list[Mapping[str, Any]] = []  # the entry objects read, by index
        self._ids: list[list[str]] = []  # the call ids of each
        self._counts: dict[str, int] = {}  # call id -> how many entries hold it

    def of(self, messages: Sequence[Mapping[str, Any]]) -> KeysView[str]:
        """Every tool_use id in the assistant entries of `messages` (a live view: do not keep it)."""
        start = read_from(messages, self._list, self._entries)
        for ids in self._ids[start:]:
            for call_id in ids:
                self._counts[call_id] -= 1
                if not self._counts[call_id]:
                    del self._counts[call_id]
        del self._entries[start:], self._ids[start:]
        for message in messages[start:]:
            ids = _ids_of(message)
            for call_id in ids:
                self._counts[call_id] = self._counts.get(call_id, 0) + 1
            self._entries.append(message)
            self._ids.append(ids)
        self._list = messages
        return self._counts.keys()
