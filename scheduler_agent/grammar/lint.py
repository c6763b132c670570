"""`scheduler-agent lint PATH`: the grammar check on a file, one line per finding.

It reads four kinds of file:

- a JSON array of messages, or a JSON object with `messages` (a conversation: it may end with the
  assistant's answer, and one that ends with unanswered calls is reported as interrupted);
- a `--dump-array-file` dump: one JSON object per line, `{"iteration", "messages", "request"}`, each
  `messages` checked as a request;
- a cassette (.yaml/.yml, or a vcrpy JSON cassette): each Messages API request checked as a request,
  and each assistant turn compared with the response it came from (the provider's own content); the
  formats people have are read (`recorded.py`), other interactions are skipped and counted.

Each finding is an error (the API rejects the list) or a warning (it accepts it; the line says
`warning:`). Exit codes: 0 clean or warnings only, 1 errors (or warnings, with `strict`), 6 a
conversation that is only interrupted.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from scheduler_agent.agent.errors import AgentError, too_deeply_nested
from scheduler_agent.api import sse
from scheduler_agent.grammar import check as grammar
from scheduler_agent.grammar import recorded

EXIT_CLEAN = 0
EXIT_VIOLATIONS = 1
EXIT_INTERRUPTED = 6

Kind = Literal["conversation", "dump", "cassette"]


@dataclass(frozen=True)
class LintResult:
    """What to print (`lines`: one per finding, `path: where: cause`, warnings `path: where: warning: cause`;
    and notes, such as a response that could not be read) and the exit code."""

    path: Path
    kind: Kind
    lines: list[str] = field(default_factory=list)
    exit_code: int = EXIT_CLEAN
    checked: int = 0  # message lists checked: 1 for a conversation, one per line or per request otherwise
    summary: str = ""
    errors: int = 0
    warnings: int = 0
    skipped: int = 0  # cassette interactions that are not Messages API requests


@dataclass
class _Found:
    """The findings gathered while reading one file."""

    path: Path
    strict: bool
    lines: list[str] = field(default_factory=list)
    errors: int = 0
    warnings: int = 0

    def add(self, prefix: str, violations: Sequence[grammar.Violation]) -> None:
        for violation in violations:
            if violation.level == "error":
                self.errors += 1
                self.lines.append(f"{self.path}: {prefix}{violation.where}: {violation.cause}")
            else:
                self.warnings += 1
                self.lines.append(f"{self.path}: {prefix}{violation.where}: warning: {violation.cause}")

    def error(self, text: str) -> None:
        self.errors += 1
        self.lines.append(f"{self.path}: {text}")

    def note(self, text: str) -> None:
        self.lines.append(f"{self.path}: {text}")

    @property
    def failed(self) -> bool:
        return bool(self.errors or (self.strict and self.warnings))

    def result(self, kind: Kind, checked: int, what: str, skipped: int = 0, ok: str = "") -> LintResult:
        aside = f"; skipped {skipped} interaction{'' if skipped == 1 else 's'} that are not Messages API requests"
        aside = aside if skipped else ""
        count = self.errors + self.warnings
        if not count:
            summary = f"{self.path}: ok ({ok or what}{aside})"
        else:
            levels = f"{_plural(self.errors, 'error')}, {_plural(self.warnings, 'warning')}"
            strict = "; --strict: warnings fail" if self.strict and self.warnings else ""
            summary = f"{self.path}: {_plural(count, 'violation')} ({levels}{strict}) in {what}{aside}"
        exit_code = EXIT_VIOLATIONS if self.failed else EXIT_CLEAN
        return LintResult(self.path, kind, self.lines, exit_code, checked, summary, self.errors, self.warnings, skipped)


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}{'' if count == 1 else 's'}"


def lint_file(path: Path, *, strict: bool = False) -> LintResult:
    """Check every message list in the file at `path`. Raises AgentError when it cannot be read.

    `strict`: warnings (what the API accepts) fail too, as SCHEDULER_AGENT_STRICT=1 does before a request.
    """
    try:
        return _lint_text(path, _read(path), _Found(path, strict))
    except RecursionError:  # the parsers and the checks recurse once a level
        raise Unreadable(str(too_deeply_nested(path))) from None
    except AgentError as exc:  # missing, unreadable, not JSON, not a list: a usage problem, not a finding
        raise Unreadable(str(exc)) from None


class Unreadable(AgentError):
    """The file given to lint cannot be read as a message list: exit 2, as the exit-code table reserves for a
    usage problem (1 is for a list with errors)."""

    exit_code = 2


def _lint_text(path: Path, text: str, found: _Found) -> LintResult:
    if path.suffix.lower() in (".yaml", ".yml"):
        return _lint_cassette(path, _load_yaml(path, text), found)
    try:
        data = json.loads(text)
    except ValueError as whole:
        records = _json_lines(path, text, whole)
        return _lint_dump(records, found)
    if isinstance(data, Mapping) and "iteration" in data and "messages" in data:
        return _lint_dump([(1, data)], found)  # a dump of a single iteration
    if isinstance(data, Mapping) and isinstance(data.get("interactions"), list):
        return _lint_cassette(path, data, found)  # vcrpy's JSON serializer
    if isinstance(data, list):
        return _lint_conversation(data, found)
    if isinstance(data, Mapping) and isinstance(data.get("messages"), list):
        return _lint_conversation(data["messages"], found)
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


# --- a conversation ------------------------------------------------------------------------------------


def _lint_conversation(messages: list[Any], found: _Found) -> LintResult:
    found.add("", grammar.check(messages, mode="conversation"))
    entries = f"{len(messages)} entr{'y' if len(messages) == 1 else 'ies'}"
    what = f"a conversation of {entries}"
    if grammar.conversation_state(messages) != "interrupted":
        return found.result("conversation", 1, what, ok=entries)
    found.note(interruption_note(messages))
    result = found.result("conversation", 1, what)
    if found.failed:
        return result
    summary = f"{found.path}: interrupted ({what})" if not found.warnings else result.summary
    return LintResult(found.path, "conversation", result.lines, EXIT_INTERRUPTED, 1, summary, 0, found.warnings)


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


def _lint_dump(records: list[tuple[int, Any]], found: _Found) -> LintResult:
    iterations = [r.get("iteration") if isinstance(r, Mapping) else None for _, r in records]
    unique = len(set(map(str, iterations))) == len(iterations)
    for (number, record), iteration in zip(records, iterations, strict=True):
        if iteration is None:
            prefix = f"line {number}: "
        elif unique:
            prefix = f"iteration {iteration}: "
        else:  # several turns in one file: iterations count again from 1 in each
            prefix = f"line {number} (iteration {iteration}): "
        messages = record.get("messages") if isinstance(record, Mapping) else None
        if not isinstance(messages, list):
            found.error(f'{prefix}not a dump record: it has no "messages" array')
            continue
        found.add(prefix, grammar.check(messages, mode="request"))  # this project's requests: no prefill
    return found.result("dump", len(records), _plural(len(records), "request"))


# --- a cassette: each recorded request, and each answer it carried -------------------------------------


def _load_yaml(path: Path, text: str) -> Any:
    import yaml  # about 10 ms: only a cassette (YAML) loads it, never a JSON list or a dump

    try:
        return recorded.load_yaml(text)
    except yaml.YAMLError as exc:
        raise AgentError(f"{path} is not valid YAML: {' '.join(str(exc).split())}") from None


def _lint_cassette(path: Path, data: Any, found: _Found) -> LintResult:
    interactions = data.get("interactions") if isinstance(data, Mapping) else None
    if not isinstance(interactions, list):
        raise AgentError(f'{path} is not a cassette: it has no "interactions" list')
    previous: list[Any] | None = None  # the messages of the last request that got an answer
    answer: list[Any] | None = None  # that answer's content, as received
    checked = skipped = 0
    unknown_events: Counter[str] = Counter()
    for number, interaction in enumerate(interactions, start=1):
        if not recorded.is_messages_api(interaction):
            skipped += 1
            continue
        checked += 1
        prefix = f"request {number}: "
        try:
            messages = recorded.request_messages(interaction)
        except recorded.Unreadable as exc:
            found.error(f"{prefix}{exc}")
            continue
        if not isinstance(messages, list):
            found.error(f'{prefix}the request body has no "messages" array')
            continue
        raw: dict[int, Any] = {}
        if previous is not None and answer is not None and _extends(messages, previous):
            raw[len(previous)] = answer  # the assistant turn that answer became
        # recorded traffic of any model: a prefill is a warning, since some models take it
        found.add(prefix, grammar.check(messages, mode="request", raw=raw, prefill_refused=False))
        try:
            reply = recorded.response_message(interaction, unknown_events)
        except (recorded.Unreadable, sse.IncompleteStream) as exc:
            found.note(f"response {number}: not checked against the next request ({exc})")
            continue
        content = reply.get("content") if isinstance(reply, Mapping) else None
        if isinstance(content, list):
            previous, answer = messages, content
    if not checked:  # nothing was checked: saying "clean" would pass a file this never read
        api = f"https://{recorded.MESSAGES_HOST}{recorded.MESSAGES_PATH}"
        held = f"none of its {_plural(skipped, 'interaction')} is a request to {api}" if skipped else "no interactions"
        raise AgentError(f"{path} holds no Messages API request to check ({held}): give a cassette of that traffic")
    if unknown_events:
        named = ", ".join(f"{name} ({count})" for name, count in sorted(unknown_events.items()))
        found.note(f"skipped stream events of types the assembler does not know: {named}")
    return found.result("cassette", checked, _plural(checked, "request"), skipped)


def _extends(messages: list[Any], previous: list[Any]) -> bool:
    return len(messages) > len(previous) and messages[: len(previous)] == previous
