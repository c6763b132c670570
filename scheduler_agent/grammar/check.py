"""The grammar of the message list: what the API validates, checked before anything is sent.

The message list is the agent's whole state, and it obeys a grammar the API enforces (the rules, each
with its level and how it was established, are in `rules.py` and `walk.py`; docs/message-list.md's
"The grammar check, and `lint`" lists them):

- every entry is `{"role": "user" | "assistant", "content": ...}` with non-empty content and no empty
  text blocks (a `system` entry with text is accepted by some models: a warning);
- the API merges consecutive entries of one role, then pairs: every `tool_use` of an assistant turn is
  answered by ONE `tool_result` in the user turn right after it, results first; every `tool_result`
  answers a call of the turn right before it; an `is_error` result holds non-empty text only; call ids
  are unique within a turn;
- a request ends with a user turn (no prefill, on the models that refuse it).

And one rule the API cannot see: an assistant turn is the provider's own content array, exactly as it
arrived. A turn rebuilt from a few fields keeps its ids and passes everything above; only a comparison
with the raw response (`raw`) catches it (a warning: the API accepts it).

Findings are errors (the API rejects the list) or warnings (it accepts it): `Violation.level`.
`check` walks a whole list and returns every finding with its position; `IncrementalChecker` gives the
same answer while examining only what was added since its last call. Pure: standard library only.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Mapping, Sequence
from functools import cache
from importlib import resources
from typing import Any

from scheduler_agent.agent.errors import AgentError
from scheduler_agent.agent.types import is_object
from scheduler_agent.grammar.jsondiff import first_difference
from scheduler_agent.grammar.rules import (
    API_MISSING_RESULTS,
    API_PREFILL,
    API_UNEXPECTED_RESULT,
    Level,
    Mode,
    State,
    Violation,
    at,
    blocks_of,
    conversation_state,
    has_type,
    role_of,
    unanswered_calls,
)
from scheduler_agent.grammar.walk import Placed, Walker, round_start

__all__ = [
    "API_MISSING_RESULTS",
    "API_PREFILL",
    "API_UNEXPECTED_RESULT",
    "GrammarError",
    "IncrementalChecker",
    "Level",
    "Mode",
    "State",
    "Violation",
    "check",
    "conversation_state",
    "unanswered_calls",
]


class GrammarError(AgentError):
    """The list about to be sent breaks the grammar; it was not sent.

    Given the list, the message names who made each broken entry: the model (its reply), the person
    (their text) or the code (the tool results, or the list's order). `advice` is a way out."""

    exit_code = 1

    def __init__(
        self, violations: Sequence[Violation], messages: Sequence[Any] | None = None, advice: str = ""
    ) -> None:
        self.violations = list(violations)
        count = len(self.violations)
        rejected = any(violation.level == "error" for violation in self.violations)
        causes = sorted({source_of(violation, messages) for violation in self.violations})
        cause = "; ".join(causes) if messages is not None else "a bug in the code that built the list"
        head = (
            f"The message list was NOT sent: it breaks the API's grammar in {count} "
            f"place{'' if count == 1 else 's'} ({cause}"
            f"{'; the API would reject it' if rejected else ''}):"
        )
        lines = [head, *(f"  {violation}" for violation in self.violations)]
        super().__init__("\n".join([*lines, advice] if advice else lines))


def source_of(violation: Violation, messages: Sequence[Any] | None) -> str:
    """Who made the entry a violation is in: the model, the person, or the code."""
    where = violation.where
    if messages is None or not where.startswith("messages["):
        return "a bug in the code that built the list"
    index = int(where[len("messages[") : where.index("]")])
    entry = messages[index] if 0 <= index < len(messages) else None
    role = role_of(entry)
    of_the_list = ("`tool_use` ids were found without", "two ", "a request must end", "the assistant turn is not")
    if violation.cause.startswith(of_the_list):  # what follows (or replaced) the entry, not the entry itself
        return f"the code that built the list, at messages[{index}]"
    if role == "assistant":
        return f"the model's reply at messages[{index}], stored as it came"
    if role == "user":
        blocks = blocks_of(entry)
        part = where[where.index("]") + 1 :]
        if part.startswith(".content[") and "]" in part[1:]:
            position = int(part[len(".content[") : part.index("]")])
            block = blocks[position] if 0 <= position < len(blocks) else None
            if has_type(block, "tool_result"):
                return f"the code's tool results at messages[{index}]"
        if blocks and all(has_type(block, "tool_result") for block in blocks):
            return f"the code's tool results at messages[{index}]"
        return f"the person's text at messages[{index}]"
    return f"an entry at messages[{index}] that is neither the model's nor the person's"


# --- provenance, and assembling the answer -------------------------------------------------------------


def _provenance(messages: Sequence[Any], raw: Mapping[int, Any] | None) -> tuple[list[Placed], list[Violation]]:
    """Compare each entry named in `raw` with the provider's content: (findings by index, out-of-range ones)."""
    placed: list[Placed] = []
    outside: list[Violation] = []
    for index in sorted(raw or {}):
        received = raw[index] if raw else None
        if not 0 <= index < len(messages):
            cause = f"the provider's content was given for {at(index)}, but the list has {len(messages)} entries"
            outside.append(Violation(at(index), cause))
            continue
        entry = messages[index]
        if role_of(entry) != "assistant":
            cause = "the provider's content was given for this entry, but it is not an assistant turn"
            placed.append((index, Violation(at(index), cause)))
            continue
        stored = entry.get("content") if is_object(entry) else None
        difference = first_difference(received, stored, "content", ("received", "stored"))
        if difference:
            cause = (
                f"the assistant turn is not the provider's own content: it differs at {difference}; "
                "append the response's content exactly as it arrived, every block in order"
            )
            placed.append((index, Violation(at(index), cause, api_accepts=True)))
    return placed, outside


def _assemble(
    settled: Iterable[Placed],
    walker: Walker,
    messages: Sequence[Any],
    mode: Mode,
    raw: Mapping[int, Any] | None,
    prefill_refused: bool,
) -> list[Violation]:
    """Every finding in the order of the entries they are about; at one entry: its own, provenance, the end."""
    placed, outside = _provenance(messages, raw) if raw else ([], [])
    ranked = [
        *((index, 0, v) for index, v in settled),
        *((index, 1, v) for index, v in placed),
        *((index, 2, v) for index, v in walker.tail(messages, mode, prefill_refused)),
    ]
    if not ranked:  # a clean list, as nearly every request is: nothing to order
        return outside
    ranked.sort(key=lambda item: (item[0], item[1]))  # stable: in the order found at one entry and rank
    return [violation for _, _, violation in ranked] + outside


def _check_mode(mode: str) -> None:
    if mode not in ("request", "conversation"):
        raise ValueError(f'mode must be "request" or "conversation", not {mode!r}')


def check(
    messages: Sequence[Any], *, mode: Mode, raw: Mapping[int, Any] | None = None, prefill_refused: bool = True
) -> list[Violation]:
    """Every finding (errors and warnings) in `messages`, in order, each with its position and cause.

    mode "request": what is about to be sent; it must end with a user turn. mode "conversation": a stored
    list; it may end with the assistant's answer, or with unanswered calls (`conversation_state` says
    "interrupted", which is not a violation). `raw` maps the index of an assistant entry to the provider's
    content array as received; that entry must equal it. `prefill_refused`: the model answers a request
    that ends with an assistant turn with a 400 (this project's models do); False makes that a warning.
    """
    _check_mode(mode)
    walker = Walker()
    settled = [found for index in range(len(messages)) for found in walker.entry(messages, index)]
    return _assemble(settled, walker, messages, mode, raw, prefill_refused)


_RULE_MODULES = ("rules.py", "walk.py", "blocks.py", "check.py")  # the code that decides what a list may hold


@cache
def rules_digest() -> str:
    """A digest of the check's own code: a stored mark ("these entries passed the check") holds only for
    the rules that made it. Any change to them, a new rule or a fix, makes marks from before untrusted,
    so those lists are checked whole once more."""
    import hashlib  # here: `lint` never needs it, and its OpenSSL binding costs ~3 ms of start-up

    digest = hashlib.sha256()
    for name in _RULE_MODULES:
        digest.update((resources.files("scheduler_agent.grammar") / name).read_bytes())
    return digest.hexdigest()[:16]


def _fingerprint_at(messages: Sequence[Any], index: int) -> str:
    return json.dumps(messages[index], sort_keys=True, default=repr)


class IncrementalChecker:
    """`check`, examining only the entries added since the last call (plus the one before them).

    The list is assumed to change the way the loop changes it: entries are appended or removed at the
    end, and an entry is changed in place only while it is the last one (the loop adds text to a trailing
    user turn). So the checker keeps each examined entry object and, on each call, walks back from the
    end past the entries that are no longer the same objects (removed or replaced), re-examining from the
    last one that is; the previous last entry, if still in place, is also compared by value. A different
    list object is examined from the start, so pass the loop's own list, not `request["messages"]` (a
    copy made for each request: correct, but examined whole every time). Editing an older entry in place
    needs `reset()`.

    `examined` counts the entries examined by the last call: the new or replaced ones, plus one for the
    entry before them. Provenance (`raw`) costs one comparison per entry it names: pass only the turns
    you still hold the raw response of.

    `fingerprint(messages, index)` is how the previous last entry is compared by value: any text that
    differs when the entry does (default: its JSON, keys sorted). A session passes the text it already
    keeps of each entry (session/entry_texts.py), so the comparison encodes nothing again.
    """

    def __init__(self, fingerprint: Callable[[Sequence[Any], int], str | None] | None = None) -> None:
        self._fingerprint = fingerprint or _fingerprint_at
        self.reset()

    def reset(self) -> None:
        """Forget everything: the next call examines the whole list."""
        self._walker = Walker()
        self._settled: list[tuple[int, int, Violation]] = []  # (examining index, placed index, finding)
        self._list: Sequence[Any] | None = None
        self._entries: list[Any] = []  # the entry objects examined, by index
        self._last: str | None = None  # the last entry's fingerprint when it was examined (None: none)
        self.examined = 0

    def trust(self, messages: Sequence[Any], clean: int) -> None:
        """`messages[:clean]` passed this check before with no finding (a stored conversation's mark): the next
        call examines only from the start of the last round inside them (`round_start`), with the same
        answer as a whole walk. The ids of the calls before that are read once, when the walk first needs them."""
        self.reset()
        start = round_start(messages, clean)
        if start <= 0:
            return
        self._walker.start_at(messages, start)
        self._list = messages
        self._entries = list(messages[:start])
        self._last = self._fingerprint(messages, start - 1)

    def check(
        self,
        messages: Sequence[Any],
        *,
        mode: Mode,
        raw: Mapping[int, Any] | None = None,
        prefill_refused: bool = True,
    ) -> list[Violation]:
        """The same list as `check(messages, mode=mode, raw=raw, prefill_refused=prefill_refused)`."""
        _check_mode(mode)
        self.examined = 0
        start = self._start(messages)
        self._walker.rollback(start)
        while self._settled and self._settled[-1][0] >= start:
            self._settled.pop()
        del self._entries[start:]
        for index in range(start, len(messages)):
            self._settled += [(index, placed, found) for placed, found in self._walker.entry(messages, index)]
            self._entries.append(messages[index])
            self.examined += 1
        self._list = messages
        self._last = self._fingerprint(messages, len(messages) - 1) if messages else None
        settled = ((placed, found) for _, placed, found in self._settled)
        return _assemble(settled, self._walker, messages, mode, raw, prefill_refused)

    def _start(self, messages: Sequence[Any]) -> int:
        """The first entry that needs examining."""
        if messages is not self._list:
            return 0
        checked = len(self._entries)
        kept = min(len(messages), checked) - 1
        while kept >= 0 and messages[kept] is not self._entries[kept]:
            kept -= 1  # removed or replaced since the last call
        if kept < checked - 1:
            return max(kept, 0)  # it may have changed in place while it was the last entry
        if kept < 0:
            return 0
        self.examined += 1  # the last entry examined before: has it changed in place?
        return kept if self._last is None or self._fingerprint(messages, kept) != self._last else checked
