"""How a list changed since it was last read, for what keeps something per entry as the loop grows it.

The loop changes its list in one way: entries are appended or removed at the end, and an entry is
changed in place only while it is the last one (text joining a trailing user turn). So a reader that
kept the entry objects it read can tell, from identity alone, where to read again: from the first entry
that is not the object it read there, or from the last one it read (it may have changed in place).
Editing an older entry in place needs a new reader. `SentList` is such a reader: it keeps each request's
copy of the list, made again only where the list changed when no one else could see the copy change.
Pure: the standard library only.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any


def read_from(messages: Sequence[object], read: Sequence[object] | None, entries: Sequence[object]) -> int:
    """The first index of `messages` to read again, for a reader that last read the list `read` and kept the
    entry objects `entries` it read there (another list object: 0, read it whole)."""
    if messages is not read:
        return 0
    kept = min(len(messages), len(entries)) - 1
    while kept >= 0 and messages[kept] is not entries[kept]:
        kept -= 1  # removed or replaced since the last read
    return max(kept, 0) if kept == len(entries) - 1 else kept + 1


class SentList:
    """Each request's own copy of the list, made without copying the whole list when no one could tell.

    A request holds a copy, so that whoever keeps it (a listener keeping every `RequestSent`, a reader
    keeping `request["messages"]`) keeps the array as it was sent. Copying 10,000 entries, and freeing
    the last request's copy, writes to the reference count of every entry object: 0.1-0.16 ms an
    iteration here (docs/design.md, "Requests"). So `of(messages)` brings the last copy it made up to date in place,
    from `read_from`'s answer, when nothing but this object refers to that copy any longer (the last
    request and its list were let go by everyone: then no one can see it change), and makes a new copy
    otherwise. Whether anything else refers to it is CPython's reference count, compared with the count of
    a copy no one else holds taken the same way; without reference counts, every request gets a new copy.
    """

    def __init__(self) -> None:
        self._copy: list[Any] = []
        self._of: Sequence[Any] | None = None  # the list it is a copy of
        self.copied = 0  # entries the last `of` copied (for the tests)

    def of(self, messages: Sequence[Any]) -> list[Any]:
        """A list of `messages`' entries, in order, that nothing else refers to but the caller."""
        if self._of is None or self._shared():
            self._copy, start = [], 0
        else:
            start = read_from(messages, self._of, self._copy)
            del self._copy[start:]
        self._copy.extend(messages[start:])
        self._of, self.copied = messages, len(messages) - start
        return self._copy

    def _shared(self) -> bool:
        return _COUNT is None or self._copy_count() > _ALONE

    def _copy_count(self) -> int:
        return _COUNT(self._copy) if _COUNT is not None else 0


_COUNT: Callable[[object], int] | None = getattr(sys, "getrefcount", None)  # CPython's; other interpreters: None


def _alone() -> int:
    """The count `_shared` sees for a copy that nothing else refers to: taken the same way, of a new one."""
    probe = SentList()
    return probe._copy_count()


_ALONE = _alone()
