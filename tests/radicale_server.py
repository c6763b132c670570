"""A real Radicale CalDAV server on a free loopback port, for the CalDAV tests.

Started as its own process with htpasswd authentication (plain), rights from a file (each user owns
their collections; the owner, `jordan`, may also read `priya/shared/`, which Radicale's default
`owner_only` would refuse), storage in a temporary folder, and a start-up deadline. `kill()` stops it
at once (SIGKILL), as a crashed or unplugged server would; `stop()` ends it politely.
"""

from __future__ import annotations

import os
import secrets
import signal
import socket
import subprocess
import sys
import threading
import time
from datetime import datetime
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Self

if TYPE_CHECKING:
    from caldav.davclient import DAVClient

START_DEADLINE_SECONDS = 20.0

OWNER_USER = "jordan"
PRIYA_USER = "priya"

RIGHTS = """\
[root]
user: .+
collection:
permissions: R

[principal]
user: .+
collection: {user}
permissions: RW

[own-calendars]
user: .+
collection: {user}/[^/]+
permissions: rw

[jordan-reads-priya-shared]
user: jordan
collection: priya/shared(/.*)?
permissions: rR
"""


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class ServerProcess:
    """A CalDAV server run as its own process group on a free loopback port, with a start-up deadline: what
    `RadicaleServer` and `xandikos_server.XandikosServer` share (`url`, `users`, `kill`, `stop`, `with`)."""

    NAME = ""  # the server's name, in its log file's name and in errors

    def user_url(self, user: str) -> str:
        """Where `user`'s calendars are: each server says."""
        raise NotImplementedError

    def __init__(self, folder: Path, users: dict[str, str]) -> None:
        self.folder = folder
        self.users = users
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> Self:
        raise NotImplementedError

    def _launch(self, command: list[str], env: dict[str, str] | None = None) -> Self:
        """Start `command` with its output in the log file, then wait until the port answers."""
        log = (self.folder / f"{self.NAME.lower()}.log").open("wb")
        self.process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, start_new_session=True, env=env)
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.NAME} exited with {self.process.returncode}: {self.log()}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.05)
        self.stop()
        raise RuntimeError(f"{self.NAME} did not answer on port {self.port} within {START_DEADLINE_SECONDS} s")

    def log(self) -> str:
        path = self.folder / f"{self.NAME.lower()}.log"
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

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()


class RadicaleServer(ServerProcess):
    """`with RadicaleServer(folder, {"jordan": "pw", ...}) as server:` … `server.url`."""

    NAME = "Radicale"

    def user_url(self, user: str) -> str:
        return f"{self.url}{user}/"

    def start(self) -> Self:
        self.folder.mkdir(parents=True, exist_ok=True)
        users = self.folder / "users"
        users.write_text("".join(f"{name}:{password}\n" for name, password in self.users.items()), encoding="utf-8")
        rights = self.folder / "rights"
        rights.write_text(RIGHTS, encoding="utf-8")
        config = self.folder / "config"
        config.write_text(
            f"""\
[server]
hosts = 127.0.0.1:{self.port}

[auth]
type = htpasswd
htpasswd_filename = {users}
htpasswd_encryption = plain
delay = 0

[rights]
type = from_file
file = {rights}

[storage]
filesystem_folder = {self.folder / "collections"}

[logging]
level = warning
mask_passwords = True
""",
            encoding="utf-8",
        )
        return self._launch([sys.executable, "-m", "radicale", "--config", str(config)])


def unique_passwords() -> dict[str, str]:
    """A fresh password per user and test, so a test can grep files for it."""
    return {OWNER_USER: f"pw-jordan-{secrets.token_hex(8)}", PRIYA_USER: f"pw-priya-{secrets.token_hex(8)}"}


def client_for(server: RadicaleServer, user: str) -> DAVClient:
    """The caldav library as a calendar app would use it (another client than the agent)."""
    from caldav.davclient import DAVClient

    return DAVClient(server.user_url(user), username=user, password=server.users[user], timeout=10)  # type: ignore[arg-type]


def make_calendars(server: RadicaleServer) -> None:
    """jordan: 'Work' and 'Personal'; priya: 'Shared' (jordan may read it) and 'Private' (he may not)."""
    for user, calendars in ((OWNER_USER, ("work", "personal")), (PRIYA_USER, ("shared", "private"))):
        principal = client_for(server, user).principal()  # type: ignore[no-untyped-call]
        for cal_id in calendars:
            principal.make_calendar(name=cal_id.capitalize(), cal_id=cal_id)


def calendar_url(server: RadicaleServer, user: str, cal_id: str) -> str:
    return f"{server.user_url(user)}{cal_id}/"


def shared_url(server: ServerProcess) -> str:
    """Priya's calendar shared with Jordan: hers on Radicale; on Xandikos (one principal) one of Jordan's."""
    if server.NAME == "Radicale":
        return f"{server.user_url(PRIYA_USER)}shared/"
    return f"{server.user_url(OWNER_USER)}shared/"


def vevent(uid: str, title: str, start: datetime, end: datetime, *extra: str) -> str:
    """An event as a calendar app writes it (UTC times; `extra` lines such as RRULE or TRANSP)."""
    lines = [
        "BEGIN:VCALENDAR", "VERSION:2.0", "PRODID:-//a calendar app//EN", "BEGIN:VEVENT", f"UID:{uid}",
        "DTSTAMP:20270101T000000Z", f"DTSTART:{start:%Y%m%dT%H%M%SZ}", f"DTEND:{end:%Y%m%dT%H%M%SZ}",
        f"SUMMARY:{title}", *extra, "END:VEVENT", "END:VCALENDAR",
    ]  # fmt: skip
    return "\r\n".join(lines) + "\r\n"


class LosingProxy:
    """A loopback proxy in front of a server that passes everything through, except that it drops the
    answer to the first PUT (after the server has handled it) and closes the connection: a write that
    happened, whose answer never came back."""

    def __init__(self, target_port: int) -> None:
        self.target_port = target_port
        self.listener = socket.socket()
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen()
        self.port = self.listener.getsockname()[1]
        self.url = f"http://127.0.0.1:{self.port}/"
        self.dropped = 0
        self._lock = threading.Lock()
        threading.Thread(target=self._serve, daemon=True).start()

    def _serve(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            threading.Thread(target=self._relay, args=(client,), daemon=True).start()

    def _relay(self, client: socket.socket) -> None:
        with client, socket.create_connection(("127.0.0.1", self.target_port)) as upstream:
            client.settimeout(10)
            upstream.settimeout(10)
            while True:
                request = _read_message(client)
                if not request:
                    return
                upstream.sendall(request)
                answer = _read_message(upstream)
                with self._lock:
                    drop = request.startswith(b"PUT ") and self.dropped == 0
                    self.dropped += drop
                if drop or not answer:
                    return  # the server did the PUT; its answer goes nowhere
                client.sendall(answer)

    def close(self) -> None:
        self.listener.close()


def _read_message(sock: socket.socket) -> bytes:
    """One HTTP/1.1 message with a Content-Length body (what the caldav library and Radicale send)."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(body) < length:
        chunk = sock.recv(65536)
        if not chunk:
            break
        body += chunk
    return head + b"\r\n\r\n" + body
