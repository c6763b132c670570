"""The process's one event-loop thread for MCP clients: anyio's blocking portal, started when first needed.

The loop stays synchronous: it calls `portal().call(...)` and waits. The thread is a daemon, so it never
holds the process open; what was opened through it (connections, their subprocesses) is closed at exit,
in the reverse order, while the thread still runs (`on_exit`).
"""

from __future__ import annotations

import atexit
import queue
import threading
from collections.abc import Callable

import anyio
from anyio.from_thread import BlockingPortal

_portal: BlockingPortal | None = None
_lock = threading.Lock()
_closers: list[Callable[[], None]] = []


def portal() -> BlockingPortal:
    """The process's portal, its thread started on the first call."""
    global _portal
    with _lock:
        if _portal is None:
            _portal = _start()
            atexit.register(_close_all)
        return _portal


def on_exit(close: Callable[[], None]) -> None:
    """Run `close` at exit (before the thread goes), unless it was run and forgotten before (`forget`)."""
    _closers.append(close)


def forget(close: Callable[[], None]) -> None:
    if close in _closers:
        _closers.remove(close)


def _start() -> BlockingPortal:
    ready: queue.Queue[BlockingPortal] = queue.Queue()

    async def serve() -> None:
        async with BlockingPortal() as started:
            ready.put(started)
            await started.sleep_until_stopped()

    threading.Thread(target=anyio.run, args=(serve,), name="mcp-client", daemon=True).start()
    return ready.get()


def _close_all() -> None:
    while _closers:
        _closers.pop()()
