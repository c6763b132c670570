"""Server-sent events of a streamed Messages API reply, assembled into the message they make. No SDK here.

The assembled message is plain JSON in the API's own key order: the same body the API sends for
the same reply unstreamed. model_api.py uses it on the wire; lint uses it on recorded streams.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from scheduler_agent.agent.types import JSON

OnText = Callable[[str], None]


class IncompleteStream(Exception):
    """The events do not make a whole message (they ended before `message_stop`, or a piece is not JSON)."""


def assemble(events: Iterable[tuple[str, JSON]], on_text: OnText | None = None) -> JSON:
    """The message a stream of (event name, data) builds, as plain JSON in the API's own key order.

    `message_start` carries the message with empty content; each block arrives whole but empty in
    `content_block_start` (text `""`, input `{}`) and is filled by its deltas: text appended, tool
    input as pieces of JSON parsed once the block stops. `message_delta` sets `stop_reason` and the
    final `usage` counts (cumulative: they replace the start's). Keys keep the order they came in, so
    the result equals the body the API sends for the same reply unstreamed.
    """
    message: JSON | None = None
    partial_json: dict[int, list[str]] = {}
    texts: dict[int, list[str]] = {}  # text pieces per block, joined once: appending each would be quadratic
    for name, data in events:
        if name == "message_start":
            message = copy.deepcopy(data["message"])  # built up in place: the events stay as they came
            message["content"] = list(message.get("content") or [])
            continue
        if message is None:
            raise IncompleteStream(f"{name} before message_start")
        content: list[JSON] = message["content"]
        if name == "content_block_start":
            content.append(copy.deepcopy(data["content_block"]))
        elif name == "content_block_delta":
            block, delta = content[data["index"]], data["delta"]
            match delta.get("type"):
                case "text_delta":
                    texts.setdefault(data["index"], [block.get("text") or ""]).append(delta["text"])
                    if on_text is not None:
                        on_text(delta["text"])
                case "input_json_delta":
                    partial_json.setdefault(data["index"], []).append(delta["partial_json"])
                case "thinking_delta":
                    block["thinking"] = block.get("thinking", "") + delta["thinking"]
                case "signature_delta":
                    block["signature"] = delta["signature"]
                case "citations_delta":
                    block["citations"] = [*(block.get("citations") or []), delta["citation"]]
        elif name == "content_block_stop":
            _join_text(content, texts, data["index"])
            pieces = "".join(partial_json.pop(data["index"], []))
            if pieces:
                try:
                    content[data["index"]]["input"] = json.loads(pieces)
                except ValueError as exc:
                    raise IncompleteStream(f"the input of block {data['index']} is not JSON: {exc}") from exc
        elif name == "message_delta":
            for key, value in data.get("delta", {}).items():
                _set_before(message, key, value, "usage")
            usage = message.setdefault("usage", {})
            usage.update({key: value for key, value in data.get("usage", {}).items() if value is not None})
        elif name == "message_stop":
            for index in list(texts):
                _join_text(message["content"], texts, index)
            return message
    raise IncompleteStream("the stream ended before message_stop")


def _join_text(content: list[JSON], texts: dict[int, list[str]], index: int) -> None:
    pieces = texts.pop(index, None)
    if pieces is not None:
        content[index]["text"] = "".join(pieces)


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
