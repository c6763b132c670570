"""Server-sent events of a streamed Messages API reply, assembled into the message they make. No SDK here.

The assembled message is plain JSON in the API's own key order: the same body the API sends for
the same reply unstreamed. api/client.py uses it on the wire; lint uses it on recorded streams.
"""

from __future__ import annotations

import copy
import json
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scheduler_agent.agent.types import JSON

OnText = Callable[[str], None]

# The events and deltas the assembler knows (the SDK's own accumulator, `lib/streaming/_messages.py`
# and `_beta_messages.py` of anthropic 2.14.0, handles the same ones).
EVENTS = ("message_start", "content_block_start", "content_block_delta", "content_block_stop", "message_delta")
DELTAS = (
    "text_delta",
    "input_json_delta",
    "thinking_delta",
    "signature_delta",
    "citations_delta",
    "compaction_delta",
)


class IncompleteStream(Exception):
    """The events do not make a whole message: they ended before `message_stop`, a block was still open,
    a piece is not JSON, or a delta is of a type this assembler does not know."""


def assemble(
    events: Iterable[tuple[str, JSON]], on_text: OnText | None = None, *, skipped: Counter[str] | None = None
) -> JSON:
    """The message a stream of (event name, data) builds, as plain JSON in the API's own key order.

    `message_start` carries the message with empty content; each block arrives whole but empty in
    `content_block_start` (text `""`, input `{}`, a compaction's content `null`) and is filled by its
    deltas: text appended, tool input as pieces of JSON parsed once the block stops, a compaction's
    content set. `message_delta` sets `stop_reason` and the final `usage` counts (cumulative: they
    replace the start's). Keys keep the order they came in, so the result equals the body the API
    sends for the same reply unstreamed.

    Forward-compatible where it is safe: an event type it does not know is skipped, like `ping`, and
    counted in `skipped`; a delta type it does not know raises IncompleteStream naming it, since
    dropping it would lose part of a block. A block still open at `message_stop` raises too.
    """
    message: JSON | None = None
    partial_json: dict[int, list[str]] = {}
    open_blocks: set[int] = set()
    for name, data in events:
        if name == "message_stop":
            if message is None:
                raise IncompleteStream("message_stop before message_start")
            _check_closed(message, open_blocks, "at message_stop")
            return message
        if name == "error":
            error = data.get("error") if isinstance(data, dict) else None
            raise IncompleteStream(f"the stream carried an error event: {json.dumps(error)}")
        if name not in EVENTS:
            if skipped is not None:
                skipped[name] += 1
            continue
        try:
            message = _apply(message, name, data, partial_json, open_blocks, on_text)
        except (KeyError, IndexError, TypeError, AttributeError) as exc:
            raise IncompleteStream(f"a {name} event the assembler cannot place ({type(exc).__name__}: {exc})") from exc
    if message is not None:
        _check_closed(message, open_blocks, "when the stream ended")
    raise IncompleteStream("the stream ended before message_stop")


def _apply(
    message: JSON | None,
    name: str,
    data: JSON,
    partial_json: dict[int, list[str]],
    open_blocks: set[int],
    on_text: OnText | None,
) -> JSON:
    """One known event applied to the message so far (the new message for `message_start`)."""
    if name == "message_start":
        message = copy.deepcopy(data["message"])  # built up in place: the events stay as they came
        message["content"] = list(message.get("content") or [])
        return message
    if message is None:
        raise IncompleteStream(f"{name} before message_start")
    content: list[JSON] = message["content"]
    if name == "content_block_start":
        if data["index"] != len(content):
            raise IncompleteStream(f"block {data['index']} started, but {len(content)} blocks came before it")
        content.append(copy.deepcopy(data["content_block"]))
        open_blocks.add(data["index"])
    elif name == "content_block_delta":
        _delta(content, data, partial_json, open_blocks, on_text)
    elif name == "content_block_stop":
        index = data["index"]
        if index not in open_blocks:
            raise IncompleteStream(f"content_block_stop for block {index}, which is not open")
        open_blocks.discard(index)
        pieces = "".join(partial_json.pop(index, []))
        if pieces:
            try:
                content[index]["input"] = json.loads(pieces)
            except ValueError as exc:
                raise IncompleteStream(f"the input of block {index} is not JSON: {exc}") from exc
    elif name == "message_delta":
        for key, value in data.get("delta", {}).items():
            _set_before(message, key, value, "usage")
        for key, value in data.items():  # context_management and the like, beside the delta
            if key not in ("type", "delta", "usage") and value is not None:
                _set_before(message, key, value, "usage")
        usage = message.setdefault("usage", {})
        usage.update({key: value for key, value in data.get("usage", {}).items() if value is not None})
    return message


def _delta(
    content: list[JSON],
    data: JSON,
    partial_json: dict[int, list[str]],
    open_blocks: set[int],
    on_text: OnText | None,
) -> None:
    index, delta = data["index"], data["delta"]
    if index not in open_blocks:
        raise IncompleteStream(f"a delta for block {index}, which is not open")
    block = content[index]
    match delta.get("type"):
        case "text_delta":
            block["text"] = block.get("text", "") + delta["text"]
            if on_text is not None:
                on_text(delta["text"])
        case "input_json_delta":
            partial_json.setdefault(index, []).append(delta["partial_json"])
        case "thinking_delta":
            block["thinking"] = block.get("thinking", "") + delta["thinking"]
        case "signature_delta":
            block["signature"] = delta["signature"]
        case "citations_delta":
            block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        case "compaction_delta":  # the summary arrives whole: it replaces the start's null (the SDK does the same)
            for key, value in delta.items():
                if key != "type":
                    block[key] = value
        case unknown:
            raise IncompleteStream(
                f"block {index} (a {block.get('type')!r} block) got a delta of type {unknown!r}, which this "
                "assembler does not know: the message cannot be assembled without losing part of it"
            )


def _check_closed(message: JSON, open_blocks: set[int], when: str) -> None:
    if open_blocks:
        described = ", ".join(f"{i} ({message['content'][i].get('type')})" for i in sorted(open_blocks))
        raise IncompleteStream(
            f"block{'s' if len(open_blocks) > 1 else ''} {described} still open {when}: the reply was cut off"
        )


def _set_before(target: JSON, key: str, value: Any, anchor: str) -> None:
    """Set `key`; a key the dict lacks goes just before `anchor` (as the unstreamed body orders it)."""
    if key in target or anchor not in target:
        target[key] = value
        return
    items = list(target.items())
    at = [k for k, _ in items].index(anchor)
    target.clear()
    target.update([*items[:at], (key, value), *items[at:]])


def parse(text: str) -> Iterator[tuple[str, JSON]]:
    """(event name, data) for each event of a recorded stream, `ping`s left out."""
    for chunk in text.replace("\r\n", "\n").split("\n\n"):
        name, data = "", []
        for line in chunk.splitlines():
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "event":
                name = value
            elif field == "data":
                data.append(value)
        if name and name != "ping":
            try:
                yield name, json.loads("\n".join(data)) if data else {}
            except ValueError as exc:
                raise IncompleteStream(f"the data of a {name} event is not JSON: {exc}") from exc
