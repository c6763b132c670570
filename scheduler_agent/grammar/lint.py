"""`scheduler-agent lint PATH`: the grammar check on a file, one line per violation.

It reads four kinds of file:

- a JSON array of messages, or a JSON object with `messages` (a conversation: it may end with the
  assistant's answer, and one that ends with unanswered calls is reported as interrupted);
- a `--dump-array-file` dump: one JSON object per line, `{"iteration", "messages", "request"}`, each
  `messages` checked as a request;
- a cassette (.yaml/.yml): each interaction's request body checked as a request, and each assistant turn
  compared with the response it came from (the provider's own content).

Exit codes: 0 clean, 1 violations, 6 a conversation that is only interrupted.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import yaml

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.api import sse
from scheduler_agent.grammar import check as grammar

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_INTERRUPTED = 6

Kind = Literal["conversation", "dump", "cassette"]


@dataclass(frozen=True)
class LintResult:
    """What to print (`lines`, one per violation, `path: where: cause`) and the exit code."""

    path: Path
    kind: Kind
    lines: list[str] = field(default_factory=list)
    exit_code: int = EXIT_CLEAN
    checked: int = 0  # message lists checked: 1 for a conversation, one per line or per request otherwise
    summary: str = ""


def lint_file(path: Path) -> LintResult:
    """Check every message list in the file at `path`. Raises AgentError when it cannot be read."""
    text = _read(path)
    if path.suffix.lower() in (".yaml", ".yml"):
        return _lint_cassette(path, text)
    try:
        data = json.loads(text)
    except ValueError as whole:
        records = _json_lines(path, text, whole)
        return _lint_dump(path, records)
    if isinstance(data, Mapping) and "iteration" in data and "messages" in data:
        return _lint_dump(path, [(1, data)])  # a dump of a single iteration
    if isinstance(data, list):
        return _lint_conversation(path, data)
    if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
        return _lint_conversation(path, data["messages"])
    raise AgentError(
        f"{path} is JSON but not a message list: give an array of messages, an object with a "
        '"messages" array, a --dump-array-file dump, or a cassette (.yaml)'
    )


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise AgentError(f"No file at {path}: give a JSON array of messages, a dump or a cassette") from None
    except (OSError, UnicodeDecodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
        raise AgentError(f"Cannot read {path}: {reason}") from None


def _json_lines(path: Path, text: str, whole: ValueError) -> list[tuple[int, Any]]:
    """The records of a JSON-lines dump; the file's own JSON error when it is neither JSON nor JSON lines."""
    records: list[tuple[int, Any]] = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            records.append((number, json.loads(line)))
        except ValueError as exc:
            error = f"{whole}" if not records else f"line {number}: {exc}"
            raise AgentError(
                f"{path} is not valid JSON ({error}); lint reads a JSON array of messages, "
                "a --dump-array-file dump (JSON lines) or a cassette (.yaml)"
            ) from None
    if not records:
        raise AgentError(f"{path} is empty: lint reads a JSON array of messages, a dump or a cassette (.yaml)")
    return records


def _line(path: Path, prefix: str, violation: grammar.Violation) -> str:
    return f"{path}: {prefix}{violation.where}: {violation.cause}"


def _result(path: Path, kind: Kind, lines: list[str], checked: int, what: str) -> LintResult:
    if lines:
        summary = f"{path}: {len(lines)} violation{'' if len(lines) == 1 else 's'} in {what}"
        return LintResult(path, kind, lines, EXIT_VIOLATIONS, checked, summary)
    return LintResult(path, kind, [], EXIT_CLEAN, checked, f"{path}: clean ({what})")


# --- a conversation ------------------------------------------------------------------------------------


def _lint_conversation(path: Path, messages: list[Any]) -> LintResult:
    lines = [_line(path, "", v) for v in grammar.check(messages, mode="conversation")]
    what = f"a conversation of {len(messages)} entr{'y' if len(messages) == 1 else 'ies'}"
    if grammar.conversation_state(messages) != "interrupted":
        return _result(path, "conversation", lines, 1, what)
    note = f"{path}: {interruption_note(messages)}"
    if lines:
        found = _result(path, "conversation", lines, 1, what)
        return LintResult(path, "conversation", [*lines, note], EXIT_VIOLATIONS, 1, found.summary)
    return LintResult(path, "conversation", [note], EXIT_INTERRUPTED, 1, f"{path}: interrupted ({what})")


def interruption_note(messages: Sequence[Any], conversation_id: str | None = None) -> str:
    """One line for a list that ends with unanswered calls: which calls, and how to finish the round."""
    calls = grammar.unanswered_calls(messages)
    named = ", ".join(f"{call.get('name', '?')} ({call.get('id', 'no id')})" for call in calls)
    where = f"messages[{len(messages) - 1}]"
    head = f"interrupted: the last assistant turn ({where}) asked for {named} and the list holds no results for them"
    if conversation_id is not None:
        return f"{head}; finish the round with `scheduler-agent resume {conversation_id}`"
    return (
        f"{head}; if it is a stored conversation, finish the round with `scheduler-agent resume ID`, otherwise "
        "append a user turn with one tool_result per call id"
    )


# --- a dump: one request's messages per line -------------------------------------------------------------


def _lint_dump(path: Path, records: list[tuple[int, Any]]) -> LintResult:
    iterations = [r.get("iteration") if isinstance(r, Mapping) else None for _, r in records]
    unique = len(set(map(str, iterations))) == len(iterations)
    lines: list[str] = []
    for (number, record), iteration in zip(records, iterations, strict=True):
        if iteration is None:
            prefix = f"line {number}: "
        elif unique:
            prefix = f"iteration {iteration}: "
        else:  # several turns in one file: iterations count again from 1 in each
            prefix = f"line {number} (iteration {iteration}): "
        messages = record.get("messages") if isinstance(record, Mapping) else None
        if not isinstance(messages, list):
            lines.append(f'{path}: {prefix}not a dump record: it has no "messages" array')
            continue
        lines += [_line(path, prefix, v) for v in grammar.check(messages, mode="request")]
    return _result(path, "dump", lines, len(records), f"{len(records)} request{'' if len(records) == 1 else 's'}")


# --- a cassette: each recorded request, and each answer it carried -------------------------------------


def _lint_cassette(path: Path, text: str) -> LintResult:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        raise AgentError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None
    interactions = data.get("interactions") if isinstance(data, Mapping) else None
    if not isinstance(interactions, list):
        raise AgentError(f'{path} is not a cassette: it has no "interactions" list')
    lines: list[str] = []
    previous: list[Any] | None = None  # the messages of the last request that got an answer
    answer: list[Any] | None = None  # that answer's content, as received
    for number, interaction in enumerate(interactions, start=1):
        prefix = f"request {number}: "
        body = _body(interaction, "request")
        messages = body.get("messages") if isinstance(body, Mapping) else None
        if not isinstance(messages, list):
            lines.append(f'{path}: {prefix}the request body has no "messages" array')
            continue
        raw: dict[int, Any] = {}
        if previous is not None and answer is not None and _extends(messages, previous):
            raw[len(previous)] = answer  # the assistant turn that answer became
        lines += [_line(path, prefix, v) for v in grammar.check(messages, mode="request", raw=raw)]
        reply = _body(interaction, "response") or _streamed(interaction)
        content = reply.get("content") if isinstance(reply, Mapping) else None
        if isinstance(content, list):
            previous, answer = messages, content
    return _result(
        path,
        "cassette",
        lines,
        len(interactions),
        f"{len(interactions)} request{'' if len(interactions) == 1 else 's'}",
    )


def _streamed(interaction: object) -> Any:
    """A recorded stream of server-sent events, assembled into the message it made (None if it is not one)."""
    part = interaction.get("response") if isinstance(interaction, Mapping) else None
    body = part.get("body") if isinstance(part, Mapping) else None
    text = body.get("string") if isinstance(body, Mapping) else None
    if not isinstance(text, str) or not text.lstrip().startswith("event:"):
        return None
    try:
        return sse.assemble(sse.parse(text))
    except (sse.IncompleteStream, KeyError, IndexError, TypeError):
        return None


def _extends(messages: list[Any], previous: list[Any]) -> bool:
    return len(messages) > len(previous) and messages[: len(previous)] == previous


def _body(interaction: object, side: Literal["request", "response"]) -> Any:
    """A request or response body as JSON, from the `{"json": ...}` structure `cassette_file.ReadableYaml` writes
    (or from a JSON string, as vcrpy's own format stores it)."""
    part = interaction.get(side) if isinstance(interaction, Mapping) else None
    body = part.get("body") if isinstance(part, Mapping) else None
    if side == "response" and isinstance(body, Mapping):
        body = body.get("string")
    if isinstance(body, Mapping) and set(body) == {"json"}:
        return body["json"]
    if isinstance(body, bytes):
        body = body.decode("utf-8", errors="replace")
    if isinstance(body, str):
        try:
            return json.loads(body)
        except ValueError:
            return None
    return None
