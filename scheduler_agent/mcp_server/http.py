"""The server over Streamable HTTP (`--http [HOST:]PORT`), at /mcp.

On a loopback host the SDK's own check against DNS rebinding stays on (a request whose Host or Origin
is not loopback is refused). Any other host is reachable from the network, so it needs a bearer token
(`--token-env VAR`): a request without it, or with another, gets a 401 before the SDK sees it.
"""

from __future__ import annotations

import hmac
import json
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer
    from starlette.types import ASGIApp, Receive, Scope, Send

PATH = "/mcp"


class BearerToken:
    """ASGI middleware: every HTTP request must carry `Authorization: Bearer <token>`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app, self.expected = app, f"Bearer {token}".encode()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http" and not self.authorised(scope):
            body = json.dumps({"error": "unauthorized", "error_description": "a valid bearer token is required"})
            await send(
                {
                    "type": "http.response.start",
                    "status": 401,
                    "headers": [(b"content-type", b"application/json"), (b"www-authenticate", b"Bearer")],
                }
            )
            await send({"type": "http.response.body", "body": body.encode()})
            return
        await self.app(scope, receive, send)

    def authorised(self, scope: Scope) -> bool:
        given = dict(scope.get("headers") or []).get(b"authorization", b"")
        return hmac.compare_digest(given, self.expected)


def serve(app: MCPServer, host: str, port: int, token: str | None) -> None:
    """Serve until stopped (Ctrl-C or SIGTERM); one line on stderr says where."""
    import anyio
    import uvicorn

    http_app: Any = app.streamable_http_app(streamable_http_path=PATH, host=host)  # loopback: the host check
    if token is not None:
        http_app = BearerToken(http_app, token)
    shown = f"[{host}]" if ":" in host else host
    sys.stderr.write(f"scheduler-agent mcp: serving the calendar tools at http://{shown}:{port}{PATH}\n")
    sys.stderr.flush()
    config = uvicorn.Config(http_app, host=host, port=port, log_level="warning", access_log=False, lifespan="on")
    anyio.run(uvicorn.Server(config).serve)
