"""The chat's input on a terminal: line editing and history (readline, as `llm chat` does), /multi, /edit.

The history is kept in `chat-history` in the data folder, readable by its owner only (0600): it holds
what was typed, which is as private as the conversations. Off a terminal, lines are read as they come.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from scheduler_agent.storage.db import data_dir

HISTORY_LENGTH = 1000


def history_path() -> Path:
    return data_dir() / "chat-history"


def from_standard_input(read: Callable[[], str]) -> str:
    """What `read` reads from standard input; where this Python decodes it strictly and it is not UTF-8, the
    bytes it stopped at, the bad ones as lone surrogates, so the caller's UTF-8 check refuses it the same way."""
    try:
        return read()
    except UnicodeDecodeError as exc:
        return exc.object.decode("utf-8", "surrogateescape")


class LineReader:
    """`read(prompt)`: one line (None at the end of input), edited with readline on a terminal."""

    def __init__(self, history: Path | None = None) -> None:
        self.terminal = sys.stdin.isatty()
        self.history = history or history_path()
        self.readline: Any = None
        self._interrupted_on = ""  # the line's text when the last Ctrl-C at the prompt came
        if self.terminal:
            import readline  # line editing and history for input(): arrows move, Up recalls

            self.readline = readline
            readline.set_history_length(HISTORY_LENGTH)
            with contextlib.suppress(OSError):  # no history yet
                readline.read_history_file(self.history)

    def read(self, prompt: str) -> str | None:
        if not self.terminal:
            line = from_standard_input(sys.stdin.readline)
            return line.rstrip("\n") if line else None
        try:
            line = input(prompt)
        except EOFError:
            sys.stderr.write("\n")
            return None
        except KeyboardInterrupt:
            self._interrupted_on = self.readline.get_line_buffer() if self.readline is not None else ""
            raise
        self._remember()
        return line

    def pending(self) -> str:
        """What was on the line when Ctrl-C came at the prompt (empty off a terminal)."""
        return self._interrupted_on

    def _remember(self) -> None:
        if self.readline is None:
            return
        try:
            self.history.parent.mkdir(parents=True, exist_ok=True)
            descriptor = os.open(self.history, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.close(descriptor)
            os.chmod(self.history, 0o600)
            self.readline.write_history_file(self.history)
        except OSError:
            pass  # a history that cannot be written is not worth stopping a chat for


def read_multi(read: Callable[[str], str | None], prompt: str = "... ") -> str | None:
    """/multi: lines until one that is `/end`, joined; None when input ends first."""
    lines: list[str] = []
    while True:
        line = read(prompt)
        if line is None:
            return None
        if line.strip() == "/end":
            return "\n".join(lines)
        lines.append(line)


def edit_in_editor(initial: str = "") -> str:
    """/edit: `click.edit` opens $VISUAL or $EDITOR (else an editor it finds) on a temporary 0600 file; the
    text written, '' when nothing was saved. An editor that fails is an OSError, said in one line by the chat."""
    import click

    try:
        written = click.edit(initial, extension=".md")
    except click.ClickException as exc:  # the editor could not start, or exited non-zero
        raise OSError(exc.message) from None
    return (written or "").strip()
