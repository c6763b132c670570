"""Reading recorded HTTP traffic (cassettes) the way people have it, for `lint`. No vcrpy here.

The formats in use:

- this project's (`playback/cassette_file.py`): JSON bodies as YAML structures, `body: {json: ...}`;
- vcrpy's own YAML (and pytest-recording's, which is vcrpy's YAML under `tests/cassettes/`): a request
  `body` as a JSON string, a response `body: {string: ...}` as text, or as `!!binary` (base64) bytes,
  gzip- or deflate-compressed as the server sent them (`content-encoding`) unless the recorder
  decoded them; vcrpy's JSON serializer holds the same in a `.json` file;
- pydantic-ai's: a `parsed_body` beside `body`, the JSON already parsed, on the request and the response;
- Ruby VCR's and some other recorders': `body: {encoding: ..., string: ...}` or `{base64_string: ...}`.

YAML is read by a safe loader that reads Python-specific tags (`!!python/object/apply:...`, left by
cassettes that pickled a header object) as the plain data they tag: nothing is imported or called.
A streamed response (server-sent events) is assembled into the message it made, as the SDK would.
"""

from __future__ import annotations

import base64
import binascii
import functools
import gzip
import json
import zlib
from collections import Counter
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from scheduler_agent.api import sse

MESSAGES_HOST = "api.anthropic.com"
MESSAGES_PATH = "/v1/messages"

Side = Literal["request", "response"]


if TYPE_CHECKING:
    import yaml


@functools.cache
def plain_data_loader() -> type[yaml.SafeLoader]:
    """`yaml.SafeLoader`, and any other tag (`!!python/...`, `!custom`) read as the plain data it tags.

    Built on first use: PyYAML is imported only when a cassette is read (`lint` of a JSON list never is)."""
    import yaml

    class PlainDataLoader(yaml.SafeLoader):
        pass

    def plain(loader: yaml.SafeLoader, suffix: str, node: yaml.Node) -> Any:
        if isinstance(node, yaml.MappingNode):
            return loader.construct_mapping(node, deep=True)
        if isinstance(node, yaml.SequenceNode):
            return loader.construct_sequence(node, deep=True)
        return loader.construct_scalar(node)  # type: ignore[arg-type]

    PlainDataLoader.add_multi_constructor("tag:yaml.org,2002:python/", plain)
    PlainDataLoader.add_multi_constructor("!", plain)
    return PlainDataLoader


def load_yaml(text: str) -> Any:
    """The data of a YAML document; raises yaml.YAMLError when it is not YAML."""
    import yaml

    return yaml.load(text, Loader=plain_data_loader())  # a SafeLoader subclass: no object is built, nothing runs


def is_messages_api(interaction: object) -> bool:
    """A request to the Messages API itself (its host and path; `?beta=true` and the like allowed)."""
    request = interaction.get("request") if isinstance(interaction, Mapping) else None
    uri = request.get("uri") if isinstance(request, Mapping) else None
    if not isinstance(uri, str):
        return False
    parts = urlsplit(uri)
    return parts.hostname == MESSAGES_HOST and parts.path.rstrip("/") == MESSAGES_PATH


def _headers(part: Mapping[str, Any]) -> dict[str, str]:
    """Header names in lower case, each with its first value."""
    headers = part.get("headers")
    found: dict[str, str] = {}
    if isinstance(headers, Mapping):
        for name, value in headers.items():
            first = value[0] if isinstance(value, list) and value else value
            if isinstance(name, str) and isinstance(first, str):
                found[name.lower()] = first
    return found


class Unreadable(Exception):
    """A body that is there but cannot be read (an unknown compression, bytes that are not text)."""


def _text(raw: bytes, encoding: str) -> str:
    """Bytes of a body as text, decompressed as the header says (or as the gzip magic shows)."""
    try:
        if encoding == "gzip" or raw[:2] == b"\x1f\x8b":
            raw = gzip.decompress(raw)
        elif encoding == "deflate":
            raw = zlib.decompress(raw)
        elif encoding not in ("", "identity"):
            raise Unreadable(f"the body is {encoding}-compressed, which lint cannot read")
        return raw.decode("utf-8")
    except (OSError, EOFError, zlib.error, UnicodeDecodeError) as exc:
        raise Unreadable(f"the body cannot be read as text ({exc})") from None


def body_text_or_data(interaction: object, side: Side) -> Any:
    """The body of one side of an interaction: parsed JSON (a dict or list), text, or None when there is none.

    Raises Unreadable for a body that is there but cannot be read.
    """
    part = interaction.get(side) if isinstance(interaction, Mapping) else None
    if not isinstance(part, Mapping):
        return None
    if isinstance(part.get("parsed_body"), Mapping | list):
        return part["parsed_body"]
    body = part.get("body")
    encoding = _headers(part).get("content-encoding", "").strip().lower()
    if isinstance(body, Mapping):
        if set(body) == {"json"}:
            return body["json"]
        if "messages" in body or "content" in body:  # the JSON itself, written as a YAML structure
            return body
        if isinstance(body.get("base64_string"), str):
            try:
                body = base64.b64decode(body["base64_string"], validate=False)
            except (binascii.Error, ValueError) as exc:
                raise Unreadable(f"the body's base64 is not valid ({exc})") from None
        else:
            body = body.get("string")
            if isinstance(body, Mapping) and set(body) == {"json"}:
                return body["json"]
    if isinstance(body, bytes | bytearray):
        body = _text(bytes(body), encoding)
    if not isinstance(body, str):
        return None
    try:
        return json.loads(body)
    except ValueError:
        return body


def request_messages(interaction: object) -> Any:
    """The `messages` of a recorded request (None when its body has none)."""
    body = body_text_or_data(interaction, "request")
    return body.get("messages") if isinstance(body, Mapping) else None


def response_message(interaction: object, skipped: Counter[str]) -> Any:
    """The message a recorded response holds: a JSON body, or an event stream assembled.

    None when the response holds no message (an error body, no body). Raises Unreadable, or
    sse.IncompleteStream for a stream that does not make a whole message. `skipped` counts the event
    types the assembler does not know.
    """
    body = body_text_or_data(interaction, "response")
    if isinstance(body, str) and body.lstrip().startswith(("event:", "data:")):
        return sse.assemble(sse.parse(body), skipped=skipped)
    return body if isinstance(body, Mapping) and body.get("type", "message") == "message" else None
