"""The walk: the rules applied entry after entry, with calls paired to results on merged turns.

The API merges consecutive entries of one role into one turn before it pairs calls with results, so
the walk does too: a *run* is a stretch of consecutive user (or assistant) entries, the turn the API
makes of them. Every `tool_use` of an assistant run needs a `tool_result` in the user run right after
it; every `tool_result` of a user run answers a call of the assistant run right before it, and the
results come first in that merged turn. Anything else in between (a system entry, an entry that is not
an object, another role) ends the run: calls before it are unanswered.

Call ids: within one merged assistant turn they must be unique (the API's error "`tool_use` ids must be
unique" names a block of one message). The same id in a later round was accepted (pydantic/pydantic-ai,
tests/cassettes/test_tool_search/test_cross_provider_capability_replay[google-gemini-3-flash-preview-
anthropic-claude-sonnet-4-5].yaml, 2026-08-06, claude-sonnet-4-5: `0usajhl5` in two rounds): a warning.

Some findings about an entry are only known once the next entry arrives (a run's missing results, the
whitespace text of a turn that is no longer the last); they are emitted then, placed at the entry they
are about, and the end of the list settles the rest (`Walker.tail`). The checks of one block (a text,
a call, a result) are in blocks.py.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_agent.agent.types import is_object
from scheduler_agent.grammar import rules
from scheduler_agent.grammar.blocks import Call, CallLog, Run, calls_in, examine_block
from scheduler_agent.grammar.rules import (
    API_EMPTY_CONTENT,
    API_MISSING_RESULTS,
    API_PREFILL,
    API_WHITESPACE_TEXT,
    SYSTEM_BETA_KEYS,
    Mode,
    Violation,
    at,
    has_type,
    kind_of,
    show,
)

Placed = tuple[int, Violation]  # (the index of the entry it is about, the finding)


def _missing(calls: Sequence[Call], answered: Sequence[Call] = ()) -> list[Placed]:
    """One finding per entry holding calls without results, listing their ids."""
    done = {call_id for call_id, _, _ in answered}
    by_entry: dict[int, list[str]] = {}
    for call_id, index, _ in calls:
        if call_id not in done:
            by_entry.setdefault(index, []).append(call_id)
    return [
        (index, Violation(at(index), API_MISSING_RESULTS.format(ids=", ".join(ids)))) for index, ids in by_entry.items()
    ]


def _closing(run: Run, next_role: str | None) -> list[Placed]:
    """What a run leaves unanswered when the entry after it starts another run."""
    if run.role == "user" and run.asked:
        return _missing(run.asked, run.answered)
    if run.role == "assistant" and next_role != "user":
        return _missing(run.calls)
    return []


class Walker:
    """Checks one entry at a time, in order; keeps the run state after each entry, to roll back."""

    def __init__(self) -> None:
        self.runs: list[Run | None] = []  # the run state after each entry examined, by index (None: not walked)
        self.calls = CallLog()  # every call id seen, where it first appeared

    def start_at(self, messages: Sequence[Any], start: int) -> None:
        """Walk from `start` on, as if `messages[:start]` had been walked and settled nothing: `start` must
        begin an assistant turn after a user turn that answered every call (a checked prefix, `round_start`)."""
        self.runs = [None] * start
        self.calls = CallLog(lambda: calls_in(messages, start))

    def rollback(self, index: int) -> None:
        """Forget the entries from `index` on."""
        del self.runs[index:]
        self.calls.rollback(index)

    def entry(self, messages: Sequence[Any], index: int) -> list[Placed]:
        """The findings `messages[index]` brings: first about the entries before it, then its own."""
        entry = messages[index]
        before = self.runs[index - 1] if index > 0 else None
        found: list[Placed] = [(index - 1, rules.blank_text(where)) for where in before.blank] if before else []
        is_entry = is_object(entry)
        role = rules.role_of(entry) if is_entry else None
        if before is not None and role in rules.ROLES and before.role == role:
            found.append((index, rules.same_role(role, index)))
            run = before.copy()
            run.blank = ()
        else:
            found += _closing(before, role) if before else []
            asked = before.calls if before and before.role == "assistant" and role == "user" else ()
            run = Run(role if is_entry else None, asked=asked)
        if not is_entry:
            cause = f'an entry must be an object with "role" and "content", not {kind_of(entry)}'
            self.runs.append(run)
            return [*found, (index, Violation(at(index), cause))]
        own: list[Violation] = []
        run = self._own(entry, index, role, run, own)
        self.runs.append(run)
        return found + [(index, violation) for violation in own]

    def tail(self, messages: Sequence[Any], mode: Mode, prefill_refused: bool) -> list[Placed]:
        """What depends on where the list ends: the last run's unanswered calls, a trailing assistant turn."""
        if not messages:
            return [(0, Violation("messages", "the list is empty: it needs at least one user turn"))]
        last = len(messages) - 1
        run = self.runs[last]
        assert run is not None, "the walk starts before the last entry"
        found = [(last, Violation(where, API_WHITESPACE_TEXT)) for where in run.blank]
        if run.role == "user":
            return found + _missing(run.asked, run.answered)
        if run.role != "assistant":
            return found
        pending = run.calls if mode == "request" else [c for c in run.calls if c[1] != last]  # else: interrupted
        found = _missing(pending) + found
        if mode == "request":
            found.append((last, _prefill(messages[last], last, prefill_refused)))
        return found

    # --- one entry ---------------------------------------------------------------------------------

    def _own(self, entry: Mapping[str, Any], index: int, role: str | None, run: Run, found: list[Violation]) -> Run:
        where = at(index)
        if role == "system":
            found.append(rules.system_entry(where))
        elif role not in rules.ROLES:
            cause = f'the role must be "user" or "assistant" (or "system" for a system entry), not {show(role)}'
            found.append(Violation(f"{where}.role", cause))
        elif index == 0 and role == "assistant":
            found.append(rules.first_is_assistant(where))
        for key in entry:
            if key in ("role", "content"):
                continue
            if role == "system" and key in SYSTEM_BETA_KEYS:
                found.append(rules.warning(f"{where}.{key}", f"{key!r} on a system entry: a beta field"))
            else:
                cause = f'an entry holds only "role" and "content"; the API rejects any other key, such as {key!r}'
                found.append(Violation(f"{where}.{key}", cause))
        if "content" not in entry:
            found.append(Violation(where, 'the entry has no "content"'))
            return run
        content = entry["content"]
        if isinstance(content, str):
            if not content:
                found.append(Violation(f"{where}.content", API_EMPTY_CONTENT))
            elif not content.strip() and role == "assistant":
                run.blank = (f"{where}.content",)
            elif not content.strip():
                found.append(Violation(f"{where}.content", API_WHITESPACE_TEXT))
            if role == "user" and run.first_other is None:
                run.first_other = (index, f"{where}.content", "text")
            return run
        if not isinstance(content, list):
            cause = f"content must be a string or an array of content blocks, not {kind_of(content)}"
            found.append(Violation(f"{where}.content", cause))
            return run
        if not content:
            found.append(Violation(f"{where}.content", API_EMPTY_CONTENT))
        if role == "system":
            found += rules.system_blocks(content, where)
            return run
        for position, block in enumerate(content):
            run = examine_block(self.calls, block, f"{where}.content[{position}]", index, role, run, found)
        return run


def round_start(messages: Sequence[Any], clean: int) -> int:
    """The last index below `clean - 1` that starts an assistant turn right after a user turn (0: none).

    The walk can start there afresh when `messages[:clean]` passed the check with no finding: the user
    turn before it answered every call, and nothing before it changes what follows but the call ids."""
    index = min(clean, len(messages)) - 2
    while index > 0:
        if rules.role_of(messages[index]) == "assistant" and rules.role_of(messages[index - 1]) == "user":
            return index
        index -= 1
    return 0


def _prefill(entry: object, index: int, refused: bool) -> Violation:
    """A request that ends with an assistant turn.

    Sending back a turn that stopped with `pause_turn` (it holds server-tool blocks) is how a paused turn
    is continued: accepted (pydantic/pydantic-ai, tests/models/cassettes/test_anthropic/
    test_pause_turn_web_search_vcr.yaml, 2026-07-14, claude-sonnet-4-5). Any other trailing assistant
    turn is a prefill, and that depends on the model: newer models answer `API_PREFILL`, older ones
    took it (simonw/llm-anthropic, tests/cassettes/test_anthropic/
    test_prompt_with_prefill_and_stop_sequences.yaml, 2026-04-05, claude-haiku-4-5-20251001). So it is an
    error where the model is known to refuse prefill (`refused`, the default: this project's models), a
    warning where it is not known.
    """
    where = at(index)
    if any(has_type(block, "server_tool_use") for block in rules.blocks_of(entry)):
        cause = "the request ends with an assistant turn holding server-tool blocks: a paused turn sent back to go on"
        return rules.warning(where, cause)
    cause = f'a request must end with a user turn, and this one ends with an assistant turn (the API: "{API_PREFILL}")'
    if refused:
        return Violation(where, cause)
    return rules.warning(where, f"{cause}; models that take prefill accept it")
