"""The walk's checks of one content block (text, a call, a result), and the state they share with the walk.

See walk.py for how entries become runs (merged turns). A block's findings depend on its run (the calls a
result may answer, the results so far, a text block before them) and, for a call, on every call id seen
before it in the list (`CallLog`): an id used again in a later round is a warning.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, fields
from typing import Any

from scheduler_agent.agent.types import is_object
from scheduler_agent.grammar import rules
from scheduler_agent.grammar.rules import (
    API_DUPLICATE_CALL,
    API_MISSING_RESULTS,
    API_UNEXPECTED_RESULT,
    API_WHITESPACE_TEXT,
    Violation,
    at,
    kind_of,
    show,
)

Call = tuple[str, int, str]  # (call id, entry index, where)


@dataclass(slots=True)
class Run:
    """The merged turn the entries so far end with, as the walk needs it to go on.

    One per entry: the walk copies the one before and changes only the copy, so each stays as it was
    after its entry (what `rollback` goes back to)."""

    role: str | None  # "user", "assistant", "system", another role; None for an entry that is not an object
    calls: tuple[Call, ...] = ()  # an assistant run's calls, in order
    asked: tuple[Call, ...] = ()  # a user run: the calls of the assistant run right before it
    answered: tuple[Call, ...] = ()  # a user run: the results so far (tool_use_id, entry index, where)
    first_other: tuple[int, str, str] | None = None  # a user run: its first block that is not a result
    blank: tuple[str, ...] = field(default=())  # the last entry's whitespace-only texts (an assistant entry)

    def copy(self) -> Run:
        return Run(*(getattr(self, f.name) for f in fields(self)))


class CallLog:
    """Every call id seen so far, where it first appeared, and in which entry (to roll back).

    `seed`: the ids of entries the walk did not examine (a prefix checked before), read only when an id
    is first looked up; those are never rolled back."""

    def __init__(self, seed: Callable[[], dict[str, str]] | None = None) -> None:
        self._first_seen: dict[str, str] = {}  # call id -> where it first appeared
        self._seed = seed
        self.id_log: list[tuple[int, str]] = []  # (entry index, call id), in order, to roll back

    @property
    def first_seen(self) -> dict[str, str]:
        if self._seed is not None:
            self._first_seen = self._seed() | self._first_seen
            self._seed = None
        return self._first_seen

    def note(self, call_id: str, index: int, where: str) -> None:
        if call_id not in self.first_seen:
            self.first_seen[call_id] = where
            self.id_log.append((index, call_id))

    def rollback(self, index: int) -> None:
        """Forget the ids first seen in the entries from `index` on."""
        while self.id_log and self.id_log[-1][0] >= index:
            _, call_id = self.id_log.pop()
            del self.first_seen[call_id]


def calls_in(messages: Sequence[Any], end: int) -> dict[str, str]:
    """call id -> where it first appears, in `messages[:end]` (what `CallLog` would hold after them)."""
    found: dict[str, str] = {}
    for index in range(end):
        entry = messages[index]
        content = entry.get("content") if is_object(entry) else None
        for position, block in enumerate(content if isinstance(content, list) else ()):
            if is_object(block) and block.get("type") == "tool_use":
                call_id = block.get("id")
                if isinstance(call_id, str) and call_id and call_id not in found:
                    found[call_id] = f"{at(index)}.content[{position}]"
    return found


def _relative(where: str, index: int) -> str:
    """A position inside the entry at `index` as `content[k]`, any other as it is."""
    prefix = f"{at(index)}."
    return where[len(prefix) :] if where.startswith(prefix) else where


def examine_block(
    calls: CallLog, block: object, where: str, index: int, role: str | None, run: Run, found: list[Violation]
) -> Run:
    """One block of the entry at `index`: its findings go to `found`; the run state after it is returned."""
    if not is_object(block) or not isinstance(block.get("type"), str):
        found.append(rules.not_a_block(where, block))
        kind = "not a block"
    else:
        kind = block["type"]
    if role == "user" and kind != "tool_result" and run.first_other is None:
        run.first_other = (index, where, kind)
    if not is_object(block) or kind == "not a block":
        return run
    if kind == "text":
        violation = rules.text_block(block, where)
        if violation and violation.cause == API_WHITESPACE_TEXT and role == "assistant":
            run.blank = (*run.blank, where)  # a warning, unless it is the last entry
            return run
        found += [violation] if violation else []
    elif kind == "tool_use":
        return _call(calls, block, where, index, role, run, found)
    elif kind == "tool_result":
        return _result(block, where, index, role, run, found)
    return run


def _call(
    calls: CallLog, block: Mapping[str, Any], where: str, index: int, role: str | None, run: Run, found: list[Violation]
) -> Run:
    if role == "user":
        cause = "a `tool_use` block in a user turn: only the model calls tools, so calls belong in assistant turns"
        found.append(Violation(where, cause))
    call_id = block.get("id")
    if not isinstance(call_id, str) or not call_id:
        found.append(Violation(f"{where}.id", f'a `tool_use` block needs a non-empty string "id", not {show(call_id)}'))
    else:
        twin = next((w for i, _, w in run.calls if i == call_id), None)
        if twin is not None:
            cause = (
                f'the API: "{API_DUPLICATE_CALL}": {call_id} is also the id of {twin}, in the same turn '
                "(consecutive assistant entries are one turn)"
            )
            found.append(Violation(where, cause))
        elif call_id in calls.first_seen:
            cause = (
                f"the `tool_use` id {call_id} is used again (first at {calls.first_seen[call_id]}): the API "
                "accepts an id again in a later round, but a person reading the list cannot tell the calls apart"
            )
            found.append(rules.warning(where, cause))
        calls.note(call_id, index, where)
        if role == "assistant":
            run.calls = (*run.calls, (call_id, index, where))
    if not isinstance(block.get("name"), str) or not block["name"]:
        found.append(Violation(f"{where}.name", 'a `tool_use` block needs the name of the tool it calls in "name"'))
    arguments = block.get("input")
    if not is_object(arguments):
        found.append(Violation(f"{where}.input", f'"input" must be an object, not {kind_of(arguments)}'))
    return run


def _result(
    block: Mapping[str, Any], where: str, index: int, role: str | None, run: Run, found: list[Violation]
) -> Run:
    if role == "assistant":
        cause = "a `tool_result` block in an assistant turn: results belong in the user turn right after the call"
        found.append(Violation(where, cause))
    call_id = block.get("tool_use_id")
    first = next((w for i, _, w in run.answered if i == call_id), None)
    if not isinstance(call_id, str) or not call_id:
        cause = f'a `tool_result` block needs the id of the call it answers in "tool_use_id", not {show(call_id)}'
        found.append(Violation(f"{where}.tool_use_id", cause))
    elif role != "user" or call_id not in {i for i, _, _ in run.asked}:
        found.append(Violation(where, API_UNEXPECTED_RESULT.format(id=call_id)))
    elif first is not None:
        cause = (
            f"a second `tool_result` for {call_id} (the first is {_relative(first, index)}): "
            "each call gets exactly one result"
        )
        found.append(Violation(where, cause))
    else:
        run.answered = (*run.answered, (call_id, index, where))
        if run.first_other is not None:
            _, other, kind = run.first_other
            cause = (
                f"this `tool_result` comes after {_relative(other, index)} ({kind}): results must come first in "
                "the user turn (consecutive user entries are one turn), text only after them; the API rejects "
                f'this order with "{API_MISSING_RESULTS.format(ids=call_id)}"'
            )
            found.append(Violation(where, cause))
    found += rules.result_content(block, where)
    return run
