"""How the CLI shows what the loop reports: a trace of each iteration, the answers, and the array dumps.

The trace (stderr) and the answers (stdout) are listeners: give them every event, the trace first
(it erases its spinner before the first piece of streamed text is written). Colour, the spinner and
what is safe to print to a terminal are in cli/terminal.py.

Streamed text goes to stdout as it arrives, so what the trace has to say about a reply waits for
the next event: by then the answers have ended their line, and the two streams do not share one.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from scheduler_agent.agent.events import (
    ApprovalAnswered,
    ApprovalAsked,
    Event,
    GrammarWarning,
    ReplyReceived,
    ReplySetAside,
    RequestSent,
    Retrying,
    RoundAnswered,
    StillWaiting,
    TextDelta,
    ToolAnswered,
    ToolCalled,
    TurnEnded,
    TurnStarted,
)
from scheduler_agent.agent.loop import describe_call
from scheduler_agent.agent.replies import Fit, judge
from scheduler_agent.agent.request import encode
from scheduler_agent.agent.types import JSON
from scheduler_agent.cli.core import entries as entries  # re-exported: where they were
from scheduler_agent.cli.core import examples as examples
from scheduler_agent.cli.terminal import Spinner as Spinner  # re-exported: where the trace's parts were
from scheduler_agent.cli.terminal import Style
from scheduler_agent.cli.terminal import colour_for as colour_for
from scheduler_agent.cli.terminal import spinner_for as spinner_for
from scheduler_agent.cli.terminal import visible as visible
from scheduler_agent.storage.conversations import Reply
from scheduler_agent.storage.files import open_private, require_folder

if TYPE_CHECKING:
    from scheduler_agent.api.prices import Cost


def request_size(request: JSON) -> int:
    return len(encode(request))


def call_line(call: dict[str, Any]) -> str:
    """A call as the trace shows it: `describe_call`, made safe for a terminal."""
    return visible(describe_call(call))


def usage_line(usage: dict[str, Any], estimated: bool) -> str:
    """Input tokens (with cache reads and writes), output tokens; marked when they are estimates."""
    cached = usage.get("cache_read_input_tokens") or 0
    written = usage.get("cache_creation_input_tokens") or 0
    line = f"{usage.get('input_tokens', 0):,} input tokens"
    if cached or written:
        line += f" (+{cached:,} read from cache, +{written:,} written to it)"
    line += f", {usage.get('output_tokens', 0):,} output"
    return line + (" (estimates: the reply was scripted)" if estimated else "")


def reply_cost(reply: JSON, estimated: bool) -> Cost:
    """A reply's cost in money (prices.py loads its price list only when a cost is shown)."""
    from scheduler_agent.api.prices import price_of

    return price_of(str(reply.get("model", "")), reply.get("usage") or {}, estimated=estimated)


USAGE_KEYS = ("input_tokens", "cache_read_input_tokens", "cache_creation_input_tokens", "output_tokens")


def add_usage(total: dict[str, int], usage: object) -> None:
    """Add a reply's token counts to `total` (the four counts the API always or often sends)."""
    if isinstance(usage, dict):
        for key in USAGE_KEYS:
            value = usage.get(key)
            total[key] = total.get(key, 0) + (value if isinstance(value, int) else 0)


# --- the listeners --------------------------------------------------------------------------------


class Trace:
    """One block per iteration: what was sent and its size, what the model asked for, what each tool answered.

    `estimated`: the replies were scripted, so their token counts are estimates and say so.
    `usage`: a line of tokens per iteration and a total per turn (cache reads and writes included).
    `colour` / `spinner`: None decides from `out` and the environment (`colour_for`, `spinner_for`).
    What it says about a reply is written at the next event (or `close()`), after the answers have
    ended a streamed line. Call `close()` when a turn ends by an exception: no spinner is left turning."""

    def __init__(
        self,
        out: TextIO,
        estimated: bool = False,
        echo_input: bool = False,
        usage: bool = False,
        *,
        colour: bool | None = None,
        spinner: bool | None = None,
    ) -> None:
        self.out = out
        self.estimated = estimated
        self.echo_input = echo_input  # replays show what the person typed; live sessions already have it
        self.usage = usage
        self.style = Style(colour_for(out) if colour is None else colour)
        self.spinner = Spinner(out) if (spinner_for(out) if spinner is None else spinner) else None
        self.streamed = False  # the text of the current request's reply arrived as deltas (already shown)
        self.turn_usage: dict[str, int] = {}
        self.turn_cost: Cost | None = None
        self.turn_iterations = 0
        self.pending: list[str] = []  # the lines about the last reply, not yet written

    def __call__(self, event: Event) -> None:
        self.close()  # whatever happens next, the spinner is gone and the last reply's lines are out
        style = self.style
        match event:  # the events of every iteration first: each case is a type test
            case RequestSent(iteration, request, of, known):
                size = request_size(request) if known is None else known  # a Session keeps it by entry
                sent = entries(len(request["messages"]))
                if of is not None:
                    sent = f"{len(request['messages'])} of {entries(of)} (budget)"
                self.out.write(style(f"[iteration {iteration}] sending {sent} ({size:,} bytes)", "dim") + "\n")
                self.streamed = False
                self.out.flush()
                if self.spinner is not None:
                    self.spinner.start()
                return
            case ToolCalled(_, call):
                self.out.write(f"  {style('→', 'cyan')} {style(call_line(call), 'bold')}\n")
            case ToolAnswered(_, _, result):
                text = visible(result_text(result["content"])).replace("\n", "\n    ")
                if result.get("is_error"):
                    self.out.write(style(f"  ✗ {text}", "red", "bold") + "\n")
                else:
                    self.out.write(f"  {style('←', 'dim')} {text}\n")
            case TextDelta():
                self.streamed = True
                return
            case ReplyReceived(_, reply):
                self.pending = self._reply(reply)
                return
            case RoundAnswered():  # shown call by call already: nothing to say, nothing to flush
                return
            case TurnStarted(text):
                self.turn_usage, self.turn_iterations = {}, 0  # a turn an exception ended never sent TurnEnded
                self.turn_cost = None
                if self.echo_input:
                    self.out.write(f"{style('you>', 'bold')} {visible(text)}\n")
            case ReplySetAside(_, reply, fit, problems):
                self.turn_iterations += 1
                add_usage(self.turn_usage, reply.get("usage") if isinstance(reply, dict) else None)
                said = "the model answered with nothing" if fit == "empty" else "the model's reply could not be used"
                why = f": {'; '.join(problems)}" if problems else ""
                note = f"  {said}{why} (kept beside the conversation, not in the list)"
                self.out.write(style(visible(note), "yellow") + "\n")
            case Retrying(status, kind, wait, attempt, attempts):
                what = f"{status} {kind}" if status is not None else kind
                self.out.write(style(f"{what}: retrying in {wait:.1f} s (attempt {attempt} of {attempts})", "yellow"))
                self.out.write("\n")
                self.out.flush()
                if self.spinner is not None:
                    self.spinner.start()
                return
            case StillWaiting(waited, timeout):
                line = (
                    f"still waiting for the model's reply ({waited:.0f} s so far, at most {timeout:g} s: --timeout); "
                    "Ctrl-C stops it, and the conversation stays as it was"
                )
                self.out.write(style(line, "yellow") + "\n")
                self.out.flush()
                if self.spinner is not None:
                    self.spinner.start()
                return
            case ApprovalAsked(_, summary) if self.echo_input:  # live, the question itself was on screen
                self.out.write(f"  {style('?', 'cyan')} {summary}\n")
            case ApprovalAnswered(_, approved, reason, end_of_input) if self.echo_input:
                answer = "approved" if approved else "no answer (end of input)" if end_of_input else "declined"
                self.out.write(f"    {answer}{f': {reason}' if reason else ''} (the recorded answer)\n")
            case GrammarWarning(violations):
                for violation in violations:
                    self.out.write(style(f"[warning] {violation}", "yellow") + "\n")
            case TurnEnded(outcome):
                if self.usage and self.turn_iterations:
                    iterations = f"{self.turn_iterations} iteration{'' if self.turn_iterations == 1 else 's'}"
                    line = f"turn total ({iterations}): {usage_line(self.turn_usage, self.estimated)}"
                    if self.turn_cost is not None:
                        line += f" · {self.turn_cost.text()}"
                    self.out.write(style(line, "dim") + "\n")
                self.turn_usage, self.turn_iterations, self.turn_cost = {}, 0, None
                if outcome.statement:
                    self.out.write(style(f"[stopped] {visible(outcome.statement)}", "yellow") + "\n")
            case _:  # nothing to say (a round answered, a streamed event): nothing to flush
                return
        self.out.flush()

    def _reply(self, reply: dict[str, Any]) -> list[str]:
        """The lines about a reply: its usage, and the text of a reply that asks for tools (unless streamed)."""
        self.turn_iterations += 1
        add_usage(self.turn_usage, reply.get("usage"))
        lines = []
        if self.usage and isinstance(reply.get("usage"), dict):
            cost = reply_cost(reply, self.estimated)
            self.turn_cost = cost if self.turn_cost is None else self.turn_cost + cost
            line = f"  usage: {usage_line(reply['usage'], self.estimated)} · {cost.text()}"
            lines.append(self.style(line, "dim"))
        if not self.streamed:  # streamed text is on stdout already, as it arrived
            for block in reply["content"]:
                if block.get("type") == "text" and reply.get("stop_reason") == "tool_use":
                    lines.append(f"  model: {visible(str(block.get('text')))}")
        return lines

    def close(self) -> None:
        """Stop the spinner, erasing it, and write what is pending (call it when a turn ends by an exception)."""
        if self.spinner is not None:
            self.spinner.stop()
        if self.pending:
            self.out.write("".join(line + "\n" for line in self.pending))
            self.pending = []
            self.out.flush()


_SET_BY_THE_AGENT = {"max_tokens", "messages", "model", "cache_control", "stream", "system", "tools"}


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
        options = {key: value for key, value in request.items() if key not in _SET_BY_THE_AGENT}
        if options:  # a person's -o keys, as sent
            self.out.write(f"options: {json.dumps(options, ensure_ascii=False)}\n")
        self.out.write(json.dumps(request["messages"], indent=2, ensure_ascii=False) + "\n")
        self.out.flush()


class ArrayDumpFile:
    """`--dump-array-file`: one JSON object per iteration, `{iteration, messages, request}`."""

    def __init__(self, path: Path) -> None:
        self.path = path
        require_folder(path, "--dump-array-file")  # no folders are made for a path the person gives

    def __call__(self, event: Event) -> None:
        if isinstance(event, RequestSent):
            record = {"iteration": event.iteration, "messages": event.request["messages"], "request": event.request}
            with open_private(self.path, "a") as file:  # a new dump is 0600: it holds the conversation
                file.write(json.dumps(record, ensure_ascii=False) + "\n")


class Answers:
    """The model's text on stdout: streamed text as it arrives, otherwise each turn's final text as it ends.

    A turn whose last reply was streamed is not printed again when it ends."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.streamed = False  # the current request's reply came as text deltas
        self.open_line = False  # streamed text was written without its last newline

    def __call__(self, event: Event) -> None:
        match event:
            case RequestSent():
                self.streamed = False
            case TextDelta(_, text):
                self.streamed = True
                if text:
                    self.out.write(visible(text))
                    self.out.flush()
                    self.open_line = not text.endswith("\n")
            case ReplyReceived() | ReplySetAside():
                self.close()
            case TurnEnded(outcome):
                self.close()
                if outcome.text and not self.streamed:
                    self.out.write(visible(outcome.text) + "\n")
                    self.out.flush()

    def close(self) -> None:
        """End a line of streamed text (the reply arrived, or the stream was interrupted)."""
        if self.open_line:
            self.out.write("\n")
            self.out.flush()
            self.open_line = False


def entry_lines(entry: dict[str, Any]) -> list[str]:
    """An entry as lines for `conversations show`, control and bidi characters made visible."""
    return [visible(line) for line in _entry_lines(entry)]


def _entry_lines(entry: dict[str, Any]) -> list[str]:
    content = entry["content"]
    if isinstance(content, str):
        return [content]
    lines = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            lines.append(str(block.get("text")))
        elif kind == "tool_use":
            lines.append(f"→ {call_line(block)}  [{block.get('id')}]")
        elif kind == "tool_result":
            mark = "✗" if block.get("is_error") else "←"
            text = block.get("content")
            text = text if isinstance(text, str) else json.dumps(text)
            lines.append(f"{mark} {text.splitlines()[0] if text else ''}  [{block['tool_use_id']}]")
        else:
            lines.append(json.dumps(block))
    return lines


def set_aside_lines(replies: list[Reply]) -> list[str]:
    """The replies kept beside the list (not appended, never sent back), each with why and its usage."""
    lines = []
    for reply in replies:
        if reply.appended or reply.body is None:
            continue
        verdict = judge(reply.body)
        said = (
            "the model answered with nothing"
            if verdict.fit is Fit.EMPTY
            else f"the model's reply could not be used: {'; '.join(verdict.problems) or 'unreadable'}"
        )
        usage = usage_line(reply.usage, False) if reply.usage else "no usage"
        where = f"after [{reply.position - 1}]" if reply.position else "at the start"
        lines.append(visible(f"({where}) kept beside the list: {said} (stop_reason {reply.stop_reason!r}; {usage})"))
    return lines


def result_text(content: object) -> str:
    """A tool_result's content as the trace shows it: its text, an image (an MCP server's) named in brackets."""
    if not isinstance(content, list):
        return str(content)
    return "\n".join(str(b.get("text", "")) if b.get("type") == "text" else f"[{b.get('type')}]" for b in content)
