"""Where two JSON values first differ, as a path a person can read: `messages[3].content[0].input.start`."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any


def first_difference(
    expected: Any, actual: Any, path: str = "", labels: tuple[str, str] = ("recorded", "sent")
) -> str | None:
    """None when equal; otherwise the first differing path and the two values, named by `labels`."""
    first, second = labels
    if isinstance(expected, Mapping) and isinstance(actual, Mapping):
        for key in [*expected, *(k for k in actual if k not in expected)]:
            where = f"{path}.{key}" if path else str(key)
            if key not in expected or key not in actual:
                return f"{where} (only {second if key in actual else first})"
            found = first_difference(expected[key], actual[key], where, labels)
            if found:
                return found
        return None
    if isinstance(expected, list) and isinstance(actual, list):
        for index, (a, b) in enumerate(zip(expected, actual, strict=False)):
            found = first_difference(a, b, f"{path}[{index}]", labels)
            if found:
                return found
        if len(expected) != len(actual):
            return f"{path} ({first} {len(expected)} items, {second} {len(actual)})"
        return None
    if type(expected) is not type(actual) or expected != actual:
        return f"{path or '(the whole value)'}: {first} {brief(expected)}, {second} {brief(actual)}"
    return None


def brief(value: object, limit: int = 80) -> str:
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError):
        text = repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."
