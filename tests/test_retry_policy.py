"""The retry policy (api/retry.py) is the SDK's own, copied once: each function against the SDK's.

The client runs with `max_retries=0` so that every retry is announced and a long `retry-after` refused;
these tests keep the copy equal to what the SDK itself would do, so an SDK that changes its rules fails
here. (What a person sees when the API fails: tests/test_faults.py.)
"""

from __future__ import annotations

import email.utils
import random
import time

import anthropic
import httpx2
import pytest
from anthropic._models import FinalRequestOptions
from helpers import DUMMY_KEY

from scheduler_agent.api.retry import backoff, retry_after, retryable

URL = "http://127.0.0.1:9/v1/messages"
SDK = anthropic.Anthropic(api_key=DUMMY_KEY, base_url="http://127.0.0.1:9", max_retries=6)


def failure(status: int, headers: dict[str, str] | None = None) -> anthropic.APIStatusError:
    response = httpx2.Response(status, headers=headers or {}, request=httpx2.Request("POST", URL))
    return anthropic.APIStatusError("failed", response=response, body=None)


@pytest.mark.parametrize("status", [400, 401, 403, 404, 408, 409, 413, 422, 429, 500, 502, 503, 529])
@pytest.mark.parametrize("should", [None, "true", "false"])
def test_a_status_is_retried_exactly_when_the_sdk_retries_it(status: int, should: str | None) -> None:
    exc = failure(status, {"x-should-retry": should} if should else None)
    assert retryable(exc) is SDK._should_retry(exc.response)


def test_a_dropped_connection_is_retried_as_the_sdk_does() -> None:
    exc = anthropic.APIConnectionError(request=httpx2.Request("POST", URL))
    assert retryable(exc) is SDK._should_retry_exception(exc)[0]


def http_date(seconds_from_now: int) -> str:
    return email.utils.formatdate(time.time() + seconds_from_now, usegmt=True)


@pytest.mark.parametrize(
    "headers",
    [
        {},
        {"retry-after": "3"},
        {"retry-after": "1.5"},
        {"retry-after-ms": "250"},
        {"retry-after-ms": "250", "retry-after": "9"},
        {"retry-after-ms": "soon", "retry-after": "9"},  # a bad ms header: the seconds one still counts
        {"retry-after": "soon"},
        {"retry-after": http_date(120)},
    ],
)
def test_the_wait_asked_for_is_read_as_the_sdk_reads_it(headers: dict[str, str]) -> None:
    exc = failure(429, headers)
    ours, theirs = retry_after(exc), SDK._parse_retry_after_header(exc.response.headers)
    if theirs is None:
        assert ours is None
    else:
        assert ours == pytest.approx(theirs, abs=1.0)  # a date is read against the clock, twice


@pytest.mark.parametrize("attempt", [1, 2, 3, 4, 5, 6])
def test_the_back_off_is_the_sdks_with_the_same_jitter(attempt: int) -> None:
    options = FinalRequestOptions.construct(method="post", url="/v1/messages")
    random.seed(attempt)
    ours = backoff(attempt)
    random.seed(attempt)
    theirs = SDK._calculate_retry_timeout(SDK.max_retries - (attempt - 1), options, None)
    assert ours == theirs


def test_the_back_off_doubles_from_half_a_second_to_eight() -> None:
    random.seed(0)
    waits = [backoff(attempt) for attempt in range(1, 8)]
    assert all(0.375 <= wait <= 0.5 for wait in waits[:1])
    assert all(6.0 <= wait <= 8.0 for wait in waits[5:])
