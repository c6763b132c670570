"""Where a trace comes from: a stored conversation, a cassette, or a `--dump-array-file`.

Each reader turns its source into `Exchange`s and `assemble`s them. A cassette and a dump carry every
request body as it was sent; a stored conversation keeps the list and, beside it, each reply's usage and
request size (migration m007_replies), so its requests are the list's prefixes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml
from sqlalchemy import Connection

from scheduler_agent.agent.errors import AgentError, too_deeply_nested
from scheduler_agent.agent.types import JSON
from scheduler_agent.api import sse
from scheduler_agent.playback.cassette_file import METADATA_KEY
from scheduler_agent.storage import conversations
from scheduler_agent.view.trace import Exchange, Trace, assemble

SCRIPTED = "The replies were scripted, so their token counts are estimates (about four bytes a token), marked ≈."
NO_USAGE = "A dump holds no replies, so every token count is an estimate (about four bytes a token), marked ≈."


def from_conversation(conn: Connection, cid: int) -> Trace:
    """A stored conversation: request i sent the list's first `position` entries (the store keeps no trim)."""
    record, messages = conversations.load(conn, cid)
    context = record.context
    exchanges = []
    for reply in conversations.replies(conn, cid):
        if reply.appended and reply.position < len(messages):
            body: JSON | None = {"content": messages[reply.position]["content"]}
        else:
            body = dict(reply.body) if reply.body else {}
        body = {**(body or {}), "usage": reply.usage, "stop_reason": reply.stop_reason}
        exchanges.append(
            Exchange(
                messages[: reply.position],
                context.system,
                context.tools,
                reply.model,
                reply.request_bytes,
                body,
            )
        )
    notes = [
        f"Conversation {record.id}, started {record.created_at}, {len(messages)} entries, {context.model}.",
        "The store keeps the list, the system prompt and tools in force now, and each reply's usage; a context "
        "budget's trim is not stored, so each request is shown as the list's prefix it was cut from.",
    ]
    if not exchanges and messages:
        notes.append("This conversation has no stored replies (it was stored before replies were kept).")
    return assemble(exchanges, title=f"conversation {record.id}", notes=notes, rest=messages)


def from_cassette(path: Path) -> Trace:
    data = _yaml(path)
    interactions = data.get("interactions") if isinstance(data, Mapping) else None
    if not isinstance(interactions, list):
        raise AgentError(f'{path} is not a cassette: it has no "interactions" list')
    setup = _get(data, "metadata", METADATA_KEY) or {}
    scripted = isinstance(setup, Mapping) and setup.get("replies") == "scripted"
    exchanges = []
    for number, interaction in enumerate(interactions, start=1):
        body = _body(interaction, "request")
        if not isinstance(body, Mapping) or not isinstance(body.get("messages"), list):
            raise AgentError(f'{path}: request {number} has no "messages" array; is it a scheduler-agent cassette?')
        reply = _body(interaction, "response") or _streamed(interaction)
        status = _get(interaction, "response", "status", "code") or 200
        problem = None
        if status != 200 or not isinstance(reply, Mapping) or reply.get("type") == "error":
            error = reply.get("error", {}) if isinstance(reply, Mapping) else {}
            problem = f"HTTP {status} {error.get('type', '')}".strip()
            reply = None
        exchanges.append(
            Exchange(
                body["messages"],
                body.get("system"),
                body.get("tools"),
                body.get("model"),
                _encoded_size(interaction, body),
                dict(reply) if reply else None,
                scripted,
                problem,
                dict(body),
            )
        )
    title = setup.get("title", path.stem) if isinstance(setup, Mapping) else path.stem
    notes = [f"Cassette {path.name}: {len(exchanges)} requests. " + (SCRIPTED if scripted else "")]
    if isinstance(setup, Mapping) and setup.get("lesson"):
        notes.append(f"What it shows: {setup['lesson']}")
    return assemble(exchanges, title=str(title), notes=notes)


def from_dump(path: Path) -> Trace:
    exchanges = []
    for number, record in enumerate(_json_lines(path), start=1):
        messages = record.get("messages") if isinstance(record, Mapping) else None
        if not isinstance(messages, list):
            raise AgentError(f'{path}: line {number} is not a dump record: it has no "messages" array')
        body = record.get("request") if isinstance(record.get("request"), Mapping) else None
        exchanges.append(
            Exchange(
                messages,
                body.get("system") if body else None,
                body.get("tools") if body else None,
                body.get("model") if body else None,
                body=dict(body) if body else None,
            )
        )
    notes = [f"Dump {path.name}: {len(exchanges)} requests. {NO_USAGE}"]
    return assemble(exchanges, title=path.name, notes=notes)


def from_file(path: Path) -> Trace:
    """A cassette (.yaml/.yml) or a dump (JSON lines), by its name and content."""
    if not path.is_file():
        raise AgentError(f"No file at {path}: give a conversation id, a cassette (.yaml) or a --dump-array-file")
    try:
        return from_cassette(path) if path.suffix.lower() in (".yaml", ".yml") else from_dump(path)
    except RecursionError:  # the parsers recurse once a level
        raise too_deeply_nested(path, "a conversation id, a cassette (.yaml) or a --dump-array-file") from None


def _encoded_size(interaction: Any, body: Mapping[str, Any]) -> int:
    raw = _get(interaction, "request", "body")
    if isinstance(raw, str):
        return len(raw.encode())
    return len(json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode())


def _get(value: Any, *keys: str) -> Any:
    """`value[k1][k2]...`, or None where a level is missing or not a mapping (a hand-edited cassette)."""
    for key in keys:
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def _yaml(path: Path) -> Any:
    try:
        return yaml.safe_load(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"Cannot read {path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise AgentError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None


def _json_lines(path: Path) -> list[Any]:
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise AgentError(f"Cannot read {path}: {exc}") from None
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if line.strip():
            try:
                records.append(json.loads(line))
            except ValueError as exc:
                raise AgentError(
                    f"{path}: line {number} is not JSON ({exc}); view reads a conversation id, a cassette (.yaml) "
                    "or a --dump-array-file (one JSON object per line)"
                ) from None
    if not records:
        raise AgentError(f"{path} is empty: view reads a conversation id, a cassette (.yaml) or a --dump-array-file")
    return records


def _body(interaction: Any, side: str) -> Any:
    part = interaction.get(side) if isinstance(interaction, Mapping) else None
    body = part.get("body") if isinstance(part, Mapping) else None
    if side == "response" and isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, Mapping) and set(body) == {"json"}:
        return body["json"]
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return None


def _streamed(interaction: Any) -> Any:
    text = _get(interaction, "response", "body", "string")
    if not isinstance(text, str) or not text.lstrip().startswith("event:"):
        return None
    try:
        return sse.assemble(sse.parse(text))
    except (sse.IncompleteStream, KeyError, IndexError, TypeError):
        return None
