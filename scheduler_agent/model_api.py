"""The one place that talks to the Anthropic SDK. Imported only on paths that call the model.

`send` returns the API's response body as plain JSON, exactly as it came over the wire:
the list stores the provider's own content array, not a re-serialised SDK object.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import anthropic

from scheduler_agent.errors import ModelRequestFailed, ModelUnavailable

if TYPE_CHECKING:
    from anthropic._middleware import MiddlewareInput

JSON = dict[str, Any]

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


class ModelAPI:
    """`send(request) -> response body`, turning SDK failures into one-line errors for people."""

    def __init__(self, client: anthropic.Anthropic) -> None:
        self.client = client

    def send(self, request: JSON) -> JSON:
        try:
            raw = self.client.messages.with_raw_response.create(**request)
            body: JSON = json.loads(raw.http_response.content)
            return body
        except anthropic.CredentialsError as exc:
            raise ModelRequestFailed(f"{exc} {NO_CREDENTIALS}") from exc
        except anthropic.AuthenticationError as exc:
            raise ModelRequestFailed(f"The API refused the credentials ({_message(exc)}). {NO_CREDENTIALS}") from exc
        except anthropic.APIStatusError as exc:
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
        except TypeError as exc:
            if "authentication" in str(exc):
                raise ModelRequestFailed(NO_CREDENTIALS) from exc
            raise


def _message(exc: anthropic.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        error = body.get("error")
        if isinstance(error, dict) and error.get("message"):
            return str(error["message"])
    return str(exc.message)
