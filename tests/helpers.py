"""What the tests share: the scripted model, a CLI runner, and the demo clock, each written once."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from datetime import date, time
from pathlib import Path
from typing import Any

from scheduler_agent.agent.loop import Send
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.calendar.clock import Clock
from scheduler_agent.session.session import Session, Settings
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

DUMMY_KEY = "sk-ant-test-dummy"  # never a real key: the scripted server ignores it
DEMO_DAY, DEMO_TIME, DEMO_TZ = date(2026, 8, 27), time(9, 0), "Europe/London"  # Thursday, the demo's "now"
DEMO_TODAY = "2026-08-27T09:00"  # the same, as `--today` takes it


def demo_clock(day: date = DEMO_DAY, at: time = DEMO_TIME) -> Clock:
    """The clock the demo calendar is pinned to (or another moment of the same owner's zone)."""
    return Clock.pinned_at(day, at, DEMO_TZ)


@contextmanager
def scripted_send(replies: list[Reply], *, max_retries: int = 0) -> Iterator[tuple[Send, ScriptedServer]]:
    """A `send` that goes through the real SDK and HTTP to a loopback server serving `replies`."""
    with ScriptedServer(replies) as server:
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=max_retries)
        yield ModelAPI(client).send, server


def slot_searches(prefix: str, count: int, say: str = "Looking") -> list[Reply]:
    """`count` scripted replies that each say `say {n}` and call find_free_slots for Priya (ids `prefix{n}`)."""
    call = "find_free_slots", {"person": "priya"}
    return [Reply([text(f"{say} {n}"), tool_use(f"{prefix}{n}", *call)], "tool_use") for n in range(count)]


def scripted_session(conn: Any, server: ScriptedServer, events: list[Any], cid: int | None = None) -> Session:
    """A strict session on the demo clock whose requests go through the real SDK to `server`, its events kept
    in `events`; with `cid`, the stored conversation reopened (on the clock it was pinned to)."""
    send = ModelAPI(make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=0)).send
    settings = Settings("claude-sonnet-5-5", 10, strict=True)
    if cid is None:
        return Session(conn, demo_clock(), send, settings, events.append)
    return Session.stored(conn, cid, send, settings, events.append, None)


def stored_session(conn: Any, server: ScriptedServer, events: list[Any], text: str) -> Session:
    """`scripted_session`, stored from its first turn, after the person said `text`."""
    session = scripted_session(conn, server, events)
    session.store()
    session.ask(text)
    assert session.cid is not None
    return session


def run_cli(
    args: list[str],
    server: ScriptedServer | None = None,
    fault: str | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    """The real CLI in a new process: no credentials but a dummy key for `server`, strict, optionally a fault.

    From a neutral directory, `python -c` imports the installed package, not the source tree.
    """
    clean = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    clean |= {"SCHEDULER_AGENT_FAULT_DELAY": "0.2", "SCHEDULER_AGENT_STRICT": "1"}
    if server is not None:
        clean |= {"ANTHROPIC_BASE_URL": server.url, "ANTHROPIC_API_KEY": DUMMY_KEY}
    if fault:
        clean["SCHEDULER_AGENT_FAULT"] = fault
    clean |= env or {}
    command = [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args]
    return subprocess.run(
        command, env=clean, capture_output=True, text=True, timeout=timeout, cwd=tempfile.gettempdir()
    )


def on_a_terminal(args: list[str], env: dict[str, str], prompt: bytes, answers: list[str]) -> tuple[int, str]:
    """The real CLI with a controlling terminal (a pty), typing `answers[i]` once `prompt` has been shown
    i + 1 times; its exit code and everything it showed."""
    import pty

    pid, fd = pty.fork()
    if pid == 0:  # the child: the CLI, its terminal the pty
        os.chdir("/")
        os.execve(sys.executable, [sys.executable, "-c", "from scheduler_agent.cli import main; main()", *args], env)
    seen, typed = b"", 0
    while True:
        try:
            chunk = os.read(fd, 1024)
        except OSError:
            break
        if not chunk:
            break
        seen += chunk
        if typed < len(answers) and seen.count(prompt) > typed:
            os.write(fd, answers[typed].encode() + b"\n")
            typed += 1
    _, status = os.waitpid(pid, 0)
    return os.waitstatus_to_exitcode(status), seen.decode(errors="replace")


def rows(path: Path, sql: str) -> list[tuple[object, ...]]:
    """What `sql` reads from the SQLite file at `path`, as tuples (the file is opened and closed for it)."""
    conn = sqlite3.connect(path)
    try:
        return [tuple(row) for row in conn.execute(sql)]
    finally:
        conn.close()


def open_in_database(conn: Any) -> bool:
    """Whether the database holds a transaction open for `conn` (SQLAlchemy's own bookkeeping aside)."""
    raw: Any = conn.connection.dbapi_connection
    if conn.dialect.name == "sqlite":
        return bool(raw.in_transaction)
    from psycopg.pq import TransactionStatus

    return bool(raw.info.transaction_status != TransactionStatus.IDLE)
