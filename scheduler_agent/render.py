"""How the CLI shows what the loop reports: a trace of each iteration, and the array dumps."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, TextIO

from scheduler_agent.events import (
    Event,
    GrammarWarning,
    ReplyReceived,
    RequestSent,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
    TurnStarted,
)


def entries(count: int) -> str:
    return f"{count} {'entry' if count == 1 else 'entries'}"


def request_size(request: dict[str, object]) -> int:
    return len(json.dumps(request, ensure_ascii=False, separators=(",", ":")).encode())


def call_line(call: dict[str, Any]) -> str:
    args = ", ".join(f"{k}={json.dumps(v, ensure_ascii=False)}" for k, v in call.get("input", {}).items())
    return f"{call['name']}({args})"


def usage_line(usage: dict[str, Any], estimated: bool) -> str:
    """Input tokens (with cache reads and writes), output tokens; marked when they are estimates."""
    cached = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    line = f"{usage.get('input_tokens', 0):,} input tokens"
    if cached or written:
        line += f" (+{cached:,} read from cache, +{written:,} written to it)"
    line += f", {usage.get('output_tokens', 0):,} output"
    return line + (" (estimates: the reply was scripted)" if estimated else "")


class Trace:
    """One block per iteration: what was sent and its size, what the model asked for, what each tool answered.

    `estimated`: the replies were scripted, so their token counts are estimates and say so."""

    def __init__(self, out: TextIO, estimated: bool = False, echo_input: bool = False) -> None:
        self.out = out
        self.estimated = estimated
        self.echo_input = echo_input  # replays show what the person typed; live sessions already have it

    def __call__(self, event: Event) -> None:
        match event:
            case TurnStarted(text) if self.echo_input:
                self.out.write(f"you> {text}\n")
            case RequestSent(iteration, request):
                size = request_size(request)
                sent = entries(len(request["messages"]))
                self.out.write(f"[iteration {iteration}] sending {sent} ({size:,} bytes)\n")
            case ReplyReceived(_, reply):
                if isinstance(reply.get("usage"), dict):
                    self.out.write(f"  usage: {usage_line(reply['usage'], self.estimated)}\n")
                for block in reply["content"]:
                    if block.get("type") == "text" and reply.get("stop_reason") == "tool_use":
                        self.out.write(f"  model: {block['text']}\n")
            case ToolCalled(_, call):
                self.out.write(f"  → {call_line(call)}\n")
            case ToolAnswered(_, _, result):
                mark = "  ✗ " if result.get("is_error") else "  ← "
                text = str(result["content"]).replace("\n", "\n    ")
                self.out.write(f"{mark}{text}\n")
            case GrammarWarning(violations):
                for violation in violations:
                    self.out.write(f"[warning] {violation}\n")
            case TurnEnded(outcome) if outcome.statement:
                self.out.write(f"[stopped] {outcome.statement}\n")
        self.out.flush()


class ArrayDump:
    """`--dump-array`: each iteration's `messages` as sent, pretty JSON under a header; the system prompt
    when it changes."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.system: object = None

    def __call__(self, event: Event) -> None:
        if not isinstance(event, RequestSent):
            return
        request = event.request
        if request.get("system") != self.system:
            self.system = request.get("system")
            self.out.write(f"=== system prompt (iteration {event.iteration}) ===\n{self.system}\n")
        count = entries(len(request["messages"]))
        self.out.write(f"=== iteration {event.iteration} · messages: {count} ===\n")
        self.out.write(json.dumps(request["messages"], indent=2, ensure_ascii=False) + "\n")
        self.out.flush()


class ArrayDumpFile:
    """`--dump-array-file`: one JSON object per iteration, `{iteration, messages, request}`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestSent):
            record = {"iteration": event.iteration, "messages": event.request["messages"], "request": event.request}
            with self.path.open("a", encoding="utf-8") as file:
                file.write(json.dumps(record, ensure_ascii=False) + "\n")


class Answers:
    """The model's final text of each turn, on stdout, as each turn ends."""

    def __init__(self, out: TextIO) -> None:
        self.out = out

    def __call__(self, event: Event) -> None:
        if isinstance(event, TurnEnded) and event.outcome.text:
            self.out.write(event.outcome.text + "\n")
            self.out.flush()
