"""One iteration with `send` in it: through real loopback HTTP, against the SDK's tool runner on the same list.

    python -m benchmarks.http_iteration --db CONVERSATION.db --rounds R

The "one iteration of the loop outside `send`" rows leave out the request's encoding, the HTTP exchange and
the reply's parse: the parts that grow with the list. This measures them with the rest. Both clients talk
HTTP to a stub Messages API on loopback (`StubAPI`) that reads each request's bytes without parsing them and
answers from a plan: calls to `find_free_slots` with fresh ids, then a final text. What is timed is the
client thread's CPU time (`time.thread_time`: the stub's thread is not in it, nor any wait) for a turn of six
model calls and for a turn of one, on the same stored list; one iteration is (six - one) / 5, paired within a
round, so opening the list and the turn's start and end cancel out.

- ours: `Session.stored(...).ask(...)` with `ModelAPI.send`, as `ask --cid` runs it (a fresh copy of the
  database for each turn, so every turn starts from the same list);
- the SDK's: `client.beta.messages.tool_runner` in classic mode (`thread=False`) given the same list as plain
  dicts and the same tool (`CalendarTools.run`).

Prints JSON: for each of ours/sdk and six/one, the CPU and wall seconds of each round.
"""

from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from benchmarks.common import (
    DEMO_WEEK,
    NEUTRAL_CWD,
    PLACEHOLDER_KEY,
    Row,
    Sample,
    bench_env,
    copy_db,
    module_command,
    ratio_text,
)
from benchmarks.conversation import pinned_clock, settings

CALLS = 6  # model calls in the long turn: five rounds of a tool call, then the answer


def reply(number: int, final: bool) -> bytes:
    content: list[dict[str, Any]] = [{"type": "text", "text": "Done." if final else "Looking."}]
    if not final:
        call = {"type": "tool_use", "id": f"toolu_stub_{number:06d}", "name": "find_free_slots"}
        content.append({**call, "input": {"person": "priya", "week": DEMO_WEEK}})
    usage = {"input_tokens": 1000, "output_tokens": 30, "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}
    body = {
        "id": f"msg_stub_{number:06d}",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-5-5",
        "content": content,
        "stop_reason": "end_turn" if final else "tool_use",
        "stop_sequence": None,
        "usage": usage,
    }
    return json.dumps(body).encode()


class StubAPI:
    """A Messages API on loopback that never parses a request: it reads the bytes and answers the next reply of
        its plan (`plan(calls)`: calls - 1 tool calls, then the final text; ids never repeat). The calls ask for Priya's
    free windows in the demo's week: the tool succeeds, and its body is the same on both sides."""

    def __init__(self) -> None:
        self._numbers = itertools.count(1)
        self._left = 0
        self.requests = 0
        stub = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # keep-alive, as the API: the connection is reused between calls
            disable_nagle_algorithm = True  # the headers and the body leave at once (no delayed-ACK wait)

            def do_POST(self) -> None:
                self.rfile.read(int(self.headers.get("content-length", "0")))
                stub.requests += 1
                stub._left -= 1
                body = reply(next(stub._numbers), final=stub._left <= 0)
                self.send_response(200)
                self.send_header("content-type", "application/json")
                self.send_header("content-length", str(len(body)))
                self.send_header("request-id", "req_stub")
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, format: str, *args: Any) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)

    def plan(self, calls: int) -> None:
        self._left = calls

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def __enter__(self) -> StubAPI:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()


def measure(db: Path, rounds: int) -> dict[str, list[list[float]]]:
    """(CPU, wall) seconds of each round's turns: ours and the SDK's, of six calls and of one."""
    import anthropic
    from anthropic import beta_tool

    from scheduler_agent.agent.deadline import Deadline
    from scheduler_agent.agent.events import ignore
    from scheduler_agent.api.client import ModelAPI, make_client
    from scheduler_agent.calendar.tools import CalendarTools, tool_definitions
    from scheduler_agent.session.session import Session
    from scheduler_agent.storage import conversations
    from scheduler_agent.storage.db import connect

    work = db.with_name("http-iteration.db")
    ids = itertools.count(1)
    found: dict[str, list[list[float]]] = {f"{who}_{calls}": [] for who in ("ours", "sdk") for calls in (CALLS, 1)}
    with StubAPI() as stub:
        api = ModelAPI(make_client(api_key=PLACEHOLDER_KEY, base_url=stub.url, max_retries=0))
        client = anthropic.Anthropic(api_key=PLACEHOLDER_KEY, base_url=stub.url, max_retries=0)

        def ours(calls: int) -> tuple[float, float]:
            conn = connect(copy_db(db, work))
            cid = conversations.latest_id(conn)
            assert cid is not None, "build a conversation first"
            stub.plan(calls)
            wall, cpu = time.perf_counter(), time.thread_time()
            session = Session.stored(conn, cid, api.send, settings(CALLS + 2), ignore, pinned_clock(conn))
            session.ask("And the week after?")
            took = (time.thread_time() - cpu, time.perf_counter() - wall)
            conn.close()
            return took

        def sdk(calls: int) -> tuple[float, float]:
            conn = connect(copy_db(db, work))
            cid = conversations.latest_id(conn)
            assert cid is not None, "build a conversation first"
            _, stored = conversations.load(conn, cid)
            tools = CalendarTools(conn, pinned_clock(conn))

            def runnable(definition: dict[str, Any]) -> Any:
                name = definition["name"]

                def call(**arguments: Any) -> str:
                    return tools.run(name, arguments, f"toolu_runner_{next(ids)}", Deadline.after(30))

                schema = definition["input_schema"]
                return beta_tool(call, name=name, description=definition["description"], input_schema=schema)

            definitions = [runnable(d) for d in tool_definitions()]
            messages = [*json.loads(json.dumps(stored)), {"role": "user", "content": "And the week after?"}]
            stub.plan(calls)
            wall, cpu = time.perf_counter(), time.thread_time()
            runner = client.beta.messages.tool_runner(
                model="claude-sonnet-5-5",
                max_tokens=4096,
                tools=definitions,
                messages=messages,
                max_iterations=CALLS + 2,
                thread=False,
            )
            for _ in runner:
                pass
            took = (time.thread_time() - cpu, time.perf_counter() - wall)
            conn.close()
            return took

        ours(1)  # warm both up: the first request opens the connection and fills the caches
        sdk(1)
        for number in range(rounds):
            order = [("ours", ours), ("sdk", sdk)]
            for who, run in order if number % 2 == 0 else reversed(order):
                for calls in (CALLS, 1) if number % 2 == 0 else (1, CALLS):
                    requests = stub.requests
                    found[f"{who}_{calls}"].append(list(run(calls)))
                    if stub.requests - requests != calls:
                        raise RuntimeError(f"{who}: {stub.requests - requests} model calls, not {calls}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args(argv)
    print(json.dumps(measure(args.db, args.rounds)))
    return 0


if __name__ == "__main__":
    sys.exit(main())


FIGURE = "one iteration through loopback HTTP, `send` included: the client thread's CPU"
HTTP_GOAL_RATIO, HTTP_GOAL_SECONDS = 0.1, 0.005


def per_iteration(found: dict[str, list[list[float]]], who: str, clock: int) -> Sample:
    """(six - one) / 5 of each round: `clock` 0 is CPU, 1 wall."""
    six, one = found[f"{who}_{CALLS}"], found[f"{who}_1"]
    return Sample(tuple((a[clock] - b[clock]) / (CALLS - 1) for a, b in zip(six, one, strict=True)))


def rows(conversations: list[tuple[str, Path]], runs: int) -> list[Row]:
    """A row per size of list, each measured in a process of its own; the largest carries the goal."""
    made = []
    for number, (label, db) in enumerate(conversations, start=1):
        command = [*module_command("http_iteration"), "--db", str(db), "--rounds", str(runs)]
        done = subprocess.run(command, capture_output=True, text=True, env=bench_env(), cwd=NEUTRAL_CWD, check=False)
        if done.returncode != 0:
            raise RuntimeError(f"benchmarks.http_iteration exited {done.returncode}: {done.stderr[-600:]}")
        found = json.loads(done.stdout.strip().splitlines()[-1])
        ours, theirs = per_iteration(found, "ours", 0), per_iteration(found, "sdk", 0)
        ours_wall, theirs_wall = per_iteration(found, "ours", 1), per_iteration(found, "sdk", 1)
        figure = f"{FIGURE}, {label} entries, vs the SDK's tool_runner (classic mode) on the same list"
        cells = (
            f"CPU {ours.ms()}; wall {ours_wall.ms()}",
            f"CPU {theirs.ms()}; wall {theirs_wall.ms()}",
            f"CPU {ratio_text(ours, theirs)}; wall {ours_wall.median / theirs_wall.median:.2f}x",
        )
        if number < len(conversations):
            made.append(Row(figure, *cells))
            continue
        met = ours.median <= HTTP_GOAL_RATIO * theirs.median and ours.median <= HTTP_GOAL_SECONDS
        made.append(Row(figure, *cells, goal="<= 0.1x (CPU) and <= 5 ms", met=met))
    return made
