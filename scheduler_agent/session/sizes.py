"""A request's size in bytes, kept as the list grows instead of encoding the whole body again.

The encoding of a JSON array is `[`, its entries' encodings joined by `,`, then `]`; `build_request`
puts the list inside a body whose other fields do not depend on it. So the size of a body is the size
of the same body with an empty list, plus each entry's size, plus one separator between entries.
Each entry is encoded when it first appears, and once more when the next entry arrives (the loop
changes an entry in place only while it is the last one: text joining a trailing user turn).
"""

from __future__ import annotations

from collections.abc import Sequence

from scheduler_agent.agent.growth import read_from
from scheduler_agent.agent.request import encode, framed_size
from scheduler_agent.agent.types import JSON


def sized(entry: JSON, text: str | None) -> int:
    """`len(encode(entry))`, from its content's text when it has one and the entry is a role and a content."""
    if text is None or len(entry) != 2 or "content" not in entry or type(entry.get("role")) is not str:
        return len(encode(entry))
    return framed_size(entry["role"], text)


class EntrySizes:
    """`len(encode(entry))` for each entry of one list, read again only where the list changed.

    Where to measure again is `growth.read_from`'s answer (entries appended or removed at the end, the
    last one perhaps changed in place; editing an older entry in place needs a new EntrySizes)."""

    def __init__(self) -> None:
        self._list: Sequence[JSON] | None = None
        self._entries: list[JSON] = []  # the entry objects measured, by index
        self._sizes: list[int] = []
        self._sum = 0
        self.measured = 0  # entries encoded by the last call (for the tests)

    def seed(self, messages: Sequence[JSON], sizes: Sequence[int | None]) -> None:
        """Take the sizes of `messages`' entries as known (stored with them); None ones are measured."""
        self._list, self._entries = messages, list(messages)
        self._sizes = [
            len(encode(entry)) if size is None else size for entry, size in zip(messages, sizes, strict=True)
        ]
        self._sum = sum(self._sizes)

    def total(self, messages: Sequence[JSON], texts: Sequence[str | None] | None = None) -> int:
        """The encoded size of `messages` as a JSON array: `len(encode(list(messages)))`. `texts`: each entry's
        content as `EntryTexts` keeps it (then an entry is measured from its text, not encoded again)."""
        start = read_from(messages, self._list, self._entries)
        for size in self._sizes[start:]:
            self._sum -= size
        del self._entries[start:], self._sizes[start:]
        self.measured = 0
        for index in range(start, len(messages)):
            entry = messages[index]
            size = sized(entry, texts[index]) if texts is not None else len(encode(entry))
            self._entries.append(entry)
            self._sizes.append(size)
            self._sum += size
            self.measured += 1
        self._list = messages
        return 2 + self._sum + max(len(messages) - 1, 0)


class RequestSizes:
    """The size of each request a session builds: the fixed part once per context, the list by entry."""

    def __init__(self) -> None:
        self.entries = EntrySizes()
        self._fixed: tuple[tuple[object, ...], int] | None = None  # (the fields besides the list, their size)

    def of(self, request: JSON, messages: Sequence[JSON], texts: Sequence[str | None] | None = None) -> int:
        """`len(encode(request))`, where `request["messages"]` holds the entries of `messages`, in order
        (`texts`: as EntrySizes.total takes them)."""
        # compared with ==, which takes the same objects (the system prompt, each tool) as equal at once
        key = tuple((name, value) for name, value in request.items() if name != "messages")
        if self._fixed is None or self._fixed[0] != key:
            empty = {name: ([] if name == "messages" else value) for name, value in request.items()}
            self._fixed = (key, len(encode(empty)) - 2)  # the empty list's `[]` is counted with the list
        return self._fixed[1] + self.entries.total(messages, texts)
