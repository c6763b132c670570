"""HTTP cassettes: record and replay real Messages API traffic with vcrpy.

Readable: JSON bodies are stored as YAML structures, key order kept, multi-line strings as
blocks. Safe: only a short allow-list of headers is recorded, so no secret or per-machine
header reaches a file. Strict: replay never touches the network, matches on the parsed
request body, names the first differing path when a request matches nothing, and fails
when a recorded interaction is never used.

Beside its interactions a cassette carries, under `metadata.scheduler_agent`, the setup that
makes it replayable anywhere: the clock, the calendar, the user's input, the options.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import vcr
from vcr.errors import CannotOverwriteExistingCassetteException

from scheduler_agent.agent.errors import CassetteError
from scheduler_agent.agent.types import JSON
from scheduler_agent.grammar.jsondiff import first_difference
from scheduler_agent.playback.cassette_file import METADATA_KEY, ReadableYaml, no_cassette
from scheduler_agent.storage.files import create_private, require_folder

API_URI = "https://api.anthropic.com/v1/messages"
# Everything else (authorization, x-api-key, cookies, organisation ids, user-agent,
# x-stainless-* platform and retry headers) is dropped before anything is written.
KEPT_REQUEST_HEADERS = ("anthropic-version", "content-type")
KEPT_RESPONSE_HEADERS = ("content-type", "retry-after", "retry-after-ms", "x-should-retry", "x-scripted-reply")


# --- matching ---------------------------------------------------------------------------------


def _body_json(request: Any) -> Any:
    body = request.body
    if not body:
        return None
    return json.loads(body.decode("utf-8") if isinstance(body, bytes) else body)


def body_json(sent: Any, recorded: Any) -> None:
    """vcrpy matcher: the parsed JSON bodies are equal."""
    difference = first_difference(_body_json(recorded), _body_json(sent))
    assert difference is None, f"the body differs at {difference}"


# --- recording filters ------------------------------------------------------------------------


def _scrub_request(request: Any) -> Any:
    if "/v1/messages" not in request.path:
        # Not the Messages API: e.g. a CalDAV server, whose client (niquests, on urllib3-future) vcrpy's
        # urllib3 patch also catches. Not recorded, and left to the network (record.py snapshots the calendar).
        return None
    for name in list(request.headers):
        if name.lower() not in KEPT_REQUEST_HEADERS:
            del request.headers[name]
    request.uri = API_URI  # scripted recordings ran against a loopback server; replay does not care
    return request


def _scrub_response(response: JSON) -> JSON:
    response["headers"] = {
        name: value for name, value in response["headers"].items() if name.lower() in KEPT_RESPONSE_HEADERS
    }
    return response


def _vcr() -> vcr.VCR:
    recorder = vcr.VCR(
        serializer="readable_yaml",
        match_on=["method", "path", "body_json"],
        before_record_request=_scrub_request,
        before_record_response=_scrub_response,
        decode_compressed_response=True,
    )
    recorder.register_serializer("readable_yaml", ReadableYaml())
    recorder.register_matcher("body_json", body_json)
    return recorder


# --- the two ways in --------------------------------------------------------------------------


@contextmanager
def recording(path: Path, setup: JSON) -> Iterator[None]:
    """Record every API request made inside into a new cassette at `path`, with `setup` beside it."""
    require_folder(path, "--record")  # no folders are made for a path the person gives
    path.unlink(missing_ok=True)
    create_private(path)  # empty, 0600: vcrpy records into it as into a missing cassette, and keeps the mode
    with _vcr().use_cassette(str(path), record_mode="all") as cassette:
        cassette.get_metadata(METADATA_KEY, setup)
        yield


class Replay:
    """Replays a cassette; `check_all_played()` fails when a recorded interaction was never used."""

    def __init__(self, cassette: Any) -> None:
        self.cassette = cassette

    def check_all_played(self) -> None:
        unused = len(self.cassette) - len(self.cassette.play_counts)
        if unused:
            raise CassetteError(
                f"{unused} of {len(self.cassette)} recorded interactions in {self.cassette._path} were never "
                "requested: the conversation ended earlier than when it was recorded."
            )

    def explain(self, error: CannotOverwriteExistingCassetteException) -> str:
        """Say which recorded request the failed one should have matched, and where they differ."""
        played = self.cassette.play_counts
        position = next((i for i in range(len(self.cassette)) if played[i] == 0), None)
        where = f"in {self.cassette._path}"
        if position is None:
            return f"A request was sent after every recorded interaction {where} had been used."
        recorded = self.cassette.requests[position]
        difference = first_difference(_body_json(recorded), _body_json(error.failed_request))
        return f"Request {position + 1} of {len(self.cassette)} {where} differs from the recording at {difference}"


@contextmanager
def replaying(path: Path) -> Iterator[Replay]:
    """Replay only: a request that matches no recorded interaction raises; nothing reaches the network."""
    if not path.is_file():
        raise no_cassette(path)
    with _vcr().use_cassette(str(path), record_mode="none") as cassette:
        yield Replay(cassette)


def replay_middleware(replay: Replay) -> Any:
    """SDK middleware that turns a cassette miss into a CassetteError the SDK does not retry."""
    import anthropic

    def middleware(request: Any, call_next: Any) -> Any:
        try:
            return call_next(request)
        except anthropic.APIConnectionError as exc:
            cause = exc.__cause__
            if isinstance(cause, CannotOverwriteExistingCassetteException):
                raise CassetteError(replay.explain(cause)) from None
            raise

    return middleware
