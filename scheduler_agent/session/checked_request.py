"""The request a session sends: the grammar check first, then the context budget, then the body and its size.

A list the API would reject is never sent. The check is incremental (only what was added since the
last request is examined) and the size is kept by entry (session/sizes.py), so building a request costs
the same at 10 entries and at 10,000.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any

from scheduler_agent.agent.events import GrammarWarning, Report
from scheduler_agent.agent.growth import SentList
from scheduler_agent.agent.request import Request, build_request, encode, encode_text
from scheduler_agent.agent.trim import TRIMS, estimate_tokens
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.check import GrammarError, IncrementalChecker, check
from scheduler_agent.session.entry_texts import EntryTexts
from scheduler_agent.session.sizes import RequestSizes
from scheduler_agent.storage.conversations import Context


class RequestBuilder:
    """Builds each iteration's request; keeps what the check and the size need between iterations.

    `budget` / `trim`: Settings.context_budget and Settings.trim; `strict`: refuse warnings too; `texts`:
    the list's entry texts, shared with the store (session/entry_texts.py)."""

    def __init__(self, report: Report, budget: int | None, trim: str, strict: bool, texts: EntryTexts) -> None:
        self.report, self.budget, self.trim, self.strict, self.texts = report, budget, trim, strict, texts
        self.checker = IncrementalChecker(texts.fingerprint)
        self.raw: tuple[int, str] | None = None  # (index, the provider's content as it arrived, as text)
        self.sizes = RequestSizes()
        self._last: tuple[JSON, int] | None = None  # the last request built and its size in bytes
        self.sent = SentList()  # the requests' copies of the list
        self.clean = 0  # how many leading entries the last check passed with no finding (stored as a mark)

    def received(self, index: int, content: list[JSON]) -> None:
        """The reply just appended at `index`: only the newest is compared with what arrived (older turns were
        checked against theirs when they were new). Kept as its text: the entry's own text is compared with it,
        and only a turn that differs is given to the check, which says where. Call it after the store's `update`:
        an entry that holds this very content was encoded then, at the same moment, so its text is the one kept."""
        known = self.texts.of_content(index, content)
        self.raw = (index, known if known is not None else encode_text(content))

    def forget(self) -> None:
        """The list was replaced (another process wrote it): the next check examines it whole."""
        self.checker.reset()
        self.clean = 0

    def resume(
        self, messages: list[JSON], checked: int, sizes: Sequence[int | None], written: Sequence[str | None] = ()
    ) -> None:
        """A stored list: `checked` leading entries passed the check before, and `sizes` and `written` are its
        entries' sizes and texts as stored, so the first request examines, measures and encodes only what is
        new (or was never stored so)."""
        self.texts.seed(messages, written)
        self.checker.trust(messages, checked)
        self.sizes.entries.seed(messages, sizes)

    def build(self, messages: list[JSON], context: Context, advice: Callable[[], str]) -> JSON:
        """The request for `messages` in `context`, after the check; GrammarError (with `advice()`) if refused."""
        texts = self.texts.update(messages)
        violations = self.checker.check(messages, mode="request", raw=self._differing(messages, texts))
        self.clean = 0 if violations else len(messages)
        view = messages
        if not violations and self.budget is not None:
            # the budget is the whole request's: what the system prompt and the tools take is not the list's
            fixed = estimate_tokens(context.system) + estimate_tokens(context.tools)
            view = TRIMS[self.trim](messages, self.budget - fixed)
            if view is not messages:
                violations = check(view, mode="request")
        refused = violations if self.strict else [v for v in violations if not v.api_accepts]
        if refused:
            raise GrammarError(refused, view, advice())
        if violations:
            self.report(GrammarWarning(violations))
        self._last = None  # let go of the last request: if no one else kept it, its copy of the list is reused
        request = build_request(
            model=context.model,
            system=context.system,
            tools=context.tools,
            messages=view,
            max_tokens=context.max_tokens,
            stream=context.stream,
            copy=self.sent.of if view is messages else list,
            options=context.options,
        )
        # a trimmed view is bounded by the budget, and its entries may be new objects: encoded whole
        if view is messages:
            size = self.sizes.of(request, messages, texts)
            request = Request(request, self.texts.aligned)  # sent as its entries' texts joined (request.encode)
        else:
            size = len(encode(request))
        self._last = (request, size)
        return request

    def _differing(self, messages: list[JSON], texts: list[str | None]) -> dict[int, Any] | None:
        """The newest reply as it arrived, for the check, when the entry appended for it is not the same text."""
        if self.raw is None:
            return None
        index, arrived = self.raw
        entry = messages[index] if index < len(messages) else None
        if isinstance(entry, dict) and entry.get("role") == "assistant" and texts[index] == arrived:
            return None  # appended exactly as it arrived: nothing for the check to compare
        return {index: json.loads(arrived)}

    def size_of(self, request: JSON) -> int:
        """`len(encode(request))`: kept for the request `build` made last, encoded for any other."""
        if self._last is not None and self._last[0] is request:
            return self._last[1]
        return len(encode(request))


def repair_advice(cid: int | None) -> str:
    """The way out of a refused list, for a stored conversation."""
    if cid is None:
        return ""
    return (
        f"`scheduler-agent conversations repair {cid}` shows what is wrong and makes the smallest "
        "change that makes the list valid again."
    )
