"""A bound on the state at send time: a view of the list that fits a context budget.

Trimming is a view, applied when the request is built and never written to the store. It
cuts only between rounds, never between a call and its result, and always keeps the first
user turn, where standing instructions ("never before 10am") live. Dropping that turn is how
"the agent forgot" happens: the model never saw the rule.
"""

from __future__ import annotations

import json
from typing import Any

from scheduler_agent.agent.types import JSON


def estimate_tokens(value: Any) -> int:
    """About four bytes of compact JSON a token: an estimate, good enough to keep under a budget (and for the
    usage of scripted replies, which say they are estimates)."""
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()) // 4


def newest_only(messages: list[JSON], budget: int) -> list[JSON]:
    """The naive trim, kept to show what goes wrong (the `forgotten_rule` lesson): the newest entries
    that fit, from a turn where the person spoke. Valid for the API; it drops the first turn and its rule."""
    starts = [i for i, m in enumerate(messages) if m["role"] == "user" and _spoken(m)]
    for start in starts:
        view = messages[start:]
        if estimate_tokens(view) <= budget:
            return view
    return messages[starts[-1] :] if starts else messages


def _spoken(message: JSON) -> bool:
    """A user turn that opens with what the person said (a valid first entry), not with results."""
    content = message["content"]
    return isinstance(content, str) or (bool(content) and content[0].get("type") != "tool_result")


def trimmed(messages: list[JSON], budget: int) -> list[JSON]:
    """`messages` itself when it fits; else the first user turn, then the newest whole rounds that fit.

    The list alternates user (even index) and assistant (odd index) turns, so a cut drops
    `messages[1:k]` for an odd k: what follows the first turn starts with an assistant turn
    whose results, if any, come right after it. Cuts stop at the turn in progress: the person's
    current question is never dropped either.
    """
    current = max((i for i, m in enumerate(messages) if m["role"] == "user" and _spoken(m)), default=0)
    last_cut = current - 1 if current >= 2 else len(messages) - 2
    view = messages
    for k in range(3, last_cut + 1, 2):  # each cut drops messages[1:k]: whole rounds only
        if estimate_tokens(view) <= budget:
            break
        view = messages[:1] + messages[k:]
    return view  # when nothing fits, the smallest valid view: the API will say the context is exceeded


TRIMS = {"first_turn": trimmed, "newest": newest_only}


def smallest_budget(system: Any, tools: Any, messages: list[JSON]) -> int:
    """The smallest context budget a request for `messages` can keep to: the system prompt, the tool
    definitions and the smallest view `trimmed` can make (the first user turn and the turn in progress)."""
    return estimate_tokens(system) + estimate_tokens(tools) + estimate_tokens(trimmed(messages, 0))
