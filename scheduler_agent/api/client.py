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
Here `messages.create` sends the request dict as it is, and the raw events (`anthropic.Stream.raw_events`)
are assembled as JSON, key order kept: `assemble` below is the SDK's own accumulation, done on the JSON.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Callable, Iterator, Sequence
from typing import TYPE_CHECKING

import anthropic
import httpx2

from scheduler_agent.agent.errors import ModelRequestFailed, ModelUnavailable
from scheduler_agent.agent.types import JSON
from scheduler_agent.api.sse import IncompleteStream, assemble

gc.freeze()  # the SDK import leaves ~145,000 long-lived objects: keep them out of every collection (issue 14)

if TYPE_CHECKING:
    from anthropic._middleware import MiddlewareInput


NO_CREDENTIALS = (
    "No Anthropic credentials: set ANTHROPIC_API_KEY (or ANTHROPIC_AUTH_TOKEN / a profile). "
    "To see the agent work without a key, run `scheduler-agent demo`."
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


class ModelAPI:
    """`send(request) -> response body`, turning SDK failures into one-line errors for people.

    `on_text` hears each text delta of a streamed request (one with `"stream": true`), in order."""

    def __init__(self, client: anthropic.Anthropic, on_text: OnText | None = None) -> None:
        self.client = client
        self.on_text = on_text

    def send(self, request: JSON) -> JSON:
        try:
            if request.get("stream"):
                return self._stream(request)
            raw = self.client.messages.with_raw_response.create(**request)
            body: JSON = json.loads(raw.http_response.content)
            return body
        except anthropic.CredentialsError as exc:
            raise ModelRequestFailed(f"{exc} {NO_CREDENTIALS}") from exc
        except anthropic.AuthenticationError as exc:
            raise ModelRequestFailed(f"The API refused the credentials ({_message(exc)}). {NO_CREDENTIALS}") from exc
        except anthropic.APIStatusError as exc:
            if exc.status_code == 200:  # an `event: error` in the stream, after the 200: the SDK never retries it
                if exc.type in ("overloaded_error", "api_error"):
                    raise ModelUnavailable(
                        f"The API failed while streaming the reply ({exc.type}: {_message(exc)}); "
                        "the conversation is intact, try again later."
                    ) from exc
                raise ModelRequestFailed(f"The API stopped the streamed reply ({exc.type}): {_message(exc)}") from exc
            if exc.status_code >= 500 or exc.status_code in (408, 409, 429):
                raise ModelUnavailable(
                    f"The API is unavailable ({exc.status_code}: {_message(exc)}) after "
                    f"{self.client.max_retries} retries; the conversation is intact, try again later."
                ) from exc
            raise ModelRequestFailed(f"The API rejected the request ({exc.status_code}): {_message(exc)}") from exc
        except anthropic.APIConnectionError as exc:
            raise ModelUnavailable(
                f"Could not reach the API ({exc}) after {self.client.max_retries} retries; "
                "check the network or ANTHROPIC_BASE_URL, then try again."
            ) from exc
        except (httpx2.TransportError, IncompleteStream) as exc:  # the stream broke after the 200
            raise ModelUnavailable(
                f"The streamed reply broke off ({exc or type(exc).__name__}); the conversation is intact, try again."
            ) from exc
        except TypeError as exc:
            if "authentication" in str(exc):
                raise ModelRequestFailed(NO_CREDENTIALS) from exc
            raise

    def _stream(self, request: JSON) -> JSON:
        """POST the request as it is (`"stream": true` included) and assemble the events it answers with."""
        with self.client.messages.with_streaming_response.create(**request) as response:
            return assemble(_events(response.http_response), self.on_text)


def _events(response: httpx2.Response) -> Iterator[tuple[str, JSON]]:
    """(event name, data) for each server-sent event; an `event: error` raises as the SDK's stream does."""
    for sse in anthropic.Stream.raw_events(response):
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
