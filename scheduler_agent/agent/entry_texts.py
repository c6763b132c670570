"""Each entry's content as compact JSON text, encoded once as the list grows, for everything that needs it.

A session needs every new entry as text three times over: the store writes it (storage/conversations.py
keeps `content` as this text), the request's size counts it (an entry encodes as
`{"role":…,"content":<this text>}`), and the provenance check compares a reply as appended with the
reply as it arrived. One `EntryTexts` per list encodes each new entry once, and the last entry once more
at each `update`: it is the one entry that may have changed in place (text joining a trailing user
turn), which identity cannot tell.

Where to encode again is `growth.read_from`'s answer, as for EntrySizes and CallIds (entries appended
or removed at the end, the last one perhaps changed in place). An entry that is not an object, or whose
content is not JSON, has no text (None): each reader then does what it did without one.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from scheduler_agent.agent.growth import read_from
from scheduler_agent.agent.request import encode_text
from scheduler_agent.agent.types import JSON


def content_text(entry: object) -> str | None:
    """`encode_text(entry["content"])`; None for an entry that is not an object, or content that is not JSON."""
    if not isinstance(entry, Mapping) or "content" not in entry:
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
        self.encoded = 0  # entries encoded by the last `update` (for the tests)

    def seed(self, messages: Sequence[JSON]) -> None:
        """A stored list: its entries are known as they are; only the last one's text is read now, as every
        reader compares the last entry (the older ones' texts are stored already)."""
        self._list, self._entries = messages, list(messages)
        self.texts = [None] * len(messages)
        if messages:
            self.texts[-1] = content_text(messages[-1])

    def update(self, messages: Sequence[Any]) -> list[str | None]:
        """Bring `texts` up to date with `messages` and return it."""
        start = read_from(messages, self._list, self._entries)
        del self._entries[start:], self.texts[start:]
        self.encoded = 0
        for entry in messages[start:]:
            self._entries.append(entry)
            self.texts.append(content_text(entry))
            self.encoded += 1
        self._list = messages
        return self.texts

    def text(self, messages: Sequence[Any], index: int) -> str | None:
        """The text of `messages[index]`: kept if it is the entry last encoded there, else encoded now."""
        if messages is self._list and index < len(self._entries) and self._entries[index] is messages[index]:
            known = self.texts[index]
            if known is not None:
                return known
        return content_text(messages[index])

    def fingerprint(self, messages: Sequence[Any], index: int) -> str | None:
        """The entry as grammar's IncrementalChecker compares it: its role and its content's text (None, which
        the checker takes as "changed", for an entry that is more or other than a role and a content)."""
        entry = messages[index]
        if not isinstance(entry, Mapping) or len(entry) != 2 or not isinstance(entry.get("role"), str):
            return None
        text = self.text(messages, index)
        return None if text is None else f"{entry['role']}\n{text}"
