"""The text tables: each column as wide as its widest cell, so a row stays aligned whatever its numbers are.

`/tokens`, `/history`, `conversations show`, `conversations list` and `calendar people` print through
`table`. Written here rather than taken from `rich`: these are a few padded columns, and `calendar people`
and `conversations` are fast commands that should not pay for importing a rendering library.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence


def table(rows: Iterable[Sequence[str]], align: str, *, gap: str = " ", widths: Sequence[int] = ()) -> list[str]:
    """The rows as lines, each cell padded to its column's widest cell (and to at least `widths[i]`).

    `align` has one character per column: `<` (left) or `>` (right). The last column, when left-aligned,
    is not padded, so no line ends in spaces."""
    cells = [list(row) for row in rows]
    if not cells:
        return []
    columns = len(align)
    width = [max([len(row[i]) for row in cells] + [widths[i] if i < len(widths) else 0]) for i in range(columns)]
    last = columns - 1
    lines = []
    for row in cells:
        padded = [
            cell if i == last and align[i] == "<" else cell.rjust(width[i]) if align[i] == ">" else cell.ljust(width[i])
            for i, cell in enumerate(row)
        ]
        lines.append(gap.join(padded))
    return lines


def entry_table(rows: Iterable[tuple[int, str, str]]) -> list[str]:
    """`[position] role line` for the lines of a list's entries (`/history`, `conversations show`): the
    position as wide as the widest, so the roles and the text stay in one column from entry [10] on."""
    return table(((f"[{n}]", role, line) for n, role, line in rows), "<<<", widths=(0, len("assistant")))
