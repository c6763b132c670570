"""MkDocs hooks (mkdocs.yml's `hooks`): the Layout page's map of the layers, drawn from the one list of them.

`<!-- layers -->` on a page becomes the map of `scheduler_agent/layers.py`, top first: the order the tests keep
(`tests/test_layout.py`) is the order the page shows.
"""

from __future__ import annotations

from typing import Any

from scheduler_agent.layers import drawing

MARK = "<!-- layers -->"


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    """The page with the map of the layers where it has the mark."""
    if MARK not in markdown:
        return markdown
    return markdown.replace(MARK, f"```\n{drawing()}\n```")
