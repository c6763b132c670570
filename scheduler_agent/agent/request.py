"""The request body, built by a pure function: what you see here is what is sent."""

from __future__ import annotations

import json
from collections.abc import Sequence

from scheduler_agent.agent.types import JSON

DEFAULT_MODEL = "claude-sonnet-5-5"
DEFAULT_MAX_ITERATIONS = 10  # model calls per user turn
DEFAULT_MAX_TOKENS = 4096


def build_request(
    *,
    model: str,
    system: str,
    tools: Sequence[JSON],
    messages: Sequence[JSON],
    max_tokens: int = DEFAULT_MAX_TOKENS,
    stream: bool = False,
) -> JSON:
    """The whole body of one `POST /v1/messages`.

    Prompt caching uses one top-level `cache_control` (the API's automatic mode, which
    marks the last cacheable block), so `messages` is exactly the stored list, unmarked.
    Keys are in the order the SDK writes them.
    """
    request: JSON = {
        "max_tokens": max_tokens,
        "messages": list(messages),
        "model": model,
        "cache_control": {"type": "ephemeral"},
    }
    if stream:  # the SDK's stream helper sends "stream": true, between cache_control and system
        request["stream"] = True
    return request | {"system": system, "tools": list(tools)}


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one encoder: json.dumps makes one a call


def encode_text(value: object) -> str:
    """`value` as compact JSON text, as a request carries it (and as the store keeps an entry's content)."""
    return _COMPACT.encode(value)


def encode(body: JSON) -> bytes:
    """The body as bytes on the wire (compact JSON, UTF-8): what a request's size is measured on."""
    return encode_text(body).encode()
