"""What the failover tests share: `scheduler-agent worker` processes, turns started on Temporal, and what the
store and the scripted API say about them afterwards.

A worker is the real CLI in a process of its own (its output in a file, read when it matters); turns are stored
in this process and their workflows started by the `temporal` CLI (a Go binary, quick to start), so nothing in
the test process holds a Temporal client.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

from helpers import DUMMY_KEY, demo_clock
from sqlalchemy import text

from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import check, conversation_state
from scheduler_agent.session.session import Settings
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply
from scheduler_agent.testing.temporal import find_binary
from scheduler_agent.workflows.names import WORKFLOW, TurnKey
from scheduler_agent.workflows.submission import store_turn

READY_SECONDS = 90.0  # a worker's start-up on a loaded machine (it imports the SDK and temporalio)
BOOKINGS = ["create_event", "move_event"]  # what `submit --yes` approves


class Worker:
    """`scheduler-agent worker` in a process of its own; its output in `log`."""

    def __init__(self, folder: Path, name: str, address: str, queue: str, api: str, store: str, *extra: str) -> None:
        self.name, self.log = name, folder / f"worker-{name}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
        env |= {"ANTHROPIC_BASE_URL": api, "ANTHROPIC_API_KEY": DUMMY_KEY, "SCHEDULER_AGENT_STRICT": "1"}
        env |= {"SCHEDULER_AGENT_TEMPORAL": address, "SCHEDULER_AGENT_TASK_QUEUE": queue}
        env |= dict(pair.split("=", 1) for pair in extra if "=" in pair)
        flags = [each for each in extra if "=" not in each]
        command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", "worker", "--db", store]
        with open(self.log, "wb") as out:
            self.process = subprocess.Popen(
                [*command, *flags], env=env, cwd=tempfile.gettempdir(), stdout=out, stderr=subprocess.STDOUT
            )

    def said(self) -> str:
        return self.log.read_text(errors="replace")

    def wait_ready(self) -> None:
        deadline = time.monotonic() + READY_SECONDS
        while "worker: process" not in self.said():
            assert self.process.poll() is None, f"worker {self.name} exited {self.process.returncode}: {self.said()}"
            assert time.monotonic() < deadline, f"worker {self.name} did not start: {self.said()}"
            time.sleep(0.1)

    def stop(self) -> None:
        """SIGTERM, as a person stops it: the steps it runs finish, then it exits 0."""
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=60)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise AssertionError(f"worker {self.name} did not stop on SIGTERM: {self.said()[-2000:]}") from None


@contextmanager
def workers(
    folder: Path, address: str, queue: str, api: str, store: str, *each: tuple[str, ...], first: str = "A"
) -> Iterator[list[Worker]]:
    """One worker per tuple of extra arguments (`--concurrency 3`, `SCHEDULER_AGENT_FAULT=...`), all ready;
    stopped at the end (one that died on purpose is left as it is). They are named from `first` on (A, B, ...),
    and so are their logs: a set started later beside another gives the next letter."""
    started = [Worker(folder, chr(ord(first) + n), address, queue, api, store, *extra) for n, extra in enumerate(each)]
    try:
        for worker in started:
            worker.wait_ready()
        yield started
    finally:
        for worker in started:
            if worker.process.poll() is None:
                worker.stop()


class Asked:
    """The scripted API's `script`, counting the requests: which conversation (by its first words' number) and
    how long its list was, with when each came."""

    def __init__(self, script: Callable[[JSON], Reply | None]) -> None:
        self.script = script
        self.times: list[tuple[float, int, int]] = []  # (monotonic time, conversation number, entries)
        self.lock = threading.Lock()

    def __call__(self, request: JSON) -> Reply | None:
        messages = request.get("messages", [])
        found = re.search(r"(\d+)", first_text(messages))
        with self.lock:
            self.times.append((time.monotonic(), int(found.group(1)) if found else -1, len(messages)))
        return self.script(request)

    def counts(self) -> Counter[tuple[int, int]]:
        with self.lock:
            return Counter((number, entries) for _, number, entries in self.times)

    def first(self, number: int, entries: int) -> float | None:
        with self.lock:
            return next((at for at, n, e in self.times if (n, e) == (number, entries)), None)


def first_text(messages: list[JSON]) -> str:
    """The words of the list's first user turn (a string, or text blocks)."""
    content = messages[0]["content"] if messages else ""
    if isinstance(content, str):
        return content
    return " ".join(block.get("text", "") for block in content if isinstance(block, dict))


def submit(store: str, address: str, queue: str, texts: list[str], approved: list[str]) -> list[TurnKey]:
    """Each text stored as a new conversation's user turn (as `submit` stores it), then its workflow started."""
    conn = db.open_db(store)
    try:
        keys = [
            store_turn(conn, text, clock=demo_clock(), settings=Settings("claude-sonnet-5-5", 10)) for text in texts
        ]
    finally:
        conn.close()
    for key in keys:
        turn = {"store": key.store, "cid": key.cid, "turn": key.turn, "approved": approved}
        temporal_cli(
            address,
            "workflow", "start", "--type", WORKFLOW, "--task-queue", queue,
            "--workflow-id", key.workflow_id, "--input", json.dumps(turn),
        )  # fmt: skip
    return keys


def temporal_cli(address: str, *args: str) -> str:
    done = subprocess.run([str(find_binary()), *args, "--address", address], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout


def statuses(address: str, keys: list[TurnKey]) -> dict[int, str]:
    """Each turn's workflow status, as the server tells it (`temporal workflow describe`)."""
    found = {}
    for key in keys:
        described = json.loads(
            temporal_cli(address, "workflow", "describe", "--workflow-id", key.workflow_id, "-o", "json")
        )
        found[key.cid] = described["workflowExecutionInfo"]["status"]
    return found


def stored(store: str, cid: int) -> list[JSON]:
    """Conversation `cid`'s list, as the store has it."""
    conn = db.open_db(store)
    try:
        _, messages = conversations.load(conn, cid)
    finally:
        conn.close()
    return messages


def until(what: str, deadline_seconds: float, done: Callable[[], bool], poll: float = 0.2) -> None:
    deadline = time.monotonic() + deadline_seconds
    while not done():
        assert time.monotonic() < deadline, f"not within {deadline_seconds:g} s: {what}"
        time.sleep(poll)


def all_ended(store: str, keys: list[TurnKey]) -> bool:
    """Whether every turn has ended as `ask` ends one: the model's answer (no calls) is the list's last entry."""
    try:
        return all(conversation_state(stored(store, key.cid)) == "complete" for key in keys)
    except Exception:  # the database restarting under the test: not yet
        return False


def lint_clean(store: str, keys: list[TurnKey]) -> None:
    """Every list passes the grammar check as a stored conversation, warnings included (`lint --strict`)."""
    for key in keys:
        messages = stored(store, key.cid)
        assert check(messages, mode="conversation") == [], (key.cid, messages)


def count(store: str, query: str, title: object = None) -> int:
    """The number `query` counts; `:title` in it is `title`."""
    conn = db.open_db(store)
    try:
        return int(conn.execute(text(query), {"title": title}).scalar_one())
    finally:
        conn.close()
