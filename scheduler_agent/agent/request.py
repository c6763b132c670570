"""The request body, built by a pure function: what you see here is what is sent."""

from __future__ import annotations

import json
import json.encoder
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

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
    copy: Callable[[Sequence[JSON]], list[JSON]] = list,
    options: Mapping[str, Any] | None = None,
) -> JSON:
    """The whole body of one `POST /v1/messages`.

    The body holds its own list of `messages`' entries, made by `copy`: whoever keeps the body keeps the
    array as it was sent, as the loop goes on appending to its own list. A session passes a copy that is
    brought up to date in place when no one kept the last one (agent/growth.py, `SentList`).

    Prompt caching uses one top-level `cache_control` (the API's automatic mode, which
    marks the last cacheable block), so `messages` is exactly the stored list, unmarked.
    Keys are in the order the SDK writes them: `options` (a person's `-o` keys, agent/options.py) among the
    optional ones, alphabetically.
    """
    request: JSON = {
        "max_tokens": max_tokens,
        "messages": copy(messages),
        "model": model,
        "cache_control": {"type": "ephemeral"},
    }
    if stream:  # the SDK's stream helper sends "stream": true, between cache_control and system
        request["stream"] = True
    request |= {"system": system, "tools": list(tools)}
    if not options:
        return request
    optional = {key: value for key, value in request.items() if key not in _FIRST} | dict(options)
    return {key: request[key] for key in _FIRST} | dict(sorted(optional.items()))


_FIRST = ("max_tokens", "messages", "model")  # the SDK writes these first, then the others alphabetically


_COMPACT = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))  # one encoder: json.dumps makes one a call
# `_COMPACT.encode` makes a new C encoder at each call (json/encoder.py, `iterencode`): this one is made once, with
# the same settings, and is what a session calls several times an iteration (issue 14); None where there is no C.
# It keeps no record of the containers it is inside (that record would be shared by threads): a cycle is found by
# the interpreter's recursion limit instead, and is the same ValueError.
_MAKE_C_ENCODER = getattr(json.encoder, "c_make_encoder", None)  # not in the typeshed stubs
_C_COMPACT = (
    _MAKE_C_ENCODER(None, _COMPACT.default, json.encoder.encode_basestring, None, ":", ",", False, False, True)
    if _MAKE_C_ENCODER is not None
    else None
)


def encode_text(value: object) -> str:
    """`value` as compact JSON text, as a request carries it (and as the store keeps an entry's content)."""
    if _C_COMPACT is None:
        return _COMPACT.encode(value)
    try:
        return "".join(_C_COMPACT(value, 0))
    except RecursionError:
        raise ValueError("Circular reference detected (or nested too deep to encode)") from None


def encode(body: JSON) -> bytes:
    """The body as bytes on the wire (compact JSON, UTF-8): what is sent, and what a request's size is measured on.

    A `Request` whose entries' texts are known has them joined into the list, not encoded again: the
    same bytes (tests/test_request_wire.py), at a join's cost instead of an encoding's. The body is written
    by one join of the entries' texts, the fields before and after the list joined onto the first and the
    last: at 10,000 entries the body is megabytes, and each whole copy of it (joining the list, then the
    fields around it) cost as much as the join."""
    texts = body.texts(body["messages"]) if type(body) is Request else None
    if texts is None:
        return encode_text(body).encode()
    joined, count = (texts.joined, texts.joined_count) if type(texts) is Written else (bytearray(), 0)
    before: list[str] = []  # the fields before the list, then (once it is passed) those after it
    after: list[str] = []
    entries: list[str] | None = None
    for key, value in body.items():
        if key == "messages":
            rest = zip(value[count:], texts[count:], strict=True)
            entries = [encode_text(entry) if text is None else text for entry, text in rest]
        else:
            (before if entries is None else after).append(f"{encode_text(key)}:{encode_text(value)}")
    head = "{" + "".join(f"{field}," for field in before) + '"messages":['
    tail = "]" + "".join(f",{field}" for field in after) + "}"
    if count:  # the entries already joined, then the rest: one copy of the megabytes, into the body
        between = b"," if entries else b""
        return b"".join((head.encode(), joined, between, ",".join(entries or ()).encode(), tail.encode()))
    if not entries:
        return (head + tail).encode()
    entries[0] = head + entries[0]
    entries[-1] += tail
    return ",".join(entries).encode()


class Written(list[str | None]):
    """Entries' texts (None where not known) whose first `joined_count` are also kept joined and encoded, as
    `joined` (`",".join(self[:joined_count]).encode()`): `encode` writes those bytes into the body instead of
    joining the megabytes of a long list again on every request. Whoever keeps one keeps the two in step."""

    __slots__ = ("joined", "joined_count")

    def __init__(self, texts: Iterable[str | None] = ()) -> None:
        super().__init__(texts)
        self.joined = bytearray()
        self.joined_count = 0


Texts = Callable[[Sequence[Any]], Sequence[str | None] | None]  # the list's entries as texts, if known


class Request(dict[str, Any]):
    """A request body, a plain dict to every reader, that can find its entries' texts where they are kept.

    `texts(messages)` returns each entry as compact JSON text, as `encode` writes it (None where not known),
    when `messages` holds the entries it knows, in order; else None (then the list is encoded). A session's
    texts are its EntryTexts, kept as the list grows (agent/entry_texts.py). A copy is a plain dict."""

    def __init__(self, body: JSON, texts: Texts) -> None:
        super().__init__(body)
        self.texts = texts

    def __reduce__(self) -> tuple[Any, ...]:
        return dict, (dict(self),)

    def __deepcopy__(self, memo: dict[int, Any]) -> JSON:
        from copy import deepcopy

        return deepcopy(dict(self), memo)


_ROLES = {role: encode_text(role) for role in ("user", "assistant")}
_FRAME = len('{"role":,"content":}')  # what `encode` writes around an entry's role and content


def framed(role: str, content: str) -> str:
    """The entry `{"role": role, "content": …}` as `encode` writes it, given its content's text."""
    return f'{{"role":{_ROLES.get(role) or encode_text(role)},"content":{content}}}'


def framed_size(role: str, content: str) -> int:
    """`len(framed(role, content).encode())`, without writing it."""
    return _FRAME + utf8_length(_ROLES.get(role) or encode_text(role)) + utf8_length(content)


def utf8_length(text: str) -> int:
    """`len(text.encode())`, without making the bytes of a text that is ASCII (most are)."""
    return len(text) if text.isascii() else len(text.encode())


def entry_text(entry: Any, content: str | None) -> str:
    """`encode_text(entry)`, written from its content's text for an entry that is a role, then a content."""
    if content is None or type(entry) is not dict or len(entry) != 2 or next(iter(entry)) != "role":
        return encode_text(entry)
    role = entry["role"]
    if "content" not in entry or type(role) is not str:
        return encode_text(entry)
    return framed(role, content)
