"""A real PostgreSQL server for the tests and the benchmarks: initdb, then `postgres` on a free loopback port.

Debian keeps `initdb` and `pg_ctl` off the PATH, under /usr/lib/postgresql/<version>/bin; the newest
found there is used (or PG_BIN). The server refuses to run as root, so when the tests run as root it
runs as the `postgres` user (`runuser -u postgres --`) in a folder made for it under /tmp (pytest's tmp
folder is not readable to that user). Its socket is in that folder too, it listens on 127.0.0.1 only,
and it must accept connections within START_DEADLINE_SECONDS. `stop()` ends it (fast shutdown) and
removes the folder. Each test gets a database of its own: `new_database()` copies an empty template,
which takes milliseconds, and `drop_database()` removes it when the test ends (a PostgreSQL database is
about 7 MB on disk: a suite that kept them all grew the folder to most of a gigabyte).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from itertools import count
from pathlib import Path
from types import TracebackType

START_DEADLINE_SECONDS = 30.0
SUPERUSER = "sa_test"
# A throwaway server needs no durability: the tests' server runs without fsync (the benchmark's with it).
NO_FSYNC = ("-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off")


class ServerUnavailable(Exception):
    """No PostgreSQL server can be started here (no binaries, no postgres user, it did not come up)."""


def find_bin() -> Path:
    """The folder holding initdb and postgres: PG_BIN, else the newest /usr/lib/postgresql/*/bin."""
    if os.environ.get("PG_BIN"):
        return Path(os.environ["PG_BIN"])
    found = sorted(
        (Path(p).parent for p in glob.glob("/usr/lib/postgresql/*/bin/initdb")),
        key=lambda folder: int(folder.parent.name) if folder.parent.name.isdigit() else 0,
    )
    if not found:
        raise ServerUnavailable(
            "no PostgreSQL binaries under /usr/lib/postgresql/*/bin: install the Debian package `postgresql` "
            "(apt-get install postgresql), as .ci/run does"
        )
    return found[-1]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


class PostgresServer:
    """`with PostgresServer() as server:` … `server.new_database()` gives a URL of a fresh database."""

    def __init__(self, *, durable: bool = False) -> None:
        self.durable = durable  # False (the tests): no fsync, which a throwaway server does not need
        self.bin = find_bin()
        self.port = free_port()
        self.folder = Path(tempfile.mkdtemp(prefix="sa-pg-"))
        self.data = self.folder / "data"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = self.folder / "server.log"
        self._names = count(1)
        self._as: list[str] = []
        if os.geteuid() == 0:  # postgres will not run as root
            try:
                user = pwd.getpwnam("postgres")
            except KeyError:
                raise ServerUnavailable("running as root and there is no `postgres` user to run the server") from None
            os.chown(self.folder, user.pw_uid, user.pw_gid)
            self._as = ["runuser", "-u", "postgres", "--"]
        self.url = f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/postgres"

    def url_of(self, database: str) -> str:
        return f"postgresql://{SUPERUSER}@127.0.0.1:{self.port}/{database}"

    def start(self) -> PostgresServer:
        initdb = subprocess.run(
            [
                *self._as,
                str(self.bin / "initdb"),
                "-D",
                str(self.data),
                "-U",
                SUPERUSER,
                "-A",
                "trust",
                "-E",
                "UTF8",
                "--locale=C",
                "--no-sync",
            ],
            capture_output=True,
            timeout=START_DEADLINE_SECONDS,
        )
        if initdb.returncode != 0:
            raise ServerUnavailable(f"initdb failed: {initdb.stderr.decode(errors='replace')[-800:]}")
        self._launch()
        self._sql("CREATE DATABASE sa_template TEMPLATE template0 ENCODING 'UTF8' LC_COLLATE 'C' LC_CTYPE 'C'")
        return self

    def _launch(self) -> None:
        """`postgres` on the data folder, on this server's port; returns once it accepts connections."""
        log = open(self.log, "ab")  # noqa: SIM115  # open while the server runs
        self.process = subprocess.Popen(
            [
                *self._as,
                str(self.bin / "postgres"),
                "-D",
                str(self.data),
                "-p",
                str(self.port),
                "-c",
                "listen_addresses=127.0.0.1",
                "-c",
                f"unix_socket_directories={self.folder}",
                *NO_FSYNC[: 0 if self.durable else None],
                "-c",
                "max_connections=200",
            ],
            stdout=log,
            stderr=subprocess.STDOUT,
        )
        log.close()
        deadline = time.monotonic() + START_DEADLINE_SECONDS
        while not self._accepting():
            if self.process.poll() is not None or time.monotonic() > deadline:
                tail = self.log.read_text(errors="replace")[-800:]
                self.stop()
                raise ServerUnavailable(f"PostgreSQL did not start within {START_DEADLINE_SECONDS:.0f} s: {tail}")
            time.sleep(0.05)

    def restart(self) -> None:
        """Stop the server (fast shutdown: every open connection is ended) and start it again on the same port
        and data, as a database restart does to its clients."""
        self._shut_down()
        self._launch()

    def new_database(self) -> str:
        """A new empty database (copied from the template); its URL."""
        name = f"t{os.getpid()}_{next(self._names)}"
        self._sql(f"CREATE DATABASE {name} TEMPLATE sa_template")
        return self.url_of(name)

    def drop_database(self, url: str) -> None:
        """Drop the database `new_database()` made at `url`, ending any connection still open on it (the code
        under test may keep pooled connections). A server already stopped has nothing to drop."""
        name = url.rsplit("/", 1)[-1]
        if not name.startswith(f"t{os.getpid()}_") or self.process is None or self.process.poll() is not None:
            return
        self._sql(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")

    def _sql(self, statement: str) -> None:
        import psycopg

        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement.encode())  # our own names only, never input

    def _accepting(self) -> bool:
        import psycopg

        try:
            psycopg.connect(self.url, connect_timeout=2).close()
        except psycopg.OperationalError:
            return False
        return True

    def stop(self) -> None:
        self._shut_down()
        shutil.rmtree(self.folder, ignore_errors=True)

    def _shut_down(self) -> None:
        if self.process is not None and self.process.poll() is None:
            # fast shutdown: open connections are ended (a signal to runuser would not reach the server)
            subprocess.run(
                [*self._as, str(self.bin / "pg_ctl"), "-D", str(self.data), "stop", "-m", "fast", "-w", "-t", "15"],
                capture_output=True,
                timeout=30,
            )
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()

    def __enter__(self) -> PostgresServer:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, value: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self.stop()
