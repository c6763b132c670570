"""A real Xandikos CalDAV server on a free loopback port, for the CalDAV tests run against two servers.

Started as its own process (`python -m xandikos.web`), its collections in a temporary folder, with a
start-up deadline, as `radicale_server.RadicaleServer` is; the same shape (`url`, `users`, `user_url`,
`kill`, `stop`), so that a test runs the same against either. Xandikos serves one principal and has no
authentication of its own: the password a client sends is not checked, so no test of it depends on a 401.
Jordan's calendar is `/jordan/calendars/work/`.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

from radicale_server import OWNER_USER, START_DEADLINE_SECONDS, free_port


class XandikosServer:
    """`with XandikosServer(folder, {"jordan": "pw"}) as server:` … `server.url`."""

    def __init__(self, folder: Path, users: dict[str, str]) -> None:
        self.folder = folder
        self.users = users
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.process: subprocess.Popen[bytes] | None = None

    def user_url(self, user: str) -> str:
        return f"{self.url}{user}/calendars/"

    def start(self) -> XandikosServer:
        self.folder.mkdir(parents=True, exist_ok=True)
        log = (self.folder / "xandikos.log").open("wb")
        self.process = subprocess.Popen(
            [sys.executable, "-m", "xandikos.web", "-d", str(self.folder / "collections"), "-l", "127.0.0.1",
             "-p", str(self.port), "--current-user-principal", f"/{OWNER_USER}/", "--autocreate",
             "--no-detect-systemd", "--state-dir", str(self.folder / "state")],
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            env={**os.environ, "XDG_DATA_HOME": str(self.folder / "data")},
        )  # fmt: skip
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Xandikos exited with {self.process.returncode}: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"Xandikos did not answer on port {self.port} within {START_DEADLINE_SECONDS} s")

    def log(self) -> str:
        path = self.folder / "xandikos.log"
        return path.read_text(encoding="utf-8", errors="replace") if path.exists() else ""

    def kill(self) -> None:
        """SIGKILL: the server is gone mid-whatever, no goodbye."""
        if self.process is not None and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGKILL)
            self.process.wait(timeout=10)

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        os.killpg(self.process.pid, signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.kill()

    def __enter__(self) -> XandikosServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
