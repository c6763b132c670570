"""`-o/--option KEY VALUE`: request keys a person sets for one turn, each checked against its type for the API
version in use before anything is sent.

VALUE is read as JSON when it parses (`777` a number, `'["END"]'` a list, `'{"type": "adaptive"}'` an object),
else taken as a string. The keys are those `POST /v1/messages` takes on `2026-10-21` besides the ones the agent
sets itself; `temperature`, `top_p` and `top_k` are gone in that version and are refused by name.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from scheduler_agent.agent.errors import InputError

API_VERSION = "2026-10-21"
REMOVED = ("temperature", "top_p", "top_k")  # removed in API_VERSION: the API answers 400
SET_BY_THE_AGENT = {  # key -> how a person sets it instead
    "model": "-m/--model",
    "messages": "the conversation itself",
    "system": "prompts/system.md",
    "tools": "prompts/tools.json",
    "stream": "--no-stream",
    "cache_control": "nothing: the agent caches the prompt itself",
}


class OptionError(InputError):
    """An -o key or value the API version in use does not take: a usage problem, refused before sending."""

    exit_code = 2


Check = Callable[[Any], bool]


def _integer(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _strings(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(item, str) and item for item in value)


def _one_of(*choices: str) -> Check:
    return lambda value: value in choices


def _object(required: dict[str, Check], optional: dict[str, Check]) -> Check:
    def check(value: Any) -> bool:
        if not isinstance(value, dict) or not set(required) <= set(value) <= set(required) | set(optional):
            return False
        return all({**required, **optional}[key](item) for key, item in value.items())

    return check


_DISPLAY = {"display": _one_of("summarized", "omitted")}


def _thinking(value: Any) -> bool:
    kind = value.get("type") if isinstance(value, dict) else None
    shapes: dict[str, Check] = {
        "enabled": _object({"type": _one_of("enabled"), "budget_tokens": _integer}, _DISPLAY),
        "adaptive": _object({"type": _one_of("adaptive")}, _DISPLAY),
        "disabled": _object({"type": _one_of("disabled")}, {}),
        "between_tools": _object({"type": _one_of("between_tools")}, {}),
    }
    return isinstance(kind, str) and kind in shapes and shapes[kind](value)


KEYS: dict[str, tuple[str, Check]] = {  # key -> (what it takes, its check), for API_VERSION
    "max_tokens": ("an integer of at least 1, e.g. 777", _integer),
    "stop_sequences": ("a list of strings, e.g. '[\"END\"]'", _strings),
    "thinking": (
        '{"type": "enabled", "budget_tokens": N}, {"type": "adaptive"}, {"type": "disabled"} or '
        '{"type": "between_tools"}',
        _thinking,
    ),
    "output_config": (
        '{"effort": "low"|"medium"|"high"|"xhigh"|"max"}',
        _object({}, {"effort": _one_of("low", "medium", "high", "xhigh", "max"), "format": lambda v: True}),
    ),
    "metadata": ('{"user_id": "..."}', _object({}, {"user_id": lambda v: isinstance(v, str)})),
    "service_tier": ("auto or standard_only", _one_of("auto", "standard_only")),
    "speed": ("standard or fast", _one_of("standard", "fast")),
    "inference_geo": ("a string, e.g. us", lambda v: isinstance(v, str) and bool(v)),
}


def read_value(text: str) -> Any:
    """VALUE as JSON when it parses, else the text itself."""
    try:
        return json.loads(text)
    except ValueError:
        return text


def checked_options(pairs: Iterable[tuple[str, str]]) -> dict[str, Any]:
    """`-o KEY VALUE` pairs as request keys (a later pair for a key wins); OptionError naming what is wrong."""
    options: dict[str, Any] = {}
    taken = ", ".join(KEYS)
    for key, text in pairs:
        if key in REMOVED:
            raise OptionError(f"-o {key}: the API ({API_VERSION}) has removed {key}; the keys taken are {taken}")
        if key in SET_BY_THE_AGENT:
            raise OptionError(f"-o {key}: scheduler-agent sets {key} itself (use {SET_BY_THE_AGENT[key]})")
        if key not in KEYS:
            raise OptionError(f"-o {key}: not a request key the API ({API_VERSION}) takes; the keys taken are {taken}")
        value = read_value(text)
        what, check = KEYS[key]
        if not check(value):
            raise OptionError(f"-o {key} {text}: {key} takes {what}")
        options[key] = value
    return options
