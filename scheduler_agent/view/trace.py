"""A trace: the requests of a session as one list of entries, each embedded once, and each request a view of it.

Every source (a stored conversation, a cassette, a `--dump-array-file`) gives a list of `Exchange`s: the
messages a request sent, what else it carried, and the reply when it is known. `assemble` turns them into
a `Trace`: the distinct entries in the order they were first seen, and each request as the indices of the
entries it sent (its prefix, less any trim), so a page built from it grows with the conversation, not with
its square. Pure: no files, no HTML.
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from scheduler_agent.agent.trim import estimate_tokens
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar import check as grammar


@dataclass(frozen=True)
class Exchange:
    """One request as a source knows it, and its reply if the source has one."""

    messages: Sequence[JSON]
    system: Any = None  # a string or a list of blocks; None when the source does not say
    tools: Sequence[JSON] | None = None
    model: str | None = None
    request_bytes: int | None = None  # as measured when it was sent; else computed from the body
    reply: JSON | None = None  # the reply's body: content, stop_reason, usage
    usage_estimated: bool = False  # the usage in `reply` is an estimate (scripted replies)
    status: str | None = None  # a request that got no reply: "HTTP 529 overloaded_error", ...
    body: JSON | None = None  # the whole request body, when the source has it


@dataclass(frozen=True)
class Finding:
    """A grammar violation, placed at the entry (and block) it is about."""

    request: int  # the request (0-based) whose check found it
    entry: int  # the global entry index
    block: int | None
    where: str  # as the check said it, relative to that request's array
    cause: str
    warning: bool  # the API would accept it (only a warning unless strict)


@dataclass
class Request:
    """One request of the trace: which entries it sent, and what it cost."""

    number: int  # 1-based, in the order sent
    turn: int
    iteration: int
    indices: list[int]
    new: list[int]  # the indices not in the previous request that got a reply (a retry resends, adds nothing)
    bytes: int
    model: str | None
    system_version: int
    tools_version: int
    usage: JSON | None  # as the reply reported it, or estimated (see `usage_estimated`)
    usage_estimated: bool
    reply_entry: int | None  # the entry the reply became (or was kept as), if known
    stop_reason: str | None
    status: str | None
    new_bytes: int = 0  # the bytes of what this request sent for the first time (new entries, a new system/tools)

    def ranges(self) -> list[tuple[int, int]]:
        """The indices as runs of consecutive entries, `(first, last)` inclusive."""
        runs: list[tuple[int, int]] = []
        for index in self.indices:
            if runs and runs[-1][1] == index - 1:
                runs[-1] = (runs[-1][0], index)
            else:
                runs.append((index, index))
        return runs

    def dropped(self) -> list[tuple[int, int]]:
        """Runs of earlier entries this request did not send (a trim): gaps below its last index."""
        runs, previous = [], -1
        for first, last in self.ranges():
            if first > previous + 1:
                runs.append((previous + 1, first - 1))
            previous = last
        return runs


@dataclass
class Trace:
    entries: list[JSON]
    requests: list[Request]
    systems: list[Any]  # distinct system prompts, in order of first use
    tools: list[list[JSON]]  # distinct tool lists
    home: list[int]  # per entry: the request (0-based) under which it is shown in full; -1: never sent
    findings: list[Finding] = field(default_factory=list)
    title: str = ""
    notes: list[str] = field(default_factory=list)  # what the reader should know about the source


def canonical(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def size(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode())


class _Entries:
    """The distinct entries, found again by content: a later request's copy of an entry is the same entry."""

    def __init__(self) -> None:
        self.items: list[JSON] = []
        self.by_key: dict[str, list[int]] = {}
        self.keys: dict[int, str] = {}  # id() of an object already seen -> its key (stored slices share objects)
        self.kept: list[Any] = []  # keeps those objects alive, so their ids stay theirs

    def key(self, entry: Any) -> str:
        known = self.keys.get(id(entry))
        if known is None:
            known = self.keys[id(entry)] = canonical(entry)
            self.kept.append(entry)
        return known

    def add(self, entry: JSON) -> int:
        self.items.append(entry)
        self.by_key.setdefault(self.key(entry), []).append(len(self.items) - 1)
        return len(self.items) - 1

    def match(self, messages: Sequence[JSON]) -> list[int]:
        """Each message's index: the first equal entry after the previous match, or a new entry."""
        indices, after = [], 0
        for message in messages:
            if after < len(self.items) and self.items[after] is message:  # a stored list's slice: the same objects
                index = after
            else:
                seen = self.by_key.get(self.key(message), [])
                at = bisect.bisect_left(seen, after)
                index = seen[at] if at < len(seen) else self.add(message)
            indices.append(index)
            after = index + 1
        return indices


def _version(versions: list[Any], value: Any) -> int:
    if value is None:
        return len(versions) - 1 if versions else -1
    if not versions or canonical(versions[-1]) != canonical(value):
        versions.append(value)
    return len(versions) - 1


def _spoken(entry: Any) -> bool:
    """A user turn holding something the person said (the loop's `is_user_input`), tolerant of odd input."""
    if not isinstance(entry, dict) or entry.get("role") != "user":
        return False
    content = entry.get("content")
    if isinstance(content, str):
        return True
    return isinstance(content, list) and any(
        not (isinstance(b, dict) and b.get("type") == "tool_result") for b in content
    )


def _reply_entry(reply: JSON | None) -> JSON | None:
    if not reply or not isinstance(reply.get("content"), list):
        return None
    return {"role": "assistant", "content": reply["content"]}


def _usage(exchange: Exchange, body: JSON) -> tuple[JSON | None, bool]:
    usage = exchange.reply.get("usage") if exchange.reply else None
    if isinstance(usage, dict):
        return usage, exchange.usage_estimated
    if exchange.status is not None:
        return None, False
    estimate: JSON = {"input_tokens": max(1, estimate_tokens({k: v for k, v in body.items() if k != "stream"}))}
    return estimate, True


def assemble(
    exchanges: Sequence[Exchange], *, title: str = "", notes: Sequence[str] = (), rest: Sequence[JSON] = ()
) -> Trace:
    """The trace of `exchanges`; `rest` is the whole list as it ends (a stored conversation), whose entries
    after the last request (results never sent, a turn waiting for the model) are kept with home -1."""
    entries = _Entries()
    systems: list[Any] = []
    tools: list[list[JSON]] = []
    requests: list[Request] = []
    home: dict[int, int] = {}
    findings: list[Finding] = []
    checker = grammar.IncrementalChecker()
    checked: list[JSON] = []  # the entries of the last request checked, extended in place while requests extend
    previous: list[int] = []
    answered: list[int] | None = None  # the indices of the last request that got a reply
    previous_messages: Sequence[JSON] | None = None
    previous_reply: JSON | None = None
    turn, spoken_at = 0, -1
    kinds: dict[int, Any] = {}  # per entry: "spoken" (the person spoke), else its role
    for number, exchange in enumerate(exchanges):
        indices = entries.match(exchange.messages)
        if answered is not None and indices[: len(answered)] == answered:
            new = indices[len(answered) :]  # the usual case: the array grew at its end
        else:
            sent_before = set(answered or [])
            new = [i for i in indices if i not in sent_before]
        for index in new:  # an entry is new in the first request that sends it
            home.setdefault(index, number)
        iteration = 1  # the model calls since the person last spoke, counted back from the end (as the loop does)
        for index in reversed(indices):
            if index not in kinds:
                item = entries.items[index]
                kinds[index] = "spoken" if _spoken(item) else item.get("role") if isinstance(item, dict) else None
            if kinds[index] == "spoken":
                if index != spoken_at:
                    turn, spoken_at = turn + 1, index
                break
            iteration += kinds[index] == "assistant"
        before = (len(systems), len(tools))
        system_version = _version(systems, exchange.system)
        tools_version = _version(tools, list(exchange.tools) if exchange.tools is not None else None)
        body = exchange.body or {
            "messages": list(exchange.messages),
            "system": exchange.system,
            "tools": list(exchange.tools or []),
        }
        request_bytes = exchange.request_bytes if exchange.request_bytes is not None else size(body)
        new_bytes = sum(size(entries.items[i]) for i in new)
        if len(systems) > before[0] and exchange.system is not None:
            new_bytes += size(exchange.system)
        if len(tools) > before[1] and exchange.tools is not None:
            new_bytes += size(list(exchange.tools))
        usage, estimated = _usage(exchange, body)
        reply = _reply_entry(exchange.reply)
        reply_index = None
        if reply is not None:
            reply_index = entries.add(reply)
            home.setdefault(reply_index, number)
        raw = {}
        if (
            previous_messages is not None
            and previous_reply is not None
            and _extends(exchange.messages, previous_messages)
        ):
            raw[len(previous_messages)] = previous_reply
        if previous and indices[: len(previous)] == previous:  # an extension: the checker examines only what was added
            checked.extend(entries.items[i] for i in indices[len(previous) :])
        else:
            checked = [entries.items[i] for i in indices]
        for violation in checker.check(checked, mode="request", raw=raw):
            findings.append(_finding(number, indices, violation))
        requests.append(
            Request(
                number + 1,
                max(turn, 1),
                iteration,
                indices,
                new,
                request_bytes,
                exchange.model,
                system_version,
                tools_version,
                usage,
                estimated,
                reply_index,
                exchange.reply.get("stop_reason") if exchange.reply else None,
                exchange.status,
                request_bytes if answered is None else min(new_bytes, request_bytes),  # the first one is all new
            )
        )
        previous, previous_messages = indices, exchange.messages
        if exchange.status is None:
            answered = indices
        previous_reply = exchange.reply.get("content") if exchange.reply else None
    if rest:
        entries.match(rest)
    homes = [home.get(i, -1) for i in range(len(entries.items))]
    return Trace(entries.items, requests, systems, tools, homes, _unique(findings), title, list(notes))


def _extends(messages: Sequence[JSON], previous: Sequence[JSON]) -> bool:
    return len(messages) > len(previous) and list(messages[: len(previous)]) == list(previous)


def _finding(number: int, indices: list[int], violation: grammar.Violation) -> Finding:
    found = re.match(r"messages\[(\d+)\](?:\.content\[(\d+)\])?", violation.where)
    position = int(found[1]) if found else len(indices) - 1
    entry = indices[min(position, len(indices) - 1)] if indices else 0
    block = int(found[2]) if found and found[2] is not None else None
    return Finding(number, entry, block, violation.where, violation.cause, violation.api_accepts)


def _unique(findings: list[Finding]) -> list[Finding]:
    """A violation in an entry is found again in every later request that resends it: keep the first."""
    seen: set[tuple[int, int | None, str]] = set()
    kept = []
    for finding in findings:
        key = (finding.entry, finding.block, finding.cause)
        if key not in seen:
            seen.add(key)
            kept.append(finding)
    return kept
