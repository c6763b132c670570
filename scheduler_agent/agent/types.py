"""The one type alias for the API's JSON: a message, a block, a request or a response body."""

from __future__ import annotations

from typing import Any

JSON = dict[str, Any]  # as it goes over the wire: plain dicts, lists, strings, numbers
