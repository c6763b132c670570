"""A loopback HTTP server that answers `POST /v1/messages` with scripted replies in the API's wire format.

With no API key and no network, this is how cassettes are made honestly: the real loop and
the real SDK send real requests to this server while vcrpy records. Only the replies are
written by hand, and every reply says so in an `x-scripted-reply` header. Token counts in
`usage` are estimates (about four bytes a token), not a tokenizer's.
"""

from __future__ import annotations

import json
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

JSON = dict[str, Any]

SCRIPTED_NOTE = "written by a script, not by a model; usage token counts are estimates"


@dataclass(frozen=True)
class Reply:
    """One scripted answer: an assistant message (status 200) or an API error."""

    content: list[JSON] = field(default_factory=list)
    stop_reason: str = "end_turn"
    status: int = 200
    error_type: str = ""
    error_message: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0  # seconds to wait before answering: a model that takes its time

    def body(self, request: JSON, number: int) -> JSON:
        if self.status != 200:
            error = {"type": self.error_type, "message": self.error_message}
            return {"type": "error", "error": error, "request_id": f"req_scripted{number:03d}"}
        return {
            "id": f"msg_scripted{number:03d}",
            "type": "message",
            "role": "assistant",
            "model": request.get("model", ""),
            "content": self.content,
            "stop_reason": self.stop_reason,
            "stop_sequence": None,
            "stop_details": None,
            "usage": {
                "input_tokens": estimate_tokens(request),
                "output_tokens": estimate_tokens(self.content),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "inference_geo": "global",
                "service_tier": "standard",
            },
        }


def estimate_tokens(value: Any) -> int:
    return max(1, len(json.dumps(value, separators=(",", ":"))) // 4)


def text(value: str) -> JSON:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, arguments: JSON) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


class ScriptedServer:
    """Serves `replies` on 127.0.0.1; `received` keeps every request body it was sent.

    By default the replies are served in order. With `by_length=True` the reply is chosen by the
    request's entry count (1 entry: the first reply, 3: the second, ...), so a conversation that
    a crash interrupted and another process resumed gets the same answer to the same request.
    """

    def __init__(self, replies: list[Reply], *, by_length: bool = False) -> None:
        self.replies = list(replies)
        self.by_length = by_length
        self.received: list[JSON] = []
        self.served: set[int] = set()
        self._lock = threading.Lock()
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    @property
    def unused(self) -> int:
        return len(self.replies) - len(self.served)

    def __enter__(self) -> ScriptedServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: JSON) -> tuple[Reply | None, int]:
        with self._lock:
            self.received.append(request)
            number = (len(request.get("messages", [])) + 1) // 2 if self.by_length else len(self.received)
            if not 1 <= number <= len(self.replies):
                return None, number
            self.served.add(number - 1)
            return self.replies[number - 1], number

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("content-length", "0"))
                request = json.loads(self.rfile.read(length) or b"{}")
                reply, number = server._next(request)
                if reply is None:
                    error = {"type": "invalid_request_error", "message": f"the script has no reply number {number}"}
                    status, body, headers = 500, {"type": "error", "error": error}, {"x-should-retry": "false"}
                else:
                    time.sleep(reply.delay)
                    status, body, headers = reply.status, reply.body(request, number), reply.headers
                payload = json.dumps(body, separators=(",", ":")).encode()
                self.send_response(status)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(payload)))
                self.send_header("request-id", str(body.get("request_id") or f"req_{body.get('id', '')}"))
                self.send_header("x-scripted-reply", SCRIPTED_NOTE)
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.write(payload)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests and the authoring script report what matters."""

        return Handler
