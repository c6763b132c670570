"""The grammar of the message list: what the API validates, checked before anything is sent.

The message list is the agent's whole state, and it obeys a grammar the API enforces:

- it starts with a user turn; every entry is `{"role": "user" | "assistant", "content": ...}` with
  non-empty content and no empty text blocks;
- an assistant turn with `tool_use` blocks is followed immediately by ONE user turn holding one
  `tool_result` per call id, results first; every `tool_result` answers a call of the turn right
  before it; an `is_error` result holds non-empty text only; call ids are unique;
- a request ends with a user turn (no prefill).

And one rule the API cannot see: an assistant turn is the provider's own content array, exactly as it
arrived. A turn rebuilt from a few fields keeps its ids and passes everything above; only a comparison
with the raw response (`raw`) catches it.

`check` walks a whole list and returns every violation with its position; `IncrementalChecker` gives the
same answer while examining only what was added since its last call. Pure: standard library only.
"""

from __future__ import annotations

import heapq
import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.grammar.jsondiff import first_difference

Mode = Literal["request", "conversation"]
State = Literal["empty", "waiting", "interrupted", "complete"]

ROLES = ("user", "assistant")

# The API's own error texts (see shared/reference/anthropic-api.md).
API_MISSING_RESULTS = (
    "`tool_use` ids were found without `tool_result` blocks immediately after: {ids}. "
    "Each `tool_use` block must have a corresponding `tool_result` block in the next message."
)
API_UNEXPECTED_RESULT = (
    "unexpected `tool_use_id` found in `tool_result` blocks: {id}. "
    "Each `tool_result` block must have a corresponding `tool_use` block in the previous message."
)
API_EMPTY_CONTENT = "all messages must have non-empty content except for the optional final assistant message"
API_EMPTY_TEXT = "text content blocks must be non-empty"
API_WHITESPACE_TEXT = "text content blocks must contain non-whitespace text"
API_ERROR_NOT_TEXT = "all content must be type 'text' if 'is_error' is true"
API_PREFILL = "This model does not support assistant message prefill. The conversation must end with a user message."
API_FIRST_ROLE = 'messages: first message must use the "user" role'


@dataclass(frozen=True)
class Violation:
    """One break of the grammar: where it is (`messages[4].content[1]`) and why, in one sentence."""

    where: str
    cause: str
    api_accepts: bool = False  # the API would take it (it merges same-role turns; it cannot see provenance)

    def __str__(self) -> str:
        return f"{self.where}: {self.cause}"


class GrammarError(AgentError):
    """The list about to be sent breaks the grammar; it was not sent.

    Given the list, the message names who made each broken entry: the model (its reply), the person
    (their text) or the code (the tool results, or the list's order). `advice` is a way out."""

    exit_code = 1

    def __init__(
        self, violations: Sequence[Violation], messages: Sequence[Any] | None = None, advice: str = ""
    ) -> None:
        self.violations = list(violations)
        count = len(self.violations)
        rejected = any(not violation.api_accepts for violation in self.violations)
        causes = sorted({source_of(violation, messages) for violation in self.violations})
        cause = "; ".join(causes) if messages is not None else "a bug in the code that built the list"
        head = (
            f"The message list was NOT sent: it breaks the API's grammar in {count} "
            f"place{'' if count == 1 else 's'} ({cause}"
            f"{'; the API would reject it' if rejected else ''}):"
        )
        lines = [head, *(f"  {violation}" for violation in self.violations)]
        super().__init__("\n".join([*lines, advice] if advice else lines))


def source_of(violation: Violation, messages: Sequence[Any] | None) -> str:
    """Who made the entry a violation is in: the model, the person, or the code."""
    where = violation.where
    if messages is None or not where.startswith("messages["):
        return "a bug in the code that built the list"
    index = int(where[len("messages[") : where.index("]")])
    entry = messages[index] if 0 <= index < len(messages) else None
    role = _role(entry)
    of_the_list = ("`tool_use` ids were found without", "two ", "a request must end", "the assistant turn is not")
    if violation.cause.startswith(of_the_list):  # what follows (or replaced) the entry, not the entry itself
        return f"the code that built the list, at messages[{index}]"
    if role == "assistant":
        return f"the model's reply at messages[{index}], stored as it came"
    if role == "user":
        blocks = _blocks(entry)
        part = where[where.index("]") + 1 :]
        if part.startswith(".content[") and "]" in part[1:]:
            position = int(part[len(".content[") : part.index("]")])
            block = blocks[position] if 0 <= position < len(blocks) else None
            if _has_type(block, "tool_result"):
                return f"the code's tool results at messages[{index}]"
        if blocks and all(_has_type(block, "tool_result") for block in blocks):
            return f"the code's tool results at messages[{index}]"
        return f"the person's text at messages[{index}]"
    return f"an entry at messages[{index}] that is neither the model's nor the person's"


# --- reading entries ---------------------------------------------------------------------------------


def _at(index: int) -> str:
    return f"messages[{index}]"


def _role(entry: object) -> str | None:
    if isinstance(entry, Mapping):
        role = entry.get("role")
        return role if isinstance(role, str) else None
    return None


def _blocks(entry: object) -> list[Any]:
    """The content blocks of an entry (none when its content is a string or malformed)."""
    if isinstance(entry, Mapping):
        content = entry.get("content")
        if isinstance(content, list):
            return content
    return []


def _has_type(block: object, kind: str) -> bool:
    return isinstance(block, Mapping) and block.get("type") == kind


def _call_ids(entry: object) -> list[str]:
    """The `tool_use` ids of an assistant turn, in order (empty for anything else)."""
    if _role(entry) != "assistant":
        return []
    return [
        block["id"]
        for block in _blocks(entry)
        if _has_type(block, "tool_use") and isinstance(block.get("id"), str) and block["id"]
    ]


def _result_ids(entry: object) -> set[str]:
    if _role(entry) != "user":
        return set()
    return {
        block["tool_use_id"]
        for block in _blocks(entry)
        if _has_type(block, "tool_result") and isinstance(block.get("tool_use_id"), str)
    }


def _kind(value: object) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list | tuple):
        return "an array"
    if isinstance(value, Mapping):
        return "an object"
    return type(value).__name__


def unanswered_calls(messages: Sequence[Any]) -> list[Mapping[str, Any]]:
    """The `tool_use` blocks of a trailing assistant turn (none when the list ends otherwise)."""
    if not messages or _role(messages[-1]) != "assistant":
        return []
    return [block for block in _blocks(messages[-1]) if _has_type(block, "tool_use")]


def conversation_state(messages: Sequence[Any]) -> State:
    """Where a stored list stands.

    "complete": it ends with the assistant's answer (no calls). "interrupted": it ends with an assistant
    turn whose calls have no results (a round cut short; resumable). "waiting": it ends with a user turn
    the model never answered. "empty": there is nothing in it.
    """
    if not messages:
        return "empty"
    if _role(messages[-1]) != "assistant":
        return "waiting"
    return "interrupted" if unanswered_calls(messages) else "complete"


# --- the walk --------------------------------------------------------------------------------------


class _Walker:
    """Checks one entry at a time, in order; remembers the call ids seen so far (they must be unique)."""

    def __init__(self) -> None:
        self.first_seen: dict[str, str] = {}  # call id -> where it first appeared
        self.id_log: list[tuple[int, str]] = []  # (entry index, call id), in order, to roll back

    def rollback(self, index: int) -> None:
        """Forget the call ids of entries from `index` on."""
        while self.id_log and self.id_log[-1][0] >= index:
            _, call_id = self.id_log.pop()
            del self.first_seen[call_id]

    def entry(self, messages: Sequence[Any], index: int) -> list[Violation]:
        """The violations found at `messages[index]`: first its relation to the entry before, then its own."""
        entry = messages[index]
        before = messages[index - 1] if index > 0 else None
        asked = _call_ids(before)
        found: list[Violation] = []
        if not isinstance(entry, Mapping):
            if asked:
                found.append(Violation(_at(index - 1), API_MISSING_RESULTS.format(ids=", ".join(asked))))
            cause = f'an entry must be an object with "role" and "content", not {_kind(entry)}'
            return [*found, Violation(_at(index), cause)]
        role = _role(entry)
        if asked:
            answered = _result_ids(entry)
            missing = [call_id for call_id in asked if call_id not in answered]
            if missing:
                found.append(Violation(_at(index - 1), API_MISSING_RESULTS.format(ids=", ".join(missing))))
        if role in ROLES and _role(before) == role:
            found.append(Violation(_at(index), _same_role(role, index), api_accepts=True))
        found += self._own(entry, index, role, asked)
        return found

    def _own(self, entry: Mapping[str, Any], index: int, role: str | None, asked: list[str]) -> list[Violation]:
        where = _at(index)
        found: list[Violation] = []
        if role not in ROLES:
            found.append(Violation(f"{where}.role", f'the role must be "user" or "assistant", not {_show(role)}'))
        elif index == 0 and role == "assistant":
            cause = f"the list must start with a user turn, not an assistant turn (the API: {API_FIRST_ROLE})"
            found.append(Violation(where, cause))
        for key in entry:
            if key not in ("role", "content"):
                cause = f'an entry holds only "role" and "content"; the API rejects any other key, such as {key!r}'
                found.append(Violation(f"{where}.{key}", cause))
        if "content" not in entry:
            found.append(Violation(where, 'the entry has no "content"'))
            return found
        content = entry["content"]
        if isinstance(content, str):
            if not content:
                found.append(Violation(f"{where}.content", API_EMPTY_CONTENT))
            elif not content.strip():
                found.append(Violation(f"{where}.content", API_WHITESPACE_TEXT))
        elif isinstance(content, list):
            if not content:
                found.append(Violation(f"{where}.content", API_EMPTY_CONTENT))
            found += self._blocks(content, index, role, asked)
        else:
            cause = f"content must be a string or an array of content blocks, not {_kind(content)}"
            found.append(Violation(f"{where}.content", cause))
        return found

    def _blocks(self, blocks: list[Any], index: int, role: str | None, asked: list[str]) -> list[Violation]:
        found: list[Violation] = []
        answered: dict[str, int] = {}  # call id -> the block that answered it
        first_other: int | None = None  # the first block that is not a tool_result
        for position, block in enumerate(blocks):
            where = f"{_at(index)}.content[{position}]"
            if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
                found.append(Violation(where, f'a content block must be an object with a "type", not {_kind(block)}'))
                first_other = position if first_other is None else first_other
                continue
            kind = block["type"]
            if kind != "tool_result" and first_other is None:
                first_other = position
            if kind == "text":
                found += _text(block, where)
            elif kind == "tool_use":
                found += self._call(block, where, index, role)
            elif kind == "tool_result":
                found += _result(block, where, role, asked, answered, position, first_other, blocks)
        return found

    def _call(self, block: Mapping[str, Any], where: str, index: int, role: str | None) -> list[Violation]:
        found: list[Violation] = []
        if role == "user":
            cause = "a `tool_use` block in a user turn: only the model calls tools, so calls belong in assistant turns"
            found.append(Violation(where, cause))
        call_id = block.get("id")
        if not isinstance(call_id, str) or not call_id:
            found.append(
                Violation(f"{where}.id", f'a `tool_use` block needs a non-empty string "id", not {_show(call_id)}')
            )
        elif call_id in self.first_seen:
            cause = (
                f"the `tool_use` id {call_id} is used again (first at {self.first_seen[call_id]}); "
                "call ids must be unique across the list"
            )
            found.append(Violation(where, cause))
        else:
            self.first_seen[call_id] = where
            self.id_log.append((index, call_id))
        if not isinstance(block.get("name"), str) or not block["name"]:
            found.append(Violation(f"{where}.name", 'a `tool_use` block needs the name of the tool it calls in "name"'))
        if not isinstance(block.get("input"), Mapping):
            found.append(Violation(f"{where}.input", f'"input" must be an object, not {_kind(block.get("input"))}'))
        return found


def _show(value: object) -> str:
    return json.dumps(value) if isinstance(value, str | int | float | bool | None) else _kind(value)


def _same_role(role: str, index: int) -> str:
    pair = f"messages[{index - 1}] and messages[{index}]"
    if role == "user":
        return (
            f"two user turns in a row ({pair}): the API would merge them, but the loop never builds this; "
            "results filed before the assistant turn that asked for them (a retry-wrapper ordering bug) look like this"
        )
    return (
        f"two assistant turns in a row ({pair}): the API would merge them, but the loop never builds this; "
        "every assistant turn is followed by the user turn that answers it"
    )


def _text(block: Mapping[str, Any], where: str) -> list[Violation]:
    text = block.get("text")
    if not isinstance(text, str):
        return [Violation(f"{where}.text", f'a text block needs a string "text", not {_kind(text)}')]
    if not text:
        return [Violation(where, API_EMPTY_TEXT)]
    if not text.strip():
        return [Violation(where, API_WHITESPACE_TEXT)]
    return []


def _result(
    block: Mapping[str, Any],
    where: str,
    role: str | None,
    asked: list[str],
    answered: dict[str, int],
    position: int,
    first_other: int | None,
    blocks: list[Any],
) -> list[Violation]:
    found: list[Violation] = []
    if role == "assistant":
        cause = "a `tool_result` block in an assistant turn: results belong in the user turn right after the call"
        found.append(Violation(where, cause))
    call_id = block.get("tool_use_id")
    if not isinstance(call_id, str) or not call_id:
        cause = f'a `tool_result` block needs the id of the call it answers in "tool_use_id", not {_show(call_id)}'
        found.append(Violation(f"{where}.tool_use_id", cause))
    elif call_id not in asked:
        found.append(Violation(where, API_UNEXPECTED_RESULT.format(id=call_id)))
    elif call_id in answered:
        cause = (
            f"a second `tool_result` for {call_id} (the first is content[{answered[call_id]}]): "
            "each call gets exactly one result"
        )
        found.append(Violation(where, cause))
    else:
        answered[call_id] = position
        if first_other is not None:
            other = blocks[first_other]
            kind = other.get("type") if isinstance(other, Mapping) else None
            cause = (
                f"this `tool_result` comes after content[{first_other}] ({kind or 'not a block'}): results must come "
                "first in the user turn, text only after them; the API rejects this order with "
                f'"{API_MISSING_RESULTS.format(ids=call_id)}"'
            )
            found.append(Violation(where, cause))
    found += _result_content(block, where)
    return found


def _result_content(block: Mapping[str, Any], where: str) -> list[Violation]:
    is_error = block.get("is_error") is True
    empty_error = (
        f"{API_ERROR_NOT_TEXT}: an `is_error` result must say in text what went wrong and what to do, "
        "and this one is empty"
    )
    if "content" not in block or block["content"] is None:
        return [Violation(where, empty_error)] if is_error else []
    content = block["content"]
    if isinstance(content, str):
        return [Violation(f"{where}.content", empty_error)] if is_error and not content.strip() else []
    if not isinstance(content, list):
        cause = f"a `tool_result`'s content must be a string or an array of blocks, not {_kind(content)}"
        return [Violation(f"{where}.content", cause)]
    found: list[Violation] = []
    if is_error and not content:
        found.append(Violation(f"{where}.content", empty_error))
    for position, inner in enumerate(content):
        inner_where = f"{where}.content[{position}]"
        if not isinstance(inner, Mapping) or not isinstance(inner.get("type"), str):
            found.append(Violation(inner_where, f'a content block must be an object with a "type", not {_kind(inner)}'))
        elif inner["type"] == "text":
            found += _text(inner, inner_where)
        elif is_error:
            found.append(Violation(inner_where, f"{API_ERROR_NOT_TEXT}; this block is {inner['type']!r}"))
    return found


# --- provenance, the end of the list, and assembling the answer --------------------------------------


def _provenance(
    messages: Sequence[Any], raw: Mapping[int, Any] | None
) -> tuple[list[tuple[int, Violation]], list[Violation]]:
    """Compare each entry named in `raw` with the provider's content: (violations by index, out-of-range ones)."""
    placed: list[tuple[int, Violation]] = []
    outside: list[Violation] = []
    for index in sorted(raw or {}):
        received = raw[index] if raw else None
        if not 0 <= index < len(messages):
            cause = f"the provider's content was given for {_at(index)}, but the list has {len(messages)} entries"
            outside.append(Violation(_at(index), cause))
            continue
        entry = messages[index]
        if _role(entry) != "assistant":
            cause = "the provider's content was given for this entry, but it is not an assistant turn"
            placed.append((index, Violation(_at(index), cause)))
            continue
        stored = entry.get("content") if isinstance(entry, Mapping) else None
        difference = first_difference(received, stored, "content", ("received", "stored"))
        if difference:
            cause = (
                f"the assistant turn is not the provider's own content: it differs at {difference}; "
                "append the response's content exactly as it arrived, every block in order"
            )
            placed.append((index, Violation(_at(index), cause, api_accepts=True)))
    return placed, outside


def _tail(messages: Sequence[Any], mode: Mode) -> list[Violation]:
    """What depends on where the list ends."""
    if not messages:
        return [Violation("messages", "the list is empty: it needs at least one user turn")]
    last = len(messages) - 1
    if mode != "request" or _role(messages[last]) != "assistant":
        return []
    found: list[Violation] = []
    asked = _call_ids(messages[last])
    if asked:
        found.append(Violation(_at(last), API_MISSING_RESULTS.format(ids=", ".join(asked))))
    cause = f'a request must end with a user turn, and this one ends with an assistant turn (the API: "{API_PREFILL}")'
    found.append(Violation(_at(last), cause))
    return found


def _assemble(
    settled: Iterable[tuple[int, Violation]], messages: Sequence[Any], mode: Mode, raw: Mapping[int, Any] | None
) -> list[Violation]:
    placed, outside = _provenance(messages, raw)
    merged = heapq.merge(settled, placed, key=lambda item: item[0])  # stable: an entry's own findings first
    return [violation for _, violation in merged] + outside + _tail(messages, mode)


def _check_mode(mode: str) -> None:
    if mode not in ("request", "conversation"):
        raise ValueError(f'mode must be "request" or "conversation", not {mode!r}')


def check(messages: Sequence[Any], *, mode: Mode, raw: Mapping[int, Any] | None = None) -> list[Violation]:
    """Every violation of the grammar in `messages`, in order, each with its position and cause.

    mode "request": what is about to be sent; it must end with a user turn. mode "conversation": a stored
    list; it may end with the assistant's answer, or with unanswered calls (`conversation_state` says
    "interrupted", which is not a violation). `raw` maps the index of an assistant entry to the provider's
    content array as received; that entry must equal it.
    """
    _check_mode(mode)
    walker = _Walker()
    settled = [(index, found) for index in range(len(messages)) for found in walker.entry(messages, index)]
    return _assemble(settled, messages, mode, raw)


def _fingerprint(entry: object) -> str:
    return json.dumps(entry, sort_keys=True, default=repr)


class IncrementalChecker:
    """`check`, examining only the entries added since the last call (plus the one before them).

    The list is assumed to change the way the loop changes it: entries are appended or removed at the
    end, and an entry is changed in place only while it is the last one (the loop adds text to a trailing
    user turn). So the checker keeps each examined entry object and, on each call, walks back from the
    end past the entries that are no longer the same objects (removed or replaced), re-examining from the
    last one that is; the previous last entry, if still in place, is also compared by value. A different
    list object is examined from the start, so pass the loop's own list, not `request["messages"]` (a
    copy made for each request: correct, but examined whole every time). Editing an older entry in place
    needs `reset()`.

    `examined` counts the entries examined by the last call: the new or replaced ones, plus one for the
    entry before them. Provenance (`raw`) costs one comparison per entry it names: pass only the turns
    you still hold the raw response of.
    """

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        """Forget everything: the next call examines the whole list."""
        self._walker = _Walker()
        self._settled: list[tuple[int, Violation]] = []  # (entry index, violation), in order
        self._list: Sequence[Any] | None = None
        self._entries: list[Any] = []  # the entry objects examined, by index
        self._last: str | None = None  # the value of the last entry when it was examined
        self.examined = 0

    def check(self, messages: Sequence[Any], *, mode: Mode, raw: Mapping[int, Any] | None = None) -> list[Violation]:
        """The same list as `check(messages, mode=mode, raw=raw)`."""
        _check_mode(mode)
        self.examined = 0
        start = self._start(messages)
        self._walker.rollback(start)
        while self._settled and self._settled[-1][0] >= start:
            self._settled.pop()
        del self._entries[start:]
        for index in range(start, len(messages)):
            self._settled += [(index, found) for found in self._walker.entry(messages, index)]
            self._entries.append(messages[index])
            self.examined += 1
        self._list = messages
        self._last = _fingerprint(messages[-1]) if messages else None
        return _assemble(self._settled, messages, mode, raw)

    def _start(self, messages: Sequence[Any]) -> int:
        """The first entry that needs examining."""
        if messages is not self._list:
            return 0
        checked = len(self._entries)
        kept = min(len(messages), checked) - 1
        while kept >= 0 and messages[kept] is not self._entries[kept]:
            kept -= 1  # removed or replaced since the last call
        if kept < checked - 1:
            return max(kept, 0)  # it may have changed in place while it was the last entry
        if kept < 0:
            return 0
        self.examined += 1  # the last entry examined before: has it changed in place?
        return kept if _fingerprint(messages[kept]) != self._last else checked
