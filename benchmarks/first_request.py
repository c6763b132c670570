"""A loopback Messages API that notes when each request's headers arrive: "process start to first request".

The scripted server (scheduler_agent/testing/scripted_server.py) parses a request before it keeps
it, and parsing a 10,000-entry body is itself tens of milliseconds; this one notes the moment
first, then reads the body and answers every request with the same short reply.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

BODY = json.dumps(
    {
        "id": "msg_bench_resume",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": [{"type": "text", "text": "Done: nothing more to book."}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }
).encode()


class FirstRequestServer:
    def __init__(self) -> None:
        self.arrivals: list[float] = []  # time.perf_counter() when each request's headers were read
        self.entries: list[int] = []  # how many entries each request carried
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                server.arrivals.append(time.perf_counter())
                request = json.loads(self.rfile.read(int(self.headers.get("content-length", "0"))) or b"{}")
                server.entries.append(len(request.get("messages", [])))
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(BODY)))
                self.send_header("request-id", "req_bench_resume")
                self.end_headers()
                self.wfile.write(BODY)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> FirstRequestServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()
