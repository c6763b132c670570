"""The one place that talks to the Anthropic SDK. Imported only on paths that call the model.

`send` returns the API's response body as plain JSON, exactly as it came over the wire:
the list stores the provider's own content array, not a re-serialised SDK object.

A request that says `"stream": true` is streamed: each piece of text goes to `on_text` as it
arrives, and `send` returns the message the events assemble into, the same JSON the API sends
for that reply unstreamed. The pieces are only shown; the list gets the whole message, once the
stream has ended, so an interrupted stream (Ctrl-C, a dropped connection) leaves the list as it was.

Why not the SDK's `messages.stream()` helper: it puts `"stream": true` last in the body (the
request builder, like `messages.create`, puts it before `system`, so the dump is the bytes sent),
and its `get_final_message()` is a pydantic object whose serialisation orders keys alphabetically.
Why not `messages.create` either: on every call it copies the whole request (`copy_tree`) and
encodes it again, about 0.2 s at 10,000 entries. Here the body is encoded once per request by
`agent.request.encode` (the SDK's own compact JSON, key order kept; a session's entries are joined
from the texts it keeps) and POSTed with the SDK's `client.post` (its headers, credentials and status
errors, as `messages.create` would). The response is read raw, streamed or not, so a reply that
trickles in is cut off at the request's deadline, and the raw events (`anthropic.Stream.raw_events`)
are assembled as JSON, key order kept: `assemble` below is the SDK's own accumulation, done on the JSON.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING

from scheduler_agent.agent.deadline import Deadline
from scheduler_agent.agent.errors import AgentError, ModelRequestFailed, ModelUnavailable, UnusableReply
from scheduler_agent.agent.events import Retrying
from scheduler_agent.agent.request import encode
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.retry import RETRIED_STATUSES, backoff, retry_after, retryable
from scheduler_agent.api.sdk import RAW_RESPONSE_HEADER, anthropic, httpx2
from scheduler_agent.api.sse import IncompleteStream, assemble
from scheduler_agent.api.timeouts import CONNECT_TIMEOUT_SECONDS, DEFAULT_TIMEOUT_SECONDS, MAX_RETRY_AFTER_SECONDS
from scheduler_agent.api.waiting import OnWait, Watch

if TYPE_CHECKING:
    from anthropic._middleware import MiddlewareInput


NO_CREDENTIALS = (
    "No Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / a profile). "
    "To see the agent work without a key, run `scheduler-agent demo`."
)


KEY_REFUSED = (  # a key (or token) was found and sent: telling the person to set one would mislead
    "The API refused the key it was sent ({status}: {message}): check that ANTHROPIC_API_KEY (or "
    "ANTHROPIC_AUTH_TOKEN / the profile) holds a current key, e.g. from console.anthropic.com; the "
    "conversation is intact. To see the agent work without a key, run `scheduler-agent demo`."
)


def make_client(
    *,
    api_key: str | None = None,
    base_url: str | None = None,
    max_retries: int = 2,
    middleware: Sequence[MiddlewareInput] = (),
) -> anthropic.Anthropic:
    """A client; credentials and ANTHROPIC_BASE_URL are the SDK's business unless given here."""
    try:
        return anthropic.Anthropic(
            api_key=api_key, base_url=base_url, max_retries=max_retries, middleware=list(middleware) or None
        )
    except anthropic.CredentialsError as exc:
        raise ModelRequestFailed(f"{exc} {NO_CREDENTIALS}") from exc


OnText = Callable[[str], None]  # a piece of the reply's text, as it streams in
OnRetry = Callable[[Retrying], None]  # told before each wait between attempts


class ModelAPI:
    """`send(request) -> response body`, turning SDK failures into one-line errors for people.

    `on_text` hears each text delta of a streamed request (one with `"stream": true`), in order.

    Retries are done here, not by the SDK (the client is used with `max_retries=0`; the policy is the
    SDK's own, copied once in api/retry.py, which says why): as many as the client was made with, each
    announced to `on_retry` before its wait, a `retry-after` obeyed up to MAX_RETRY_AFTER_SECONDS and
    refused beyond it, and all of it within `timeout` seconds: each attempt's read timeout is what is
    left of that deadline, and a streamed reply is cut off at it.
    """

    def __init__(
        self,
        client: anthropic.Anthropic,
        on_text: OnText | None = None,
        *,
        timeout: float = DEFAULT_TIMEOUT_SECONDS,
        on_retry: OnRetry | None = None,
        max_retry_after: float = MAX_RETRY_AFTER_SECONDS,
        on_wait: OnWait | None = None,
    ) -> None:
        self.retries = client.max_retries
        self.client = client.with_options(max_retries=0)
        self.on_text = on_text
        self.timeout = timeout
        self.on_retry = on_retry
        self.max_retry_after = max_retry_after
        self.on_wait = on_wait  # told every STILL_WAITING_SECONDS that no part of the reply has come

    def send(self, request: JSON) -> JSON:
        deadline = Deadline.after(self.timeout)
        body = encode(request)  # once for every attempt: the bytes the SDK sends, and the dump shows (as JSON)
        attempts = self.retries + 1
        for attempt in range(1, attempts + 1):
            try:
                with Watch(self.on_wait, self.timeout) as watch:
                    return self._attempt(body, bool(request.get("stream")), deadline, watch)
            except Exception as exc:
                wait = self._wait_before_retry(exc, attempt, attempts, deadline)
                if wait is None:
                    raise self._failure(exc, attempt) from exc
                if self.on_retry is not None:
                    status, kind = _what_failed(exc)
                    self.on_retry(Retrying(status, kind, wait, attempt + 1, attempts))
                time.sleep(wait)
        raise AssertionError("unreachable: the last attempt returns or raises")

    def _attempt(self, body: bytes, stream: bool, deadline: Deadline, watch: Watch) -> JSON:
        """One POST, its read timeout what is left of the deadline; the body read (or streamed) within it."""
        left = deadline.remaining()
        if left <= 0:
            raise TimedOut(self.timeout)
        timeout = httpx2.Timeout(left, connect=min(CONNECT_TIMEOUT_SECONDS, left))
        # the SDK's own POST, given the body as bytes; the header is the one `with_streaming_response` sets, so
        # the body is not read before it is returned, and status errors (and middleware) work as for `create`
        response = self.client.post(
            "/v1/messages",
            cast_to=anthropic.APIResponse[object],
            content=body,
            options={"timeout": timeout, "headers": {RAW_RESPONSE_HEADER: "stream"}},
        ).http_response
        try:
            if stream:
                return assemble(watch.touching(_events(response, deadline, self.timeout)), self.on_text)
            pieces = []
            for piece in watch.touching(response.iter_bytes()):
                pieces.append(piece)
                if deadline.expired():
                    raise TimedOut(self.timeout)
        finally:
            response.close()
        content = b"".join(pieces)
        try:
            reply: JSON = json.loads(content)
        except ValueError as exc:
            raise UnusableReply(
                f"The API's reply could not be used: its body is not JSON ({exc}; it began {content[:60]!r}). "
                "Nothing was stored and the conversation is intact: try again."
            ) from None
        return reply

    def _wait_before_retry(self, exc: Exception, attempt: int, attempts: int, deadline: Deadline) -> float | None:
        """Seconds to wait before the next attempt, or None when `exc` is not retried (or no attempt is left)."""
        if attempt >= attempts or not retryable(exc):
            return None
        asked = retry_after(exc)
        if asked is not None and asked > self.max_retry_after:
            raise ModelUnavailable(
                f"The API asked to wait {_duration(asked)} before trying again ({_describe(exc)}); "
                f"scheduler-agent waits at most {self.max_retry_after:g} s, so it stopped. The conversation is "
                f"intact: try again after {_clock_after(asked)}."
            ) from exc
        wait = asked if asked is not None and asked > 0 else backoff(attempt)
        if wait >= deadline.remaining():
            return None
        return wait

    def _failure(self, exc: Exception, attempts: int) -> Exception:
        """The one-line error a person reads for `exc`; anything unknown is passed on as it is (a bug)."""
        after = f"after {attempts - 1} retr{'y' if attempts == 2 else 'ies'}"
        if isinstance(exc, AgentError):
            return exc
        if isinstance(exc, anthropic.CredentialsError):
            return ModelRequestFailed(f"{exc} {NO_CREDENTIALS}")
        if isinstance(exc, anthropic.AuthenticationError):
            return ModelRequestFailed(KEY_REFUSED.format(status=exc.status_code, message=_message(exc)))
        if isinstance(exc, anthropic.APIStatusError):
            if exc.status_code == 200:  # an `event: error` in the stream, after the 200: never retried
                if exc.type in ("overloaded_error", "api_error"):
                    return ModelUnavailable(
                        f"The API failed while streaming the reply ({exc.type}: {_message(exc)}); "
                        "the conversation is intact, try again later."
                    )
                return ModelRequestFailed(f"The API stopped the streamed reply ({exc.type}): {_message(exc)}")
            if exc.status_code >= 500 or exc.status_code in RETRIED_STATUSES:
                return ModelUnavailable(
                    f"The API is unavailable ({exc.status_code}: {_message(exc)}) {after}; "
                    "the conversation is intact, try again later."
                )
            return ModelRequestFailed(f"The API rejected the request ({exc.status_code}): {_message(exc)}")
        if isinstance(exc, anthropic.APITimeoutError | httpx2.TimeoutException):
            return TimedOut(self.timeout, after)
        if isinstance(exc, anthropic.APIConnectionError):
            return ModelUnavailable(
                f"Could not reach the API ({exc}) {after}; check the network or ANTHROPIC_BASE_URL, then try again."
            )
        if isinstance(exc, httpx2.TransportError | IncompleteStream):  # the stream broke after the 200
            return ModelUnavailable(
                f"The streamed reply broke off ({exc or type(exc).__name__}); the conversation is intact, try again."
            )
        if isinstance(exc, TypeError) and "authentication" in str(exc):
            return ModelRequestFailed(NO_CREDENTIALS)
        return exc


class TimedOut(ModelUnavailable):
    """No whole reply within the request's deadline (`--timeout`)."""

    def __init__(self, seconds: float, after: str = "") -> None:
        within = f"within {seconds:g} s (--timeout / SCHEDULER_AGENT_TIMEOUT){' ' + after if after else ''}"
        super().__init__(
            f"The API sent no whole reply {within}; the conversation is intact: try again, or give a longer --timeout."
        )


def _what_failed(exc: Exception) -> tuple[int | None, str]:
    if isinstance(exc, anthropic.APIStatusError):
        kind = exc.type if isinstance(getattr(exc, "type", None), str) else ""
        return exc.status_code, (kind or "error").removesuffix("_error").replace("_", " ")
    if isinstance(exc, anthropic.APITimeoutError):
        return None, "timed out"
    return None, "connection failed"


def _describe(exc: Exception) -> str:
    if isinstance(exc, anthropic.APIStatusError):
        return f"{exc.status_code}: {_message(exc)}"
    return str(exc)


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:g} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} minutes"
    return f"{seconds / 3600:.1f} hours"


def _clock_after(seconds: float) -> str:
    moment = datetime.now(UTC) + timedelta(seconds=min(seconds, 10 * 365 * 86400))
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC")


def _events(response: httpx2.Response, deadline: Deadline, seconds: float) -> Iterator[tuple[str, JSON]]:
    """(event name, data) for each server-sent event; an `event: error` raises as the SDK's stream does.

    A stream that goes on past the deadline (a trickle of pings) is cut off there."""
    for sse in anthropic.Stream.raw_events(response):
        if deadline.expired():
            raise TimedOut(seconds)
        if not sse.event or sse.event == "ping":
            continue
        try:
            data = json.loads(sse.data) if sse.data else {}
        except ValueError as exc:
            raise IncompleteStream(f"the data of a {sse.event} event is not JSON: {exc}") from exc
        if sse.event == "error":
            raise anthropic.APIStatusError(f"{data}", response=response, body=data)
        yield sse.event, data


def _message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)
