"""The page's text helpers; one entry of the list as HTML is templates/entries.html (autoescaped: everything
in an entry came from the model, a tool, a person or an imported calendar)."""

from __future__ import annotations

import json
from typing import Any


def pretty(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, indent=2)
