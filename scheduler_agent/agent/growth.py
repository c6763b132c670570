"""How a list changed since it was last read, for what keeps something per entry as the loop grows it.

The loop changes its list in one way: entries are appended or removed at the end, and an entry is
changed in place only while it is the last one (text joining a trailing user turn). So a reader that
kept the entry objects it read can tell, from identity alone, where to read again: from the first entry
that is not the object it read there, or from the last one it read (it may have changed in place).
Editing an older entry in place needs a new reader. Pure: the standard library only.
"""

from __future__ import annotations

from collections.abc import Sequence


def read_from(messages: Sequence[object], read: Sequence[object] | None, entries: Sequence[object]) -> int:
    """The first index of `messages` to read again, for a reader that last read the list `read` and kept the
    entry objects `entries` it read there (another list object: 0, read it whole)."""
    if messages is not read:
        return 0
    kept = min(len(messages), len(entries)) - 1
    while kept >= 0 and messages[kept] is not entries[kept]:
        kept -= 1  # removed or replaced since the last read
    return max(kept, 0) if kept == len(entries) - 1 else kept + 1
