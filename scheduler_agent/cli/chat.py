"""The terminal chat: turns from standard input, slash commands, and Ctrl-C that never breaks the list.

Ctrl-C while waiting for the model cancels that request: the list ends with your turn, still
valid, and what you type next joins it. Ctrl-C during a tool run answers the round's calls as
interrupted (saying whether a booking happened) before it stops. Ctrl-C at the prompt clears the
line, as a shell does; a second one on an empty line, or Ctrl-D, leaves.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TextIO

from scheduler_agent.agent.errors import refuse_not_utf8
from scheduler_agent.agent.events import Event, ReplyReceived, RequestSent, TurnStarted
from scheduler_agent.cli.line_reader import edit_in_editor, read_multi
from scheduler_agent.cli.render import entry_lines
from scheduler_agent.cli.tables import entry_table, table
from scheduler_agent.session.session import Session

HELP = """Commands:
  /dump     the messages array as it stands, exactly as it will be sent
  /tokens   per iteration of the last turn: entries, input and output tokens, cache reads and writes
  /history  the conversation so far, one line per block
  /new      start a new conversation
  /multi    type several lines, then /end on a line of its own to send them as one message
  /edit     write the message in $EDITOR; it is sent when the editor exits
  /help     this list
  /quit     leave (Ctrl-D too)"""


@dataclass
class Iteration:
    entries: int
    usage: dict[str, int] = field(default_factory=dict)
    model: str = ""


class UsageLog:
    """Listens to the loop and keeps each iteration's size and token counts, turn by turn."""

    def __init__(self, estimated: bool = False) -> None:
        self.turns: list[list[Iteration]] = []
        self.estimated = estimated  # scripted replies (a replayed lesson): costs are estimates

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnStarted):
            self.turns.append([])
        elif isinstance(event, RequestSent):
            if not self.turns:
                self.turns.append([])
            self.turns[-1].append(Iteration(len(event.request["messages"])))
        elif isinstance(event, ReplyReceived) and self.turns and self.turns[-1]:
            usage = event.reply.get("usage") or {}
            self.turns[-1][-1].usage = {k: v for k, v in usage.items() if isinstance(v, int)}
            self.turns[-1][-1].model = str(event.reply.get("model", ""))

    def table(self) -> str:
        """The last turn, one row per iteration, then the turn's total; the cost from genai-prices."""
        from scheduler_agent.api.prices import price_of, total

        if not self.turns or not self.turns[-1]:
            return "No requests yet in this chat."
        keys = ("input_tokens", "output_tokens", "cache_read_input_tokens", "cache_creation_input_tokens")
        rows: list[tuple[str, ...]] = [("iteration", "entries", "input", "output", "cache read", "cache write")]
        totals = dict.fromkeys(keys, 0)
        costs = []
        for number, iteration in enumerate(self.turns[-1], start=1):
            values = [iteration.usage.get(key, 0) for key in keys]
            for key, value in zip(keys, values, strict=True):
                totals[key] += value
            costs.append(price_of(iteration.model, iteration.usage, estimated=self.estimated))
            rows.append((str(number), str(iteration.entries), *(f"{value:,}" for value in values)))
        rows.append(("turn", "", *(f"{totals[key]:,}" for key in keys)))
        cost_column = ["cost", *(cost.text() for cost in costs), total(costs).text()]
        lines = [f"{line}  {cost}" for line, cost in zip(table(rows, ">>>>>>"), cost_column, strict=True)]
        return "\n".join(lines)


ReadLine = Callable[[str], "str | None"]


@dataclass
class Chat:
    """One chat: `session` (replaced by /new), how to read a line, where to write."""

    session: Session
    new_session: Callable[[], Session]
    read_line: ReadLine
    out: TextIO
    err: TextIO
    usage: UsageLog
    prompt: str = "you> "
    on_interrupt: Callable[[], None] = lambda: None  # e.g. stop a spinner, end a half-written line
    pending: Callable[[], str] = lambda: ""  # what was on the line when Ctrl-C came
    editor: Callable[[], str] = edit_in_editor  # /edit
    on_line: Callable[[str], None] = lambda line: None  # hears every line typed (a recording keeps them)

    def read(self, prompt: str) -> str | None:
        line = self.read_line(prompt)
        if line is not None:
            self.on_line(line)
        return line

    def run(self) -> int:
        """Until /quit, Ctrl-D or a second Ctrl-C on an empty line; returns the exit code."""
        interrupted = False
        while True:
            try:
                line = self.read(self.prompt)
            except KeyboardInterrupt:
                if interrupted and not self.pending():
                    self.err.write("\n")
                    return 130
                interrupted = True
                self.err.write("\n(the line was cleared: Ctrl-C again on an empty line, or Ctrl-D, leaves)\n")
                continue
            interrupted = False
            if line is None:
                return 0
            text: str | None = line.strip()
            if not text:
                continue
            if text.startswith("/"):
                text = self.slash(text)
                if text == "/quit":
                    return 0
                if text is None:
                    continue
            refuse_not_utf8(text, "the line typed")  # before anything of it is stored
            try:
                self.session.ask(text)
            except KeyboardInterrupt:
                self.on_interrupt()
                self.err.write(f"\n{self.interrupted_note()}\n")

    def slash(self, text: str) -> str | None:
        """A slash command: "/quit", the text to send (/multi, /edit), or None when it was handled."""
        name = text.split()[0].lower()
        if name == "/multi":
            self.err.write("Type the message; /end on a line of its own sends it.\n")
            return (read_multi(self.read) or "").strip() or None
        if name == "/edit":
            try:
                written = self.editor()
            except OSError as exc:
                self.err.write(f"Nothing sent: {exc}.\n")
                return None
            if not written:
                self.err.write("Nothing sent: the message was empty.\n")
                return None
            self.err.write(f"{self.prompt}{written}\n")
            self.on_line(written)  # a replay sends the text written, it does not open an editor
            return written
        return "/quit" if self.command(text) == "quit" else None

    def interrupted_note(self) -> str:
        last = self.session.messages[-1] if self.session.messages else None
        if last and last["role"] == "user" and any(b.get("type") == "tool_result" for b in last["content"]):
            return "Interrupted: every call of the round was answered (saying whether anything was booked)."
        return "Cancelled. The list is intact and ends with your message; what you type next joins it."

    def command(self, text: str) -> str:
        name = text.split()[0].lower()
        if name in ("/quit", "/exit"):
            return "quit"
        if name == "/dump":
            self.out.write(json.dumps(self.session.messages, indent=2, ensure_ascii=False) + "\n")
        elif name == "/tokens":
            self.out.write(self.usage.table() + "\n")
        elif name == "/history":
            messages = self.session.messages
            rows = ((n, entry["role"], line) for n, entry in enumerate(messages) for line in entry_lines(entry))
            self.out.writelines(f"{line}\n" for line in entry_table(rows))
            if not self.session.messages:
                self.out.write("Nothing yet.\n")
        elif name == "/new":
            self.session = self.new_session()
            self.usage.turns.clear()
            self.err.write("Started a new conversation.\n")
        elif name == "/help":
            self.out.write(HELP + "\n")
        else:
            self.err.write(f"Unknown command {name}; /help lists them.\n")
        self.out.flush()
        return name


def replayed_commands(usage: UsageLog, out: TextIO, err: TextIO) -> Callable[[Session, str], None]:
    """What a replay does with a recorded chat's slash commands: shows them, and what they showed."""

    def show(session: Session, text: str) -> None:
        err.write(f"you> {text}\n")
        if text.split()[0].lower() == "/new":
            usage.turns.clear()
            err.write("Started a new conversation.\n")
            return
        Chat(session, lambda: session, lambda prompt: None, out, err, usage).command(text)

    return show
