"""One chat in a real terminal (tmux): the streamed answer appears, and the approval prompt is answered there.

tmux is required: .ci/run installs it, and this test fails (never skips) when it is missing.
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

QUESTION = (
    "? Book 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London) for you and Priya Raman (priya)"
)
ANSWER = "Booked Monday 2026-08-31 14:00-14:30 with Priya Raman, streamed word by word."


class Terminal:
    """A tmux session on its own socket, running one command; read with `screen()`, type with `type()`.

    The socket is in a folder of its own that `close()` removes: with `-L`, tmux would leave its
    /tmp/tmux-UID behind. A short path, as a socket's must be (at most 107 bytes)."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.folder = Path(tempfile.mkdtemp(prefix="tmux-test-"))
        self.socket = str(self.folder / "socket")
        self.env, self.cwd = env, cwd
        # `; sleep 60` keeps the pane (and what it shows) after the command ends; close() ends it sooner.
        session = ["new-session", "-d", "-s", "chat", "-x", "160", "-y", "48", " ".join(command) + "; sleep 60"]
        # the pane and what it shows stay even if a Ctrl-C ends the `sleep` too
        self.tmux(*session, ";", "set-option", "-t", "chat", "remain-on-exit", "on")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-S", self.socket, *args], env=self.env, cwd=self.cwd, capture_output=True, text=True, timeout=20
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-100")

    def type(self, keys: str) -> None:
        self.tmux("send-keys", "-t", "chat", keys, "Enter")

    def literal(self, text: str) -> None:
        """Type `text` as it is, without Enter."""
        self.tmux("send-keys", "-t", "chat", "-l", text)

    def press(self, *keys: str) -> None:
        """Press named keys: Left, Up, Enter, C-c, ..."""
        self.tmux("send-keys", "-t", "chat", *keys)

    def wait_for(self, wanted: str | Callable[[str], bool], seconds: float = 40) -> str:
        ready = wanted if callable(wanted) else lambda screen: wanted in screen
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed {wanted!r}; it shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-S", self.socket, "kill-server"], env=self.env, capture_output=True, timeout=20)
        shutil.rmtree(self.folder, ignore_errors=True)


@pytest.fixture
def terminal_env(tmp_path: Path) -> Iterator[Callable[[ScriptedServer], dict[str, str]]]:
    if shutil.which("tmux") is None:
        pytest.fail("tmux is missing: install it (apt-get install tmux); .ci/run installs it before the tests")

    def env_for(server: ScriptedServer) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_", "TMUX"))}
        return env | {
            "ANTHROPIC_BASE_URL": server.url,
            "ANTHROPIC_API_KEY": "sk-ant-test-dummy",
            "TERM": "xterm-256color",
            "HOME": str(tmp_path),
        }

    yield env_for


def test_a_chat_in_a_real_terminal_streams_and_asks_before_booking(
    demo_db: Path, tmp_path: Path, terminal_env: Callable[[ScriptedServer], dict[str, str]]
) -> None:
    book = tool_use("toolu_tty_1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    replies = [Reply([book], "tool_use"), Reply([text(ANSWER)], chunk_delay=0.05)]
    with ScriptedServer(replies) as server:
        cli = [sys.executable, "-c", "'from scheduler_agent.cli import main; main()'"]
        command = [*cli, "chat", "--db", str(demo_db), "--today", "2026-08-27T09:00"]
        terminal = Terminal(command, terminal_env(server), tmp_path)
        try:
            terminal.wait_for("you>")
            terminal.type("Book 30 minutes with Priya on Monday at 2pm")
            asked = terminal.wait_for("Approve?")
            assert QUESTION in asked
            terminal.type("y")
            screen = terminal.wait_for(lambda s: ANSWER in s and s.rstrip().endswith("you>"))  # answer, then prompt
            assert "→ create_event(" in screen
            assert "Event id: 29" in screen
            terminal.type("/quit")
            terminal.wait_for(lambda s: "you> /quit" in s)
        finally:
            terminal.close()
    # the answer streamed: it arrived as several text deltas over SSE, not as one body
    assert server.received[1]["stream"] is True
    assert len(server.received) == 2


CLI = [sys.executable, "-c", "'from scheduler_agent.cli import main; main()'"]


def stored_user_texts(path: Path) -> list[str]:
    conn = sqlite3.connect(path)
    try:
        rows = conn.execute("SELECT content FROM entries WHERE role = 'user' ORDER BY conversation_id, position")
        return [block["text"] for (content,) in rows for block in json.loads(content) if block["type"] == "text"]
    finally:
        conn.close()


def test_the_chat_line_is_edited_with_the_arrows_and_up_recalls_it(
    demo_db: Path, tmp_path: Path, terminal_env: Callable[[ScriptedServer], dict[str, str]]
) -> None:
    replies = [Reply([text("Noted, Monday.")]), Reply([text("Noted again.")])]
    with ScriptedServer(replies) as server:
        command = [*CLI, "chat", "--db", str(demo_db), "--today", "2026-08-27T09:00", "--no-stream"]
        env = terminal_env(server)
        terminal = Terminal(command, env, tmp_path)
        try:
            terminal.wait_for("you>")
            terminal.literal("Book Priya on Mondy")
            terminal.press("Left")  # the cursor goes back one, before the "y"
            terminal.literal("a")  # and the letter goes in there
            terminal.press("Enter")
            terminal.wait_for("Noted, Monday.")
            terminal.wait_for(lambda s: s.rstrip().endswith("you>"))
            terminal.press("Up")  # the last line comes back
            terminal.wait_for(lambda s: s.rstrip().endswith("you> Book Priya on Monday"))
            terminal.press("Enter")
            terminal.wait_for("Noted again.")
            terminal.type("/quit")
            terminal.wait_for(lambda s: "you> /quit" in s)
        finally:
            terminal.close()
    assert stored_user_texts(demo_db) == ["Book Priya on Monday", "Book Priya on Monday"]
    assert [m["content"][-1]["text"] for m in (r["messages"][-1] for r in server.received)] == [
        "Book Priya on Monday",
        "Book Priya on Monday",
    ]
    history = Path(env["XDG_DATA_HOME"]) / "scheduler-agent" / "chat-history"
    assert "Book Priya on Monday" in history.read_text()
    assert stat.S_IMODE(history.stat().st_mode) == 0o600


def test_ctrl_c_at_the_prompt_clears_the_line_and_a_second_leaves_without_a_traceback(
    demo_db: Path, tmp_path: Path, terminal_env: Callable[[ScriptedServer], dict[str, str]]
) -> None:
    with ScriptedServer([Reply([text("Only the second line arrived.")])]) as server:
        command = [*CLI, "chat", "--db", str(demo_db), "--today", "2026-08-27T09:00", "--no-stream"]
        terminal = Terminal([*command, "; echo EXIT=$?"], terminal_env(server), tmp_path)
        try:
            terminal.wait_for("you>")
            terminal.literal("a half-typed line")
            terminal.press("C-c")  # clears the line, as a shell does
            terminal.wait_for("the line was cleared")
            terminal.type("hello")
            terminal.wait_for("Only the second line arrived.")
            terminal.wait_for(lambda s: s.rstrip().endswith("you>"))
            terminal.press("C-c")
            terminal.wait_for(lambda s: s.count("the line was cleared") == 2)
            terminal.press("C-c")  # a second Ctrl-C on the empty line leaves
            screen = terminal.wait_for("EXIT=")
        finally:
            terminal.close()
    assert "EXIT=130" in screen
    assert "Traceback" not in screen
    assert "Exception ignored" not in screen
    assert stored_user_texts(demo_db) == ["hello"]  # the half-typed line was never sent


# From 0.2 s: before that the interpreter itself is still starting (its own `site` import), where no
# program's code runs yet and Python's own handling of SIGINT applies.
@pytest.mark.parametrize("delay", [0.2, 0.4, 0.6, 0.8, 1.0, 1.5])
def test_ctrl_c_at_any_moment_of_start_up_never_shows_a_traceback(
    delay: float, demo_db: Path, tmp_path: Path, terminal_env: Callable[[ScriptedServer], dict[str, str]]
) -> None:
    with ScriptedServer([]) as server:
        command = [*CLI, "chat", "--db", str(demo_db), "--today", "2026-08-27T09:00"]
        terminal = Terminal([*command, "; echo EXIT=$?"], terminal_env(server), tmp_path)
        try:
            time.sleep(delay)
            terminal.press("C-c")
            # while loading it leaves (exit 130); at the prompt already, the line is cleared
            marks = ("EXIT=", "Pane is dead", "the line was cleared")
            terminal.wait_for(lambda s: any(mark in s for mark in marks))
            time.sleep(0.5)  # anything a finaliser would print at exit has been printed by now
            screen = terminal.screen()
        finally:
            terminal.close()
    assert "Traceback" not in screen and "Exception ignored" not in screen, screen


def test_a_piped_request_asks_its_approval_on_the_terminal(
    demo_db: Path, tmp_path: Path, terminal_env: Callable[[ScriptedServer], dict[str, str]]
) -> None:
    book = tool_use("toolu_tty_p1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30})
    with ScriptedServer([Reply([book], "tool_use"), Reply([text("Booked Monday 14:00.")])]) as server:
        ask = [*CLI, "ask", "-", "--db", str(demo_db), "--today", "2026-08-27T09:00", "--no-stream"]
        command = ["echo", "'Book Priya Monday 2pm'", "|", *ask, "; echo EXIT=$?"]
        terminal = Terminal(command, terminal_env(server), tmp_path)
        try:
            terminal.wait_for("Approve?")  # standard input is the pipe: the question comes on /dev/tty
            terminal.type("y")
            screen = terminal.wait_for("EXIT=")
        finally:
            terminal.close()
    assert "EXIT=0" in screen
    assert "Booked Monday 14:00." in screen
    assert server.received[0]["messages"][0]["content"][0]["text"] == "Book Priya Monday 2pm"
    conn = sqlite3.connect(demo_db)
    assert conn.execute("SELECT count(*) FROM bookings WHERE tool_use_id = 'toolu_tty_p1'").fetchone() == (1,)
