"""One connected MCP server: its tools listed, a call made under the call's deadline, its result as content.

The connection lives in the portal's thread (`portal.py`): `open` enters the SDK's `Client` there and keeps it
open until `close` (or the process's exit). A call that fails is a `ToolError` whose text the model can act
on; a server that died answers every later call at once with the same text.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Mapping
from contextlib import AbstractContextManager, suppress
from typing import Any, TextIO

import anyio
import mcp_types as types
from mcp.client import Client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.shared.exceptions import MCPError

from scheduler_agent.agent.deadline import Deadline, DeadlineExceeded
from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.toolbox import MAX_RESULT_CHARS, ToolError
from scheduler_agent.agent.types import JSON
from scheduler_agent.mcp_client.portal import forget, on_exit, portal
from scheduler_agent.mcp_client.servers import ServerSpec

IMAGE_TYPES = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})  # what the Messages API takes
MAX_IMAGE_CHARS = 1_500_000  # an image's base64 text past this is named, not sent: it is re-sent with every request
# What the connection may raise when the server is gone or broke the protocol; anything else is a bug.
_GONE = (
    MCPError,
    OSError,
    anyio.ClosedResourceError,
    anyio.BrokenResourceError,
    anyio.EndOfStream,
    ExceptionGroup,
)
# Our own secrets are not handed to a server we start: the rest of the environment is (its settings).
_WITHHELD_PREFIXES = ("ANTHROPIC_",)


class ServerUnavailable(AgentError):
    """A server that could not be started or listed at the start of a turn: the person's to fix."""


class ServerConnection:
    """One server, open from `open()` to `close()`; `list_tools` and `call` wait on the portal's thread."""

    def __init__(self, spec: ServerSpec, errlog: TextIO | None = None) -> None:
        self.spec = spec
        self.errlog = errlog  # where a stdio server's stderr goes: the trace's stream
        self.dead: str | None = None  # why every later call fails at once, once the server is gone
        self._client: Client | None = None
        self._context: AbstractContextManager[Client] | None = None
        self._opening = threading.Lock()

    def open(self) -> None:
        if self.spec.url is not None:
            client = Client(self.spec.url)
        else:
            env = {k: v for k, v in os.environ.items() if not k.startswith(_WITHHELD_PREFIXES)}
            command, *args = self.spec.command
            params = StdioServerParameters(command=command, args=args, env=env)
            client = Client(stdio_client(params, errlog=self.errlog or sys.stderr))  # its stderr: the trace
        self._context = portal().wrap_async_context_manager(client)
        try:
            self._client = self._context.__enter__()
        except _GONE as exc:
            self._context = None
            raise ServerUnavailable(
                f"The MCP server {self.spec.name!r} ({self.spec.where}) could not be started: {_reason(exc)}. "
                f"Check its --mcp {self.spec.name}=... value"
            ) from None
        on_exit(self.close)

    def close(self) -> None:
        forget(self.close)
        context, self._context, self._client = self._context, None, None
        if context is not None:
            with suppress(*_GONE):  # it was gone already: nothing is left to close
                context.__exit__(None, None, None)

    def revive(self) -> None:
        """A server that died is started again at its next use (a worker's next turn): closed, its death forgotten."""
        with self._opening:
            if self.dead is not None:
                self.close()
                self.dead = None

    def list_tools(self) -> list[types.Tool]:
        """Every tool the server offers, page after page."""
        client = self._open_client()

        async def listing() -> list[types.Tool]:
            tools: list[types.Tool] = []
            cursor: str | None = None
            while True:
                page = await client.list_tools(cursor=cursor, cache_mode="refresh")
                tools += page.tools
                cursor = page.next_cursor
                if cursor is None:
                    return tools

        try:
            return portal().call(listing)
        except _GONE as exc:
            raise ServerUnavailable(
                f"The MCP server {self.spec.name!r} ({self.spec.where}) did not list its tools: {_reason(exc)}"
            ) from None

    def call(self, tool: str, arguments: Mapping[str, Any], deadline: Deadline) -> str | list[JSON]:
        """The result's content, as a `tool_result` holds it; ToolError for an error result or a dead server,
        DeadlineExceeded when `deadline` passes first."""
        if self.dead is not None:
            raise ToolError(self.dead)
        client = self._open_client()

        async def calling() -> types.CallToolResult | None:
            with anyio.move_on_after(deadline.remaining()):
                return await client.call_tool(tool, dict(arguments))
            return None

        try:
            result = portal().call(calling)
        except _GONE as exc:
            self.dead = (
                f"{tool} on the MCP server {self.spec.name!r} got no answer: the server stopped ({_reason(exc)}). "
                f"Whether it did anything is not known. None of {self.spec.name!r}'s tools can be used in this "
                "conversation until the user starts it again: tell the user, and go on with the other tools."
            )
            raise ToolError(self.dead) from None
        if result is None:
            raise DeadlineExceeded(deadline, f"{tool} on the MCP server {self.spec.name!r}")
        content = result_content(self.spec.name, result)
        if result.is_error:
            said = "\n".join(block["text"] for block in content if block.get("type") == "text")
            raise ToolError(
                f"{tool} on the MCP server {self.spec.name!r} answered with an error. It said: {said or '(nothing)'}\n"
                "Correct the call from what it said, or tell the user."
            )
        return content

    def _open_client(self) -> Client:
        with self._opening:  # a worker's steps share its servers: one of them opens it
            if self._client is None:
                self.open()
            assert self._client is not None
            return self._client


def result_content(server: str, result: types.CallToolResult) -> list[JSON]:
    """Text and images as the API's content blocks; anything else one text line naming it."""
    blocks: list[JSON] = []
    for item in result.content:
        if isinstance(item, types.TextContent):
            blocks.append({"type": "text", "text": item.text})
        elif isinstance(item, types.ImageContent) and item.mime_type in IMAGE_TYPES and not result.is_error:
            if len(item.data) > MAX_IMAGE_CHARS:
                blocks.append(_named(f"an image ({item.mime_type}, {len(item.data)} base64 characters: too large)"))
            else:
                source = {"type": "base64", "media_type": item.mime_type, "data": item.data}
                blocks.append({"type": "image", "source": source})
        elif isinstance(item, types.ImageContent):
            blocks.append(_named(f"an image ({item.mime_type})"))
        elif isinstance(item, types.AudioContent):
            blocks.append(_named(f"audio ({item.mime_type})"))
        elif isinstance(item, types.ResourceLink):
            blocks.append(_named(f"a link to the resource {item.uri}"))
        elif isinstance(item, types.EmbeddedResource):
            blocks.append(_named(f"the embedded resource {item.resource.uri}"))
        else:
            blocks.append(_named(f"a block of type {getattr(item, 'type', type(item).__name__)!r}"))
    if result.structured_content is not None:
        blocks.append(_named("structured content (JSON; the text above carries what the server said in words)"))
    if not blocks:
        blocks.append({"type": "text", "text": f"The MCP server {server!r} answered with no content."})
    return bounded(blocks)


def _named(what: str) -> JSON:
    return {"type": "text", "text": f"[The server also sent {what}, which is not passed on.]"}


def bounded(blocks: list[JSON], limit: int = MAX_RESULT_CHARS) -> list[JSON]:
    """The text blocks within `limit` characters in all (the loop's bound on a result), cut where it runs out."""
    from scheduler_agent.agent.toolbox import cut

    left, kept = limit, []
    for block in blocks:
        if block["type"] != "text":
            kept.append(block)
            continue
        text = block["text"]
        if left <= 0:
            continue
        if len(text) > left:
            text = cut(text, left) if left > 300 else "[The rest of the result was cut: ask for less at once.]"
        kept.append({"type": "text", "text": text})
        left -= len(text)
    return kept


def _reason(exc: BaseException) -> str:
    if isinstance(exc, BaseExceptionGroup):
        return "; ".join(_reason(inner) for inner in exc.exceptions)
    return str(exc) or type(exc).__name__
