"""Each entry's content as compact JSON text, encoded once as the list grows, for everything that needs it.

A session needs every new entry as text four times over: the store writes it (storage/conversations.py
keeps `content` as this text), the request's size counts it (an entry encodes as
`{"role":…,"content":<this text>}`), the provenance check compares a reply as appended with the
reply as it arrived, and the request is sent as its entries' texts joined (`request.encode`; each whole
entry is `written` from its content's text when a request is first encoded with it, and a stored one is
sent as the store wrote it; all but the last are also kept joined and encoded, each once, so a request
at 10,000 entries copies the megabytes once instead of joining them again). One `EntryTexts` per list
encodes each new entry once, and the last entry once more at each `update`: it is the one entry that may
have changed in place (text joining a trailing user turn), which identity cannot tell.

Where to encode again is `growth.read_from`'s answer, as for EntrySizes and CallIds (entries appended
or removed at the end, the last one perhaps changed in place). An entry that is not an object, or whose
content is not JSON, has no text (None): each reader then does what it did without one.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from scheduler_agent.agent.growth import read_from
from scheduler_agent.agent.request import Written, encode_text, entry_text
from scheduler_agent.agent.types import JSON, is_object


def content_text(entry: object) -> str | None:
    """`encode_text(entry["content"])`; None for an entry that is not an object, or content that is not JSON."""
    if not is_object(entry) or "content" not in entry:
        return None
    try:
        return encode_text(entry["content"])
    except (TypeError, ValueError):  # not JSON (a set, an object, a cycle): the grammar check says so
        return None


class EntryTexts:
    """`texts[i]` is `content_text(messages[i])` for the list last given to `update`."""

    def __init__(self) -> None:
        self._list: Sequence[Any] | None = None
        self._entries: list[object] = []  # the entry objects encoded, by index
        self.texts: list[str | None] = []
        self.written = Written()  # each whole entry as a request writes it (None: not known yet), the first joined
        self._filled = 0  # `written` is filled in up to here (by `aligned`, which a request's encoding asks)
        self.encoded = 0  # entries encoded by the last `update` (for the tests)

    def seed(self, messages: Sequence[JSON], stored: Sequence[str | None] = ()) -> None:
        """A stored list: its entries are known as they are, and `stored[i]` is entry i as the store wrote it
        inside a request (None, or no `stored`: not known, encoded when a request is). Only the last entry's
        text is read now, as every reader compares the last entry: the one that may change in place."""
        self._list, self._entries = messages, list(messages)
        self.texts = [None] * len(messages)
        self.written = Written(stored if len(stored) == len(messages) else [None] * len(messages))
        self._filled = 0
        if messages:
            self.texts[-1] = content_text(messages[-1])

    def update(self, messages: Sequence[Any]) -> list[str | None]:
        """Bring `texts` (and `written`) up to date with `messages` and return `texts`."""
        start = read_from(messages, self._list, self._entries)
        del self._entries[start:], self.texts[start:], self.written[start:]
        if start < self.written.joined_count:  # an entry already joined changed or went: join them again when asked
            self.written.joined, self.written.joined_count = bytearray(), 0
        self._filled = min(self._filled, start)
        self.encoded = 0
        for entry in messages[start:]:
            self._entries.append(entry)
            self.texts.append(content_text(entry))
            self.written.append(None)  # written when a request is encoded: the model call's cost, not the loop's
            self.encoded += 1
        self._list = messages
        return self.texts

    def aligned(self, entries: Sequence[Any]) -> list[str | None] | None:
        """`written`, when `entries` are the entries last given to `update`, in order (a request's copy of the
        list); else None. For `request.encode`, which joins them into the body instead of encoding the list."""
        known = self._entries
        # A list's `==` takes an identical element as equal without comparing it: at 10,000 entries it is ~35x
        # faster than testing each `is`. An entry replaced by an equal copy passes too, and is sent as the
        # text of the one it equals: the same JSON (its keys' order aside), which nothing in the package makes.
        if len(entries) != len(known) or entries != known:
            return None
        for index in range(self._filled, len(known)):
            if self.written[index] is None:
                self.written[index] = _written(known[index], self.texts[index])
        self._filled = len(known)
        _join_up_to(self.written, len(known) - 1)  # all but the last, the one entry that may change in place
        return self.written

    def text(self, messages: Sequence[Any], index: int) -> str | None:
        """The text of `messages[index]`: kept if it is the entry last encoded there, else encoded now."""
        if messages is self._list and index < len(self._entries) and self._entries[index] is messages[index]:
            known = self.texts[index]
            if known is not None:
                return known
        return content_text(messages[index])

    def of_content(self, index: int, content: object) -> str | None:
        """The text kept for entry `index` when that entry, as last given to `update`, holds `content` itself."""
        if index < len(self._entries):
            entry = self._entries[index]
            if type(entry) is dict and entry.get("content") is content:
                return self.texts[index]
        return None

    def fingerprint(self, messages: Sequence[Any], index: int) -> str | None:
        """The entry as grammar's IncrementalChecker compares it: its role and its content's text (None, which
        the checker takes as "changed", for an entry that is more or other than a role and a content)."""
        entry = messages[index]
        if not is_object(entry) or len(entry) != 2 or not isinstance(entry.get("role"), str):
            return None
        text = self.text(messages, index)
        return None if text is None else f"{entry['role']}\n{text}"


def _written(entry: object, text: str | None) -> str | None:
    """`encode_text(entry)`, from its content's text; None for an entry that is not JSON (the check says why)."""
    try:
        return entry_text(entry, text)
    except (TypeError, ValueError):
        return None


def _join_up_to(written: Written, end: int) -> None:
    """Extend `written.joined` to the entries before `end` (or before the first not known): each entry is joined
    and encoded once, when it is first sent, instead of with the whole list on every request."""
    start = written.joined_count
    if end <= start:
        return
    new = written[start:end]
    if None in new:
        new = new[: new.index(None)]
    if new:
        if start:
            written.joined += b","
        written.joined += ",".join(new).encode()  # type: ignore[arg-type]  # no None in `new` (cut above)
        written.joined_count = start + len(new)
