"""`scheduler-agent mcp`: serve the calendar tools to an MCP client (Claude Code, Claude Desktop, ...).

Over stdio by default: stdout then carries nothing but the protocol, and every notice goes to stderr.
The SDK is imported only when the command runs (mcp_server/).
"""

from __future__ import annotations

import ipaddress
import os
from typing import TYPE_CHECKING

import click

from scheduler_agent.agent.errors import InputError
from scheduler_agent.cli.core import command, examples
from scheduler_agent.cli.edge import person_facing
from scheduler_agent.cli.options import db_option, today_option
from scheduler_agent.storage.db import Location

if TYPE_CHECKING:
    from scheduler_agent.mcp_server.calls import Serving


@command(
    "mcp",
    epilog=examples(
        "scheduler-agent mcp",
        "claude mcp add scheduler -- scheduler-agent mcp",
        "scheduler-agent mcp --http 8765",
        "MCP_TOKEN=$(openssl rand -hex 32) scheduler-agent mcp --http 0.0.0.0:8765 --token-env MCP_TOKEN",
    ),
)
@db_option
@today_option
@click.option("--yes", is_flag=True, help="Book and move without asking (a client without elicitation needs it).")
@click.option("--yes-cancel", "yes_cancel", is_flag=True, help="Cancel without asking, too.")
@click.option(
    "--http",
    "address",
    metavar="[HOST:]PORT",
    help="Serve over Streamable HTTP at http://HOST:PORT/mcp instead of stdio (HOST: 127.0.0.1).",
)
@click.option(
    "--token-env",
    "token_env",
    metavar="VAR",
    help="The environment variable holding the bearer token HTTP clients must send (needed off loopback).",
)
@click.option("--no-invites", "no_invites", is_flag=True, help="A CalDAV calendar sends no invitations.")
@person_facing()
def mcp_command(
    db: Location | None,
    today: str | None,
    yes: bool,
    yes_cancel: bool,
    address: str | None,
    token_env: str | None,
    no_invites: bool,
) -> None:
    """Serve the calendar tools over MCP: stdio by default, or Streamable HTTP with --http."""
    from scheduler_agent.mcp_server.calls import Serving

    endpoint = _endpoint(address, token_env)
    serving = Serving.started_with(db, today, yes, yes_cancel, False if no_invites else None)
    remote = _check_calendar(serving)

    try:
        from scheduler_agent.mcp_server.server import build
    except ImportError as exc:
        if (exc.name or "").split(".")[0] not in ("mcp", "mcp_types"):
            raise
        raise InputError(
            "serving over MCP needs the official MCP SDK, which is not installed: pip install 'scheduler-agent[mcp]'"
        ) from None

    app = build(serving, remote=remote)
    if endpoint is None:
        app.run("stdio")
        return
    from scheduler_agent.mcp_server.http import serve

    serve(app, *endpoint)


def _endpoint(address: str | None, token_env: str | None) -> tuple[str, int, str | None] | None:
    """(host, port, token) for --http; None for stdio. Refuses a host off loopback without a token."""
    if address is None:
        if token_env is not None:
            raise click.UsageError("--token-env is for --http: over stdio the client starts the server itself")
        return None
    parsed = parse_address(address)
    if parsed is None:
        raise click.BadParameter(f"{address!r} is not [HOST:]PORT, e.g. 8765 or 127.0.0.1:8765", param_hint="--http")
    host, port = parsed
    token = None
    if token_env is not None:
        token = os.environ.get(token_env, "")
        if not token.strip():
            raise InputError(
                f"--token-env {token_env}: that environment variable is empty or not set; put the token there"
            )
    elif not is_loopback(host):
        raise click.UsageError(
            f"--http {address} is reachable from the network: give --token-env VAR, a variable holding the bearer "
            "token clients must send, or serve on 127.0.0.1"
        )
    return host, port, token


def is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def parse_address(text: str) -> tuple[str, int] | None:
    """`PORT`, `HOST:PORT` or `[IPv6]:PORT` as (host, port); None when it is none of them."""
    host, _, port = text.rpartition(":")
    host = host.removeprefix("[").removesuffix("]") or "127.0.0.1"
    if not port.isdigit() or not 0 < int(port) < 65536 or any(c.isspace() for c in host):
        return None
    return host, int(port)


def _check_calendar(serving: Serving) -> bool:
    """Open the database once before serving: a path that cannot be opened, or a calendar with no owner, is one
    line now, not an error at each call. True when the calendar is on a CalDAV server."""
    from scheduler_agent.calendar.caldav.connect import load_connection
    from scheduler_agent.calendar.people import get_owner
    from scheduler_agent.cli.database import connect

    conn = connect(serving.db)
    try:
        get_owner(conn)
        return load_connection(conn) is not None
    finally:
        conn.close()
