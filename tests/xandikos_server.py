"""A real Xandikos CalDAV server on a free loopback port, for the CalDAV tests run against two servers.

Started as its own process (`python -m xandikos.web`), its collections in a temporary folder, with a
start-up deadline, as `radicale_server.RadicaleServer` is; the same shape (`url`, `users`, `user_url`,
`kill`, `stop`), so that a test runs the same against either. Xandikos serves one principal and has no
authentication of its own: the password a client sends is not checked, so no test of it depends on a 401.
Jordan's calendar is `/jordan/calendars/work/`.
"""

from __future__ import annotations

import os
import sys
from typing import Self

from radicale_server import OWNER_USER, ServerProcess


class XandikosServer(ServerProcess):
    """`with XandikosServer(folder, {"jordan": "pw"}) as server:` … `server.url`."""

    NAME = "Xandikos"

    def user_url(self, user: str) -> str:
        return f"{self.url}{user}/calendars/"

    def start(self) -> Self:
        self.folder.mkdir(parents=True, exist_ok=True)
        return self._launch(
            [sys.executable, "-m", "xandikos.web", "-d", str(self.folder / "collections"), "-l", "127.0.0.1",
             "-p", str(self.port), "--current-user-principal", f"/{OWNER_USER}/", "--autocreate",
             "--no-detect-systemd", "--state-dir", str(self.folder / "state")],
            env={**os.environ, "XDG_DATA_HOME": str(self.folder / "data")},
        )  # fmt: skip
