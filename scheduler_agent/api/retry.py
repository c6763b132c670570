"""When to retry a request, and how long to wait: one copy of the SDK's policy, kept here on purpose.

The SDK retries by itself (`max_retries`), but silently, and it obeys any `retry-after` (up to 49 days).
A person here sees each retry announced before its wait (`Retrying`), a `retry-after` longer than
MAX_RETRY_AFTER_SECONDS refused with one line and exit 5, and every attempt within one deadline. So the
client is used with `max_retries=0` (api/client.py) and the policy is this module: the SDK's own rules,
`tests/test_retry_policy.py` checks each function against the SDK's (`_should_retry`,
`_parse_retry_after_header`, `_calculate_retry_timeout`), so an SDK that changes them fails a test.
"""

from __future__ import annotations

import email.utils
import random
import time

from scheduler_agent.api.sdk import anthropic

RETRIED_STATUSES = (408, 409, 429)  # and every 5xx: a timeout, a lock, a rate limit, the server's own error
INITIAL_RETRY_DELAY = 0.5  # seconds, doubled at each retry
MAX_RETRY_DELAY = 8.0


def retryable(exc: Exception) -> bool:
    """Whether the SDK would retry after `exc`: the API's `x-should-retry` when it says, else the status."""
    if isinstance(exc, anthropic.APIStatusError):
        if exc.status_code == 200:  # an `event: error` inside a streamed reply: its 200 was already answered
            return False
        should = exc.response.headers.get("x-should-retry")
        if should in ("true", "false"):
            return should == "true"
        return exc.status_code >= 500 or exc.status_code in RETRIED_STATUSES
    return isinstance(exc, anthropic.APIConnectionError) and not isinstance(exc, anthropic.CredentialsError)


def retry_after(exc: Exception) -> float | None:
    """The wait the API asked for, in seconds: `retry-after-ms`, else `retry-after` in seconds or as a date."""
    if not isinstance(exc, anthropic.APIStatusError):
        return None
    headers = exc.response.headers
    for name, scale in (("retry-after-ms", 1000.0), ("retry-after", 1.0)):
        try:
            return float(headers[name]) / scale
        except (KeyError, ValueError):
            pass
    parsed = email.utils.parsedate_tz(headers.get("retry-after") or "")
    return None if parsed is None else float(email.utils.mktime_tz(parsed) - time.time())


def backoff(attempt: int) -> float:
    """The wait before attempt `attempt + 1` when the API asked for none: 0.5 s doubling to 8 s, less up to
    a quarter at random (the jitter spreads the retries of many clients)."""
    delay = min(INITIAL_RETRY_DELAY * 2.0 ** min(attempt - 1, 1000), MAX_RETRY_DELAY)
    return delay * (1 - 0.25 * random.random())
