"""A bound on the state at send time: a view of the list that fits a context budget.

Trimming is a view, applied when the request is built and never written to the store. It
cuts only between rounds, never between a call and its result, and always keeps the first
user turn, where standing instructions ("never before 10am") live. Dropping that turn is how
"the agent forgot" happens: the model never saw the rule.
"""

from __future__ import annotations

import json
from typing import Any

JSON = dict[str, Any]


def estimate_tokens(entries: list[JSON]) -> int:
    """About four bytes of JSON a token: an estimate, good enough to keep under a budget."""
    return len(json.dumps(entries, ensure_ascii=False, separators=(",", ":")).encode()) // 4


def trimmed(messages: list[JSON], budget: int) -> list[JSON]:
    """`messages` itself when it fits; else the first user turn plus the newest whole rounds that fit.

    The list alternates user (even index) and assistant (odd index) turns, so the cut drops
    `messages[1:k]` for an odd k: what follows the first turn starts with an assistant turn
    whose results, if any, come right after it.
    """
    view = messages
    for k in range(3, len(messages), 2):  # each cut drops messages[1:k]: whole rounds only
        if estimate_tokens(view) <= budget:
            break
        view = messages[:1] + messages[k:]
    return view  # when nothing fits, the smallest valid view: the API will say the context is exceeded
