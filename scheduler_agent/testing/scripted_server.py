"""A loopback HTTP server that answers `POST /v1/messages` with scripted replies in the API's wire format.

With no API key and no network, this is how cassettes are made honestly: the real loop and
the real SDK send real requests to this server while vcrpy records. Only the replies are
written by hand, and every reply says so in an `x-scripted-reply` header. Token counts in
`usage` are estimates (about four bytes a token), not a tokenizer's.

A request with `"stream": true` gets its reply as server-sent events, in the API's wire format:
`message_start`, then per block `content_block_start`, a few `content_block_delta`s (`text_delta`
or `input_json_delta`) and `content_block_stop`, then `message_delta` (`stop_reason`, final
`usage.output_tokens`) and `message_stop`, with a `ping` after the first block starts. Assembled,
the events give exactly the body the same reply has unstreamed. An error reply is plain JSON, as
the API sends errors that come before the stream.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from scheduler_agent.agent.trim import estimate_tokens
from scheduler_agent.agent.types import JSON

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
    # Streamed only: after the first delta, an `event: error` of this type (e.g. "overloaded_error") ends the
    # stream, as the API does when it fails after the 200 was sent. `error_message` is its message.
    midstream_error: str = ""
    chunk_delay: float = 0.0  # streamed only: seconds between events, to watch the text arrive
    # Faults. `stall` seconds after the headers, before the body or the first event (a response that
    # stalls after its headers; `delay` is one that stalls before them). `raw`: this body as it is,
    # with status 200, instead of the JSON (a reply that is not JSON). Streamed, `stall_after` events
    # are sent, then the stream stalls for `stall` seconds.
    stall: float = 0.0
    stall_after: int = 0
    raw: bytes | None = None

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
                "input_tokens": max(1, estimate_tokens({k: v for k, v in request.items() if k != "stream"})),
                "output_tokens": max(1, estimate_tokens(self.content)),
                "cache_creation_input_tokens": 0,
                "cache_read_input_tokens": 0,
                "cache_creation": {"ephemeral_5m_input_tokens": 0, "ephemeral_1h_input_tokens": 0},
                "inference_geo": "global",
                "service_tier": "standard",
            },
        }

    def events(self, request: JSON, number: int) -> list[tuple[str, JSON]]:
        """The reply as the API streams it: (event name, data) pairs that assemble into `body()`."""
        body = self.body(request, number)
        usage = body["usage"]
        start = {**body, "content": [], "stop_reason": None, "stop_sequence": None, "stop_details": None}
        start["usage"] = {**usage, "output_tokens": 1}  # the API counts the first token at message_start
        events: list[tuple[str, JSON]] = [("message_start", {"type": "message_start", "message": start})]
        for index, block in enumerate(body["content"]):
            events.append(("content_block_start", block_start(index, block)))
            if index == 0:
                events.append(("ping", {"type": "ping"}))
            events += [("content_block_delta", delta) for delta in block_deltas(index, block)]
            if self.midstream_error:
                error = {"type": self.midstream_error, "message": self.error_message}
                return [*events, ("error", {"type": "error", "error": error})]
            events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        end = {"stop_reason": body["stop_reason"], "stop_sequence": None, "stop_details": None}
        events.append(
            (
                "message_delta",
                {"type": "message_delta", "delta": end, "usage": {"output_tokens": usage["output_tokens"]}},
            )
        )
        events.append(("message_stop", {"type": "message_stop"}))
        return events


def block_start(index: int, block: JSON) -> JSON:
    """A block as `content_block_start` carries it: its text empty, its input `{}`; keys in the same order."""
    empty = {key: "" if key == "text" else {} if key == "input" else value for key, value in block.items()}
    return {"type": "content_block_start", "index": index, "content_block": empty}


def block_deltas(index: int, block: JSON) -> list[JSON]:
    """The block's text, or its input as compact JSON, in a few pieces."""
    if block.get("type") == "text":
        pieces, kind, key = chunks(block["text"]), "text_delta", "text"
    elif "input" in block:
        pieces, kind, key = chunks(compact(block["input"])), "input_json_delta", "partial_json"
    else:
        return []
    return [{"type": "content_block_delta", "index": index, "delta": {"type": kind, key: piece}} for piece in pieces]


def chunks(value: str, count: int = 3) -> list[str]:
    """`value` cut into `count` pieces at most (at spaces when there are any), none empty."""
    if not value:
        return []
    size = max(1, -(-len(value) // count))
    pieces, start = [], 0
    while start < len(value):
        end = min(len(value), start + size)
        space = value.rfind(" ", start + 1, end + 1) if end < len(value) else -1
        end = space if space > start else end
        pieces.append(value[start:end])
        start = end
    return pieces


def compact(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def sse(name: str, data: JSON) -> bytes:
    """One server-sent event as the API writes it (the API's own ping data has a space after the colon)."""
    payload = '{"type": "ping"}' if name == "ping" else compact(data)
    return f"event: {name}\ndata: {payload}\n\n".encode()


def text(value: str) -> JSON:
    return {"type": "text", "text": value}


def tool_use(call_id: str, name: str, arguments: JSON) -> JSON:
    return {"type": "tool_use", "id": call_id, "name": name, "input": arguments}


class _Server(ThreadingHTTPServer):
    """Says when its loop runs (`serving`), for the start-up deadline."""

    daemon_threads = True  # a handler stalled on purpose never holds up the end of a test
    block_on_close = False

    def __init__(self, address: tuple[str, int], handler: type[BaseHTTPRequestHandler]) -> None:
        super().__init__(address, handler)
        self.serving = threading.Event()

    def service_actions(self) -> None:
        self.serving.set()

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Quiet about a client that hung up (a test's timeout does that to a stalled reply)."""
        import sys

        if not isinstance(sys.exc_info()[1], ConnectionError):
            super().handle_error(request, client_address)


class ScriptedServer:
    """Serves `replies` on 127.0.0.1; `received` keeps every request body it was sent.

    By default the replies are served in order. With `by_length=True` the reply is chosen by the
    request's entry count (1 entry: the first reply, 3: the second, ...), so a conversation that
    a crash interrupted and another process resumed gets the same answer to the same request.
    With `script`, the reply is whatever it returns for the request (None: there is none), so many
    conversations at once can each get their own (their own tool_use ids, their own slot).
    """

    START_SECONDS = 10.0
    """The start-up deadline: a server that is not serving by then fails its test with a clear message."""

    def __init__(
        self, replies: list[Reply], *, by_length: bool = False, script: Callable[[JSON], Reply | None] | None = None
    ) -> None:
        self.replies = list(replies)
        self.by_length = by_length
        self.script = script
        self.received: list[JSON] = []
        self.bodies: list[bytes] = []  # each request's body, as the bytes that came
        self.served: set[int] = set()
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), self._handler())
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
        if not self._server.serving.wait(self.START_SECONDS):
            self.__exit__()
            raise RuntimeError(f"the scripted server did not start serving within {self.START_SECONDS:g} s")
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def _next(self, request: JSON, body: bytes = b"") -> tuple[Reply | None, int]:
        with self._lock:
            self.received.append(request)
            self.bodies.append(body)
            if self.script is not None:
                return self.script(request), len(self.received)
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
                sent = self.rfile.read(length)
                request = json.loads(sent or b"{}")
                reply, number = server._next(request, sent)
                if reply is None:
                    error = {"type": "invalid_request_error", "message": f"the script has no reply number {number}"}
                    status, body, headers = 500, {"type": "error", "error": error}, {"x-should-retry": "false"}
                else:
                    time.sleep(reply.delay)
                    status, body, headers = reply.status, reply.body(request, number), reply.headers
                if reply is not None and status == 200 and request.get("stream") is True:
                    self.stream(reply, request, number)
                    return
                payload = json.dumps(body, separators=(",", ":")).encode()
                if reply is not None and reply.raw is not None:
                    payload = reply.raw
                request_id = str(body.get("request_id") or f"req_{body.get('id', '')}")
                self.head(status, "application/json", request_id, len(payload))
                for name, value in headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.flush()
                if reply is not None and reply.stall:
                    time.sleep(reply.stall)
                self.wfile.write(payload)

            def stream(self, reply: Reply, request: JSON, number: int) -> None:
                """The reply as server-sent events; the connection's end ends the body (HTTP/1.0)."""
                self.head(200, "text/event-stream; charset=utf-8", f"req_msg_scripted{number:03d}")
                self.send_header("cache-control", "no-cache")
                for name, value in reply.headers.items():
                    self.send_header(name, value)
                self.end_headers()
                self.wfile.flush()
                for sent, (name, data) in enumerate(reply.events(request, number)):
                    if reply.stall and sent == reply.stall_after:
                        time.sleep(reply.stall)
                    self.wfile.write(sse(name, data))
                    self.wfile.flush()
                    time.sleep(reply.chunk_delay)

            def head(self, status: int, content_type: str, request_id: str, length: int | None = None) -> None:
                self.send_response(status)
                self.send_header("content-type", content_type)
                if length is not None:
                    self.send_header("content-length", str(length))
                self.send_header("request-id", request_id)
                self.send_header("x-scripted-reply", SCRIPTED_NOTE)

            def log_message(self, format: str, *args: Any) -> None:
                """Quiet: the tests and the authoring script report what matters."""

        return Handler
