"""How long the project waits for the model: constants that do not need the SDK (the CLI reads them)."""

from __future__ import annotations

DEFAULT_TIMEOUT_SECONDS = 600.0
"""The most one request may take, every attempt and every wait between them included (`--timeout`)."""

MAX_RETRY_AFTER_SECONDS = 60.0
"""The longest `retry-after` waited for; an API that asks for more is told no, and the person is told when."""

CONNECT_TIMEOUT_SECONDS = 5.0
