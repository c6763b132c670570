"""The smallest change that makes a wedged list valid again: for lists stored by earlier versions.

`plan(messages)` returns the repaired list and one sentence per change, each naming who made the
entry it changes (the model, the person, the code). It never invents text for the model:

- an assistant turn the API would refuse back (no content, only blank text, a call without a name,
  an id or an object input, an id used twice) is taken out, with the results that answer it;
- a blank text block is taken out of a turn that has other blocks; a user turn left with
  nothing is taken out;
- a result that answers no call of the turn before is taken out; a call with no result gets
  one that says it was not run;
- two turns of one role in a row become one (the later blocks join the earlier turn).

Pure: the standard library and grammar/ only.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from scheduler_agent.grammar.check import check

MAX_PASSES = 50


@dataclass
class Plan:
    messages: list[Any]
    changes: list[str] = field(default_factory=list)
    left: list[str] = field(default_factory=list)  # violations no rule here could mend


def _blank(block: object) -> bool:
    if not isinstance(block, Mapping) or block.get("type") != "text":
        return False
    text = block.get("text")
    return not isinstance(text, str) or not text.strip()


def _call_ok(block: Mapping[str, Any], seen: set[str]) -> bool:
    name, call_id = block.get("name"), block.get("id")
    ok = isinstance(name, str) and bool(name) and isinstance(call_id, str) and bool(call_id)
    ok = ok and isinstance(block.get("input"), Mapping) and call_id not in seen
    if isinstance(call_id, str):
        seen.add(call_id)
    return ok


def _blocks(entry: Any) -> list[Any]:
    content = entry.get("content") if isinstance(entry, Mapping) else None
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    return content if isinstance(content, list) else []


def plan(messages: list[Any]) -> Plan:
    """The repaired copy of `messages` and what was changed; `messages` itself is not touched."""
    result = Plan(copy.deepcopy(messages))
    for _ in range(MAX_PASSES):
        if not _one_fix(result):
            break
    result.left = [str(v) for v in check(result.messages, mode="conversation")]
    return result


def _one_fix(result: Plan) -> bool:
    """Make the first fix the list needs; False when none applies."""
    messages, changes = result.messages, result.changes
    seen: set[str] = set()
    for index, entry in enumerate(messages):
        blocks = _blocks(entry)
        role = entry.get("role") if isinstance(entry, Mapping) else None
        if role == "assistant":
            calls = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_use"]
            if not blocks or all(_blank(b) for b in blocks) or not all([_call_ok(c, seen) for c in calls]):
                _take_out_assistant(messages, index)
                changes.append(
                    f"took out messages[{index}], the model's reply that the API would refuse back "
                    "(empty, or a call without a name, an id or an object input, or an id used twice), "
                    "with any results answering it"
                )
                return True
        if blocks and any(_blank(b) for b in blocks):
            kept = [b for b in blocks if not _blank(b)]
            who = "the model's reply" if role == "assistant" else "the person's text"
            if kept:
                messages[index] = {"role": role, "content": kept}
                changes.append(f"took the blank text block(s) out of messages[{index}] ({who})")
            else:
                del messages[index]
                changes.append(f"took out messages[{index}] ({who}: nothing but blank text)")
            return True
        if role == "user" and index > 0 and _fix_results(messages, index, changes):
            return True
        if index > 0 and isinstance(messages[index - 1], Mapping) and messages[index - 1].get("role") == role:
            earlier = _blocks(messages[index - 1])
            results = [b for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
            others = [b for b in blocks if b not in results]
            messages[index - 1] = {
                "role": role,
                "content": [*results, *earlier, *others] if results else earlier + blocks,
            }
            del messages[index]
            changes.append(f"joined messages[{index}] to messages[{index - 1}]: two {role} turns in a row")
            return True
    return False


def _take_out_assistant(messages: list[Any], index: int) -> None:
    """Take out the assistant turn at `index`, and the results answering it from the turn after."""
    ids = {b.get("id") for b in _blocks(messages[index]) if isinstance(b, Mapping) and b.get("type") == "tool_use"}
    del messages[index]
    if index < len(messages) and messages[index].get("role") == "user":
        rest = [
            b
            for b in _blocks(messages[index])
            if not (isinstance(b, Mapping) and b.get("type") == "tool_result" and b.get("tool_use_id") in ids)
        ]
        if rest:
            messages[index] = {"role": "user", "content": rest}
        else:
            del messages[index]


def _fix_results(messages: list[Any], index: int, changes: list[str]) -> bool:
    """Results answering no call of the turn before are taken out; calls with no result get one."""
    before = messages[index - 1]
    asked = (
        [b["id"] for b in _blocks(before) if isinstance(b, Mapping) and b.get("type") == "tool_use"]
        if before.get("role") == "assistant"
        else []
    )
    blocks = _blocks(messages[index])
    answered = [b.get("tool_use_id") for b in blocks if isinstance(b, Mapping) and b.get("type") == "tool_result"]
    stray = [
        b
        for b in blocks
        if isinstance(b, Mapping) and b.get("type") == "tool_result" and b.get("tool_use_id") not in asked
    ]
    if stray:
        messages[index] = {"role": "user", "content": [b for b in blocks if b not in stray]}
        changes.append(f"took {len(stray)} result(s) that answer no call out of messages[{index}] (the code's)")
        if not messages[index]["content"]:
            del messages[index]
        return True
    missing = [call_id for call_id in asked if call_id not in answered]
    if missing:
        messages[index] = {"role": "user", "content": [*map(_not_run, missing), *blocks]}
        changes.append(f"answered {', '.join(missing)} in messages[{index}]: not run (the code had left no result)")
        return True
    return False


def _not_run(call_id: str) -> dict[str, Any]:
    text = "This call was not run (its result was lost; the list was repaired). Nothing was changed."
    return {"type": "tool_result", "tool_use_id": call_id, "content": text, "is_error": True}
