"""The servers' tools beside the calendar's: listed at the start of a turn, sent as `NAME__tool`, approved first.

A tool's name as sent is `SERVER__TOOL`, rewritten to fit the API's tool-name pattern when it does not (a
character outside `[a-zA-Z0-9_-]` becomes `_`; a name past 64 characters is cut and given a short hash),
and mapped back when the model calls it. Every MCP tool is asked about before it runs, as a booking is,
unless `--yes` approves them all, or its server is trusted and the tool is annotated read-only (the MCP
specification calls annotations untrusted hints: only the person's trust makes them count).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterable, Mapping, Set
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, TextIO

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.toolbox import Previewing
from scheduler_agent.agent.types import JSON
from scheduler_agent.mcp_client.servers import ServerSpec, servers_for

if TYPE_CHECKING:  # the MCP SDK (about 1.3 s of imports) loads only when a run has a server
    from scheduler_agent.mcp_client.connection import ServerConnection

MAX_NAME = 64  # the API's tool names: ^[a-zA-Z0-9_-]{1,64}$


@dataclass(frozen=True)
class Offered:
    """One tool a server offered, as the conversation stores it (`stored`) and the API is sent it (`definition`)."""

    server: str
    tool: str  # its name on the server
    sent_as: str  # its name in the request
    read_only: bool  # annotated read-only (a hint: it counts only for a trusted server)
    description: str
    input_schema: JSON

    @property
    def definition(self) -> JSON:
        said = f" {self.description}" if self.description else ""
        return {
            "name": self.sent_as,
            "description": f"(the MCP server {self.server!r}'s tool {self.tool!r}){said}",
            "input_schema": self.input_schema,
        }

    def stored(self) -> JSON:
        return {
            "name": self.tool,
            "sent_as": self.sent_as,
            "read_only": self.read_only,
            "description": self.description,
            "input_schema": self.input_schema,
        }


def api_name(server: str, tool: str, taken: set[str]) -> str:
    """`server__tool`, made to fit the API's pattern and to differ from every name in `taken`."""
    name = re.sub(r"[^a-zA-Z0-9_-]", "_", f"{server}__{tool}")
    if len(name) > MAX_NAME or name in taken:
        digest = hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:8]
        name = f"{name[: MAX_NAME - 9]}_{digest}"
    return name


class McpServers:
    """The servers of a run, each connected when first needed, and the tools they offered this turn."""

    def __init__(
        self,
        specs: list[ServerSpec],
        errlog: TextIO | None = None,
        connections: Mapping[str, ServerConnection] | None = None,  # shared with another set (`sharing`)
    ) -> None:
        from scheduler_agent.mcp_client.connection import ServerConnection

        self.specs = {spec.name: spec for spec in specs}
        shared = connections or {}
        self.connections = {spec.name: shared.get(spec.name) or ServerConnection(spec, errlog) for spec in specs}
        self.offered: dict[str, Offered] = {}  # by the name sent
        self.listed = False
        self.taken: Set[str] = frozenset()  # the calendar's tool names, which a name sent must differ from
        self.fresh = False  # listed for a turn that has not started yet (the first turn's, by `definitions`)

    def list_tools(self, taken: Set[str] = frozenset()) -> None:
        """Ask every server for its tools now (the start of a turn); `taken`: the calendar's tool names."""
        offered: dict[str, Offered] = {}
        self.taken = taken
        names = set(taken)
        for server, connection in self.connections.items():
            for tool in connection.list_tools():
                sent_as = api_name(server, tool.name, names)
                names.add(sent_as)
                read_only = tool.annotations is not None and tool.annotations.read_only_hint is True
                offered[sent_as] = Offered(
                    server, tool.name, sent_as, read_only, tool.description or "", dict(tool.input_schema)
                )
        self.offered, self.listed, self.fresh = offered, True, True

    def adopt(self, stored: Mapping[str, list[JSON]]) -> None:
        """Use the tools a conversation stored (a resumed turn sends and routes what it was sent), not a new list."""
        self.offered = {
            tool["sent_as"]: Offered(
                server, tool["name"], tool["sent_as"], tool["read_only"], tool["description"], tool["input_schema"]
            )
            for server, tools in stored.items()
            if server in self.specs
            for tool in tools
        }
        self.listed = True

    def stored(self) -> dict[str, list[JSON]]:
        """Each server's name and the tools it offered (never its command): what the conversation keeps."""
        kept: dict[str, list[JSON]] = {name: [] for name in self.specs}
        for offered in self.offered.values():
            kept[offered.server].append(offered.stored())
        return kept

    @property
    def definitions(self) -> list[JSON]:
        return [offered.definition for offered in self.offered.values()]

    def trusted_read_only(self, offered: Offered) -> bool:
        return offered.read_only and self.specs[offered.server].trusted

    def start_turn(self) -> None:
        """A new user turn: the servers are asked for their tools again (unless they just were, for this turn)."""
        if not self.fresh:
            self.list_tools(self.taken)
        self.fresh = False

    def toolbox(self, inner: Previewing, approve_all: bool = False) -> McpToolbox:
        """`inner` (the calendar's tools) with these servers' beside them; `approve_all`: `--yes`."""
        return McpToolbox(inner, self, approve_all)

    def sharing(self, names: Iterable[str], trusted: Iterable[str] = ()) -> McpServers:
        """The servers `names` of these, on the same connections, with tools of their own: what one step of a
        worker's turn uses (the worker's servers serve every turn). `trusted`: trusted for it besides."""
        also = set(trusted)
        specs = [replace(self.specs[name], trusted=self.specs[name].trusted or name in also) for name in names]
        return McpServers(specs, connections=self.connections)

    def close(self) -> None:
        for connection in self.connections.values():
            connection.close()


class McpToolbox:
    """A Previewing toolbox: `inner` (the calendar's tools) and the servers' tools, each call routed by name."""

    def __init__(self, inner: Previewing, servers: McpServers, approve_all: bool = False) -> None:
        self.inner, self.servers, self.approve_all = inner, servers, approve_all
        self.deadline_seconds = inner.deadline_seconds

    @property
    def definitions(self) -> list[JSON]:
        own = self.inner.definitions
        if not self.servers.listed:  # the first turn's tools, listed when first needed
            self.servers.list_tools({d["name"] for d in own})
        return [*own, *self.servers.definitions]

    def run(self, name: str, arguments: Mapping[str, Any], tool_use_id: str, deadline: Deadline) -> str | list[JSON]:
        offered = self.servers.offered.get(name)
        if offered is None:
            return self.inner.run(name, arguments, tool_use_id, deadline)
        return self.servers.connections[offered.server].call(offered.tool, arguments, deadline)

    def preview(self, name: str, arguments: Mapping[str, Any], tool_use_id: str) -> str | None:
        offered = self.servers.offered.get(name)
        if offered is None:
            return self.inner.preview(name, arguments, tool_use_id)
        if self.approve_all or self.servers.trusted_read_only(offered):
            return None
        shown = json.dumps(dict(arguments), ensure_ascii=False)
        return f"Run {offered.tool!r} on the MCP server {offered.server!r} with {shown}"

    def side_effect_of(self, name: str, tool_use_id: str) -> str | None:
        offered = self.servers.offered.get(name)
        if offered is None:
            return self.inner.side_effect_of(name, tool_use_id)
        if self.servers.trusted_read_only(offered):
            return None
        return (
            f"Whether it changed anything is not known: the MCP server {offered.server!r} did not say. Look with a "
            "tool that only reads, or ask the user, before calling it again."
        )


def started(given: tuple[str, ...], trusted: tuple[str, ...], errlog: TextIO) -> McpServers | None:
    """The servers of a run (`servers_for`), each connected when first needed; None when there are none (the SDK
    is then never imported). A stdio server's stderr goes to `errlog`."""
    specs = servers_for(given, trusted)
    if not specs:
        return None
    return McpServers(specs, errlog)
