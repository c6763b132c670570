"""What a conversation keeps of its MCP servers, and what a process that goes on with it needs.

A conversation stores each server's name and the tools it offered (`conversations.mcp_servers`, m042), never
the command or URL: a command read from a shared database would run on another person's machine. So a
process that goes on with a stored turn (`resume`, a worker) must be given the same server by name, and
refuses, naming it, when it is not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, TextIO

from sqlalchemy import Connection, text

from scheduler_agent.agent.types import JSON
from scheduler_agent.mcp_client.servers import ServerSpecError, config_path
from scheduler_agent.storage.db import transaction

if TYPE_CHECKING:  # the SDK is imported only where a server is reached
    from scheduler_agent.mcp_client.toolbox import McpServers
    from scheduler_agent.storage.conversations import Context


class MissingServer(ServerSpecError):
    """A stored conversation used an MCP server this process was not given (a usage error, exit 2)."""


def missing(stored: Iterable[str], given: Iterable[str]) -> list[str]:
    """The servers (names) in `stored` that are not among `given`."""
    known = set(given)
    return [name for name in stored if name not in known]


def refuse_missing(stored: Iterable[str], given: Iterable[str], cid: int | None, *, on_a_worker: bool = False) -> None:
    """Refuse to go on with conversation `cid` when a server it used is not among `given` (names): the line
    says what to give again, to this process or (`on_a_worker`) to the workers."""
    lacking = missing(stored, given)
    if not lacking:
        return
    names = ", ".join(repr(name) for name in lacking)
    flags = " ".join(f"--mcp {name}=COMMAND_OR_URL" for name in lacking)
    servers = f"MCP server{'s' if len(lacking) > 1 else ''} {names}"
    if on_a_worker:
        raise MissingServer(
            f"conversation {cid} uses the {servers}, which this worker was not given: start the workers with "
            f"{flags} (or its [servers.NAME] table in mcp.toml)"
        )
    raise MissingServer(
        f"conversation {cid} used the {servers}: give the same {flags} (or its [servers.NAME] table in the config "
        "file) to go on with it"
    )


def given_servers(given: tuple[str, ...], trusted: tuple[str, ...], errlog: TextIO) -> McpServers | None:
    """The servers a process was given (`--mcp`, `--mcp-trust`, mcp.toml), each started when first needed; None,
    without importing the SDK, when there are none (a worker's start-up stays as fast)."""
    if not (given or trusted or config_path().exists()):
        return None
    from scheduler_agent.mcp_client.toolbox import started

    return started(given, trusted, errlog)


def start_turn(servers: McpServers | None) -> None:
    """A new user turn: the servers are asked for their tools again (unless they just were, for this turn)."""
    if servers is not None:
        servers.start_turn()


def offered(servers: McpServers | None) -> dict[str, list[JSON]]:
    """What a conversation stores of its servers (`McpServers.stored`); nothing when it has none."""
    return servers.stored() if servers is not None else {}


def go_on_with(context: Context | None, servers: McpServers | None, cid: int | None) -> None:
    """A stored turn goes on with the MCP servers it used, given again by name, and with the tools they offered
    then (what its requests were sent, routed as they were); refused, naming a server, when one is not given."""
    stored = context.mcp if context is not None else {}
    refuse_missing(stored, servers.specs if servers is not None else (), cid)
    if servers is not None:
        servers.adopt(stored)


def list_and_store(conn: Connection, cid: int, servers: McpServers, taken: Iterable[str] = ()) -> dict[str, list[JSON]]:
    """List every server's tools now and store them with conversation `cid`: for a worker's activity, so that
    the workflow's steps read the stored list (`McpServers.adopt`) and it stays deterministic. The request's
    tools (the context's) become the calendar's and these. Returns what was stored. `taken`: names an MCP tool's
    name as sent must differ from, besides the calendar's tools stored with the conversation."""
    own = _own_tools(conn, cid)
    servers.list_tools({*taken, *(tool["name"] for tool in own)})
    offered = servers.stored()
    store_offered(conn, cid, offered, [*own, *servers.definitions])
    return offered


def stored_servers(conn: Connection, cid: int) -> dict[str, list[JSON]]:
    """The servers conversation `cid` uses, each with the tools it offered (`{}`: none), read alone."""
    import json

    row = conn.execute(text("SELECT mcp_servers FROM conversations WHERE id = :cid"), {"cid": cid}).fetchone()
    return json.loads(row[0]) if row is not None else {}


def _own_tools(conn: Connection, cid: int) -> list[JSON]:
    """The tools stored with conversation `cid` that are not an MCP server's: the calendar's."""
    import json

    row = conn.execute(text("SELECT tools, mcp_servers FROM conversations WHERE id = :cid"), {"cid": cid}).fetchone()
    servers: dict[str, list[JSON]] = json.loads(row[1]) if row is not None else {}
    theirs = {tool["sent_as"] for tools in servers.values() for tool in tools}
    return [tool for tool in (json.loads(row[0]) if row is not None else []) if tool["name"] not in theirs]


def store_offered(
    conn: Connection, cid: int, offered: Mapping[str, list[JSON]], tools: list[JSON] | None = None
) -> None:
    """Store what the servers offered with conversation `cid`, and `tools` as its request's tools (if given)."""
    from scheduler_agent.agent.request import encode_text

    with transaction(conn):
        conn.execute(
            text("UPDATE conversations SET mcp_servers = :mcp_servers WHERE id = :cid"),
            {"mcp_servers": encode_text(dict(offered)), "cid": cid},
        )
        if tools is not None:
            kept = {"tools": encode_text(tools), "cid": cid}
            conn.execute(text("UPDATE conversations SET tools = :tools WHERE id = :cid"), kept)
