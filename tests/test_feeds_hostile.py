"""Hostile feed servers, each served from loopback: redirects inward, a gzip bomb, a drip, a redirect loop.

Every socket connect and name lookup of this process is watched through an audit hook, so a test can assert
that a refused address was refused before anything was attempted: no test sends traffic off the machine.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
import zlib
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text as sql
from test_ics import ics

from scheduler_agent.calendar import feeds
from scheduler_agent.calendar.feed_addresses import Policy, Refused, check_url, literal_address
from scheduler_agent.cli.calendar import calendar_app
from scheduler_agent.storage import db

runner = CliRunner()
LOOPBACK = ("--allow-http", "--allow-private")
GOOD = ics("UID:l@t\nSUMMARY:Lunch\nDTSTART:20261006T120000Z\nDURATION:PT1H")
BOMB_BYTES = 200_000_000  # decoded; ten times the cap

watched: list[tuple[str, Any]] | None = None  # (event, address) while a test watches


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if watched is not None and event in ("socket.connect", "socket.getaddrinfo"):
        watched.append((event, args[1] if event == "socket.connect" else args[0]))


sys.addaudithook(_audit)


@pytest.fixture
def attempts() -> Iterator[list[tuple[str, Any]]]:
    """Every connect (and lookup) this process makes while the test runs."""
    global watched
    watched = []
    try:
        yield watched
    finally:
        watched = None


def connected_hosts(seen: list[tuple[str, Any]]) -> set[str]:
    return {str(address[0]) for event, address in seen if event == "socket.connect"}


class Hostile:
    """What the server answers at each path; the paths it was asked for."""

    def __init__(self) -> None:
        self.good = GOOD
        self.redirect_to = ""
        self.asked: list[str] = []
        self.bomb = b""


@pytest.fixture(scope="module")
def bomb() -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    zeros = b"\0" * 1_000_000
    return b"".join([*(squeeze.compress(zeros) for _ in range(BOMB_BYTES // len(zeros))), squeeze.flush()])


@pytest.fixture
def hostile(bomb: bytes) -> Iterator[tuple[str, Hostile]]:
    state = Hostile()
    state.bomb = bomb

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            state.asked.append(self.path)
            if self.path == "/good.ics":
                self.answer(state.good.encode())
            elif self.path == "/redirect":
                self.send_response(302)
                self.send_header("Location", state.redirect_to)
                self.end_headers()
            elif self.path.startswith("/loop"):
                self.send_response(302)
                self.send_header("Location", f"/loop{len(state.asked)}")
                self.end_headers()
            elif self.path == "/bomb.ics":
                self.answer(state.bomb, encoding="gzip")
            elif self.path == "/drip.ics":
                self.send_response(200)
                self.send_header("Content-Type", "text/calendar")
                self.end_headers()
                try:
                    for byte in GOOD.encode() * 100:  # a byte every 0.2 s: each read waits less than any timeout
                        self.wfile.write(bytes([byte]))
                        self.wfile.flush()
                        time.sleep(0.2)
                except OSError:
                    pass

        def answer(self, data: bytes, encoding: str = "") -> None:
            self.send_response(200)
            self.send_header("Content-Type", "text/calendar")
            if encoding:
                self.send_header("Content-Encoding", encoding)
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, *args: object) -> None:
            pass

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    httpd.daemon_threads = True
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}", state
    httpd.shutdown()
    httpd.server_close()


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(calendar_app, list(args))
    return result.exit_code, result.stdout, result.stderr


def stored_feeds(path: Path) -> int:
    conn = db.connect(path)
    try:
        return len(feeds.list_feeds(conn))
    finally:
        conn.close()


@pytest.mark.parametrize(
    ("target", "shown"),
    [
        ("http://169.254.169.254/latest/meta-data/", "169.254.169.254, a link-local address"),
        ("http://2852039166/", "2852039166 (169.254.169.254), a link-local address"),
        ("http://0251.0376.0251.0376/", "0251.0376.0251.0376 (169.254.169.254), a link-local address"),
        ("http://[fe80::1]/", "fe80::1, a link-local address"),
        ("http://[::ffff:169.254.169.254]/", "::ffff:169.254.169.254 (169.254.169.254), a link-local address"),
        ("http://224.0.0.1/", "224.0.0.1, a multicast address"),
        ("http://0.0.0.0:80/", "0.0.0.0, the unspecified address"),
    ],
)
def test_a_redirect_inward_is_refused_before_connecting_even_with_both_flags(
    demo_db: Path, hostile: tuple[str, Hostile], attempts: list[tuple[str, Any]], target: str, shown: str
) -> None:
    base, state = hostile
    state.redirect_to = target
    code, out, err = invoke("subscribe", f"{base}/redirect", *LOOPBACK, "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert f"refused: redirect 1 goes to {shown}" in err
    assert "a feed may never reach it" in err
    assert "nothing was subscribed" in err
    assert len(err.strip().splitlines()) == 1
    assert out == ""
    assert state.asked == ["/redirect"]
    assert connected_hosts(attempts) == {"127.0.0.1"}  # the loopback server only: the target was never tried
    assert stored_feeds(demo_db) == 0


def test_without_the_flags_a_loopback_feed_is_refused_before_any_connection(
    demo_db: Path, hostile: tuple[str, Hostile], attempts: list[tuple[str, Any]]
) -> None:
    base, state = hostile
    code, _, err = invoke("subscribe", f"{base}/good.ics", "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "is plain http://: subscribe with --allow-http" in err
    code, _, err = invoke("subscribe", f"{base}/good.ics", "--allow-http", "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "goes to 127.0.0.1, a loopback address: subscribe with --allow-private" in err
    assert state.asked == []
    assert attempts == []
    assert stored_feeds(demo_db) == 0


def test_a_name_is_checked_by_the_address_it_resolves_to(
    demo_db: Path, hostile: tuple[str, Hostile], attempts: list[tuple[str, Any]]
) -> None:
    base, state = hostile
    url = base.replace("127.0.0.1", "localhost") + "/good.ics"
    code, _, err = invoke("subscribe", url, "--allow-http", "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "refused: the feed's address goes to localhost (127.0.0.1), a loopback address" in err
    assert [event for event, _ in attempts] == ["socket.getaddrinfo"]  # resolved, never connected
    assert state.asked == []
    assert stored_feeds(demo_db) == 0


def test_the_flags_are_kept_with_the_feed_and_apply_at_every_refresh(
    demo_db: Path, hostile: tuple[str, Hostile]
) -> None:
    base, state = hostile
    assert invoke("subscribe", f"{base}/good.ics", *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    _, listed, _ = invoke("feeds", "--db", str(demo_db))
    assert "  --allow-http --allow-private  " in listed
    conn = db.connect(demo_db)
    with db.transaction(conn):
        conn.execute(sql("UPDATE feeds SET allow_private = 0"))
    conn.close()
    _, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert "failed: refused: the feed's address goes to 127.0.0.1, a loopback address" in out
    assert "keeping the copy of" in out
    assert state.asked == ["/good.ics"]  # the subscribe's fetch only


def test_a_redirect_loop_stops_after_five_hops(demo_db: Path, hostile: tuple[str, Hostile]) -> None:
    base, state = hostile
    code, _, err = invoke("subscribe", f"{base}/loop", *LOOPBACK, "--person", "priya", "--db", str(demo_db))
    assert code == 1
    assert "failed: it redirected more than 5 times" in err
    assert len(state.asked) == 6  # the address and five redirects
    assert stored_feeds(demo_db) == 0


def test_a_gzip_bomb_stops_at_the_cap_and_keeps_the_last_copy(demo_db: Path, hostile: tuple[str, Hostile]) -> None:
    base, _ = hostile
    assert invoke("subscribe", f"{base}/good.ics", *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    point_at(demo_db, f"{base}/bomb.ics")
    _, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    assert "failed: it is larger than 20 MB once decoded; keeping the copy of" in out
    _, listed, _ = invoke("feeds", "--db", str(demo_db))
    assert "  1 event  " in listed


MEASURE = """
import sys
from pathlib import Path
from scheduler_agent.calendar import feed_fetch, feeds
from scheduler_agent.storage import db
def kb(name):
    status = Path("/proc/self/status").read_text().splitlines()
    return int(next(line for line in status if line.startswith(name + ":")).split()[1])
conn = db.connect(Path(sys.argv[1]))
feed = feeds.list_feeds(conn)[0]
Path("/proc/self/clear_refs").write_text("5")  # the peak (VmHWM) starts again from what is resident now
resident = kb("VmRSS")
line = feeds.refresh(conn, feed)
print(kb("VmHWM") - resident)
print(line)
"""


@pytest.mark.timeout(60)
def test_a_gzip_bomb_leaves_memory_bounded(demo_db: Path, hostile: tuple[str, Hostile]) -> None:
    """The refresh in a process of its own: its peak memory (KB, Linux's VmHWM) over what it held before."""
    base, _ = hostile
    assert invoke("subscribe", f"{base}/good.ics", *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    point_at(demo_db, f"{base}/bomb.ics")
    env = {key: value for key, value in os.environ.items() if not key.startswith("ANTHROPIC")}
    done = subprocess.run(
        [sys.executable, "-c", MEASURE, str(demo_db)], capture_output=True, text=True, env=env, timeout=50
    )
    assert done.returncode == 0, done.stderr
    grown_kb, line = done.stdout.splitlines()[:2]
    assert "larger than 20 MB once decoded" in line
    assert int(grown_kb) < 60_000  # the 20 MB cap and its pieces; reading it whole took 400 MB


@pytest.mark.timeout(30)
def test_a_drip_is_cut_at_the_one_deadline_for_the_whole_fetch(
    demo_db: Path, hostile: tuple[str, Hostile], monkeypatch: pytest.MonkeyPatch
) -> None:
    base, _ = hostile
    assert invoke("subscribe", f"{base}/good.ics", *LOOPBACK, "--person", "priya", "--db", str(demo_db))[0] == 0
    point_at(demo_db, f"{base}/drip.ics")
    monkeypatch.setattr(feeds, "TIMEOUT_SECONDS", 1.5)
    started = time.monotonic()
    _, out, _ = invoke("feeds", "--refresh", "--db", str(demo_db))
    took = time.monotonic() - started
    assert "failed: no complete answer after 1.5 s (the limit for the whole fetch: 1.5 s)" in out
    assert took < 5  # the drip would go on for over 50 s; each byte came well inside any per-read timeout


def test_bad_input_at_subscribe_is_one_line_and_stores_nothing(demo_db: Path, attempts: list[tuple[str, Any]]) -> None:
    for url, says in [
        ("gopher://example.com/feed", "is not a feed address"),
        ("https://someone:hunter2@example.com/cal.ics", "holds a password"),
        ("https://169.254.169.254/latest/meta-data/", "169.254.169.254, a link-local address"),
        ("webcal://[fe80::1%25eth0]/x.ics", "a link-local address"),
    ]:
        code, out, err = invoke("subscribe", url, *LOOPBACK, "--person", "priya", "--db", str(demo_db))
        assert code == 1, url
        assert says in err, err
        assert len(err.strip().splitlines()) == 1
        assert "hunter2" not in err
        assert out == ""
    assert attempts == []
    assert stored_feeds(demo_db) == 0


def test_addresses_are_read_as_what_they_stand_for() -> None:
    assert feeds.masked("https://[2001:db8::7]:8443/secret/cal.ics") == "https://[2001:db8::7]:8443/…"
    assert str(literal_address("2852039166")) == "169.254.169.254"
    assert str(literal_address("0x7f.1")) == "127.0.0.1"
    assert str(literal_address("017700000001")) == "127.0.0.1"
    assert str(literal_address("[::ffff:127.0.0.1]")) == "127.0.0.1"
    assert literal_address("calendar.example.com") is None
    with pytest.raises(Refused, match="refused: redirect 2 is plain http://"):
        check_url("http://example.com/x.ics", Policy(), "redirect 2")
    check_url("http://10.0.0.5/x.ics", Policy(allow_http=True, allow_private=True), "the feed's address")


def test_a_refresh_names_each_skipped_event_and_the_list_shows_them(
    demo_db: Path, hostile: tuple[str, Hostile]
) -> None:
    base, state = hostile
    endless = "UID:e@t\nSUMMARY:Endless\nDTSTART:20261006T090000Z\nDURATION:PT1H\nRRULE:FREQ=DAILY;INTERVAL=0"
    every_minute = (  # too dense for a week's search: skipped at each refresh, as at import
        "UID:m@t\nSUMMARY:Every minute\nDTSTART:20261006T000000Z\nDURATION:PT1M\nRRULE:FREQ=DAILY;"
        f"BYHOUR={','.join(map(str, range(24)))};BYMINUTE={','.join(map(str, range(60)))}"
    )
    state.good = ics("UID:l@t\nSUMMARY:Lunch\nDTSTART:20261006T120000Z\nDURATION:PT1H", endless, every_minute)
    code, out, _ = invoke("subscribe", f"{base}/good.ics", *LOOPBACK, "--person", "priya", "--db", str(demo_db))
    assert code == 0
    assert "Skipped feed 1 line " in out
    assert "event 'Endless' (UID e@t)" in out
    _, listed, _ = invoke("feeds", "--db", str(demo_db))
    skip_lines = [line for line in listed.splitlines() if line.startswith("    Skipped feed 1")]
    assert len(skip_lines) == 2
    assert "'Endless'" in skip_lines[0]
    assert "event 'Every minute' (UID m@t): RRULE" in skip_lines[1]
    assert "repeats up to 1,440 times a day" in skip_lines[1]


def point_at(path: Path, url: str) -> None:
    """The subscribed feed's server now answers at `url` (as a server may answer anything at any refresh)."""
    conn = db.connect(path)
    with db.transaction(conn):
        conn.execute(sql("UPDATE feeds SET url = :url, etag = NULL"), {"url": url})
    conn.close()


def test_a_gzip_body_of_several_members_is_read_whole_and_padding_after_it_ignored() -> None:
    from scheduler_agent.calendar.feed_fetch import _decode

    data = gzip_member(b"BEGIN" * 50_000) + gzip_member(b"END") + b"\n\n"
    pieces = list(_decode("gzip", iter(data[i : i + 1000] for i in range(0, len(data), 1000))))
    assert b"".join(pieces) == b"BEGIN" * 50_000 + b"END"
    assert max(len(piece) for piece in pieces) <= 65_536  # never more than a piece at a time


def gzip_member(data: bytes) -> bytes:
    squeeze = zlib.compressobj(9, zlib.DEFLATED, 16 + zlib.MAX_WBITS)
    return squeeze.compress(data) + squeeze.flush()
