"""One chat in a real terminal (tmux): the streamed answer appears, and the approval prompt is answered there.

tmux is required: .ci/run installs it, and this test fails (never skips) when it is missing.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

QUESTION = (
    "? Book 'Meeting with Priya Raman' on Mon 2026-08-31 14:00-14:30 (Europe/London) for you and Priya Raman (priya)"
)
ANSWER = "Booked Monday 2026-08-31 14:00-14:30 with Priya Raman, streamed word by word."


class Terminal:
    """A tmux session on its own socket, running one command; read with `screen()`, type with `type()`."""

    def __init__(self, command: list[str], env: dict[str, str], cwd: Path) -> None:
        self.socket = f"scheduler-agent-test-{uuid.uuid4().hex[:8]}"
        self.env, self.cwd = env, cwd
        # `; sleep 60` keeps the pane (and what it shows) after the command ends; close() ends it sooner.
        self.tmux("new-session", "-d", "-s", "chat", "-x", "160", "-y", "48", " ".join(command) + "; sleep 60")

    def tmux(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], env=self.env, cwd=self.cwd, capture_output=True, text=True, timeout=20
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self.tmux("capture-pane", "-p", "-J", "-t", "chat", "-S", "-100")

    def type(self, keys: str) -> None:
        self.tmux("send-keys", "-t", "chat", keys, "Enter")

    def wait_for(self, wanted: str | Callable[[str], bool], seconds: float = 20) -> str:
        ready = wanted if callable(wanted) else lambda screen: wanted in screen
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self.screen()
            if ready(screen):
                return screen
            time.sleep(0.1)
        raise AssertionError(f"the terminal never showed {wanted!r}; it shows:\n{self.screen()}")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], env=self.env, capture_output=True, timeout=20)


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
            assert "→ create_event(" in screen and "Event id: 29" in screen
            terminal.type("/quit")
            terminal.wait_for(lambda s: "you> /quit" in s)
        finally:
            terminal.close()
    # the answer streamed: it arrived as several text deltas over SSE, not as one body
    assert server.received[1]["stream"] is True
    assert len(server.received) == 2
