"""One guarded GET of a feed: where it may go, how long it may take, how much it may give.

A feed's address is text someone else gave, and its server may answer differently at every refresh. So:

- the scheme is `https` unless the subscription allows `http` (`--allow-http`);
- redirects are followed here, at most `MAX_HOPS`, each hop checked as the first URL was;
- every address is checked where the connection is made (`GuardedBackend`, httpcore's network backend): the
  name is resolved here, each address is checked (`feed_addresses.refusal`), and the socket connects to the
  address that passed, so a name that resolves to 127.0.0.1 is caught and nothing is connected to a refused
  address;
- one wall-clock deadline covers the whole fetch (resolving, connecting, every hop, headers and body): each
  read and write waits at most what is left of it;
- the body is read raw and decoded here, a bounded piece at a time, counting decoded bytes against the cap:
  a gzip bomb stops at the cap and never sits whole in memory.
"""

from __future__ import annotations

import socket
import ssl
import threading
import time
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import urljoin

import httpcore2
import httpx2

from scheduler_agent.calendar.feed_addresses import (
    FeedError,
    IPAddress,
    Policy,
    Refused,
    check_url,
    literal_address,
    refusal,
    shown,
)

MAX_HOPS = 5  # redirects followed after the feed's own address
_PIECE = 65_536  # decoded bytes produced from the compressed stream at a time


class TooLarge(FeedError):
    """The decoded body passed the cap."""


@dataclass(frozen=True)
class Fetched:
    status: int
    reason: str
    body: bytes
    etag: str | None
    last_modified: str | None


# --- the network backend: resolve, check, connect; every wait clipped to the deadline ------------------


class Deadline:
    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.started = time.monotonic()

    def left(self, wanted: float | None = None) -> float:
        left = self.seconds - (time.monotonic() - self.started)
        if left <= 0:
            raise httpcore2.ReadTimeout("the fetch's deadline passed")
        return left if wanted is None else min(wanted, left)

    def elapsed(self) -> float:
        return time.monotonic() - self.started


class _ClippedStream(httpcore2.NetworkStream):
    """A connection whose reads and writes never wait past the fetch's deadline."""

    def __init__(self, inner: httpcore2.NetworkStream, deadline: Deadline) -> None:
        self.inner = inner
        self.deadline = deadline

    def read(self, max_bytes: int, timeout: float | None = None) -> bytes:
        return self.inner.read(max_bytes, self.deadline.left(timeout))

    def write(self, buffer: bytes, timeout: float | None = None) -> None:
        self.inner.write(buffer, self.deadline.left(timeout))

    def close(self) -> None:
        self.inner.close()

    def start_tls(
        self, ssl_context: ssl.SSLContext, server_hostname: str | None = None, timeout: float | None = None
    ) -> httpcore2.NetworkStream:
        tls = self.inner.start_tls(ssl_context, server_hostname, self.deadline.left(timeout))
        return _ClippedStream(tls, self.deadline)

    def get_extra_info(self, info: str) -> Any:
        return self.inner.get_extra_info(info)


class GuardedBackend(httpcore2.SyncBackend):
    """Connects only to addresses the policy allows: the address checked is the address connected to."""

    def __init__(self, policy: Policy, deadline: Deadline) -> None:
        self.policy = policy
        self.deadline = deadline
        self.hop = "the feed's address"

    def connect_tcp(
        self,
        host: str,
        port: int,
        timeout: float | None = None,
        local_address: str | None = None,
        socket_options: Iterable[Any] | None = None,
    ) -> httpcore2.NetworkStream:
        resolved = self._resolve(host, port)
        allowed = [address for address in resolved if refusal(address, self.policy) is None]
        if not allowed:
            first = resolved[0]
            raise Refused(f"refused: {self.hop} goes to {shown(host, first)}, {refusal(first, self.policy)}")
        stream = super().connect_tcp(str(allowed[0]), port, self.deadline.left(timeout), local_address, socket_options)
        return _ClippedStream(stream, self.deadline)

    def _resolve(self, host: str, port: int) -> list[IPAddress]:
        literal = literal_address(host)
        if literal is not None:
            return [literal]
        found: list[Any] = []
        thread = threading.Thread(target=_lookup, args=(host, port, found), daemon=True)
        thread.start()
        thread.join(self.deadline.left())
        if not found:
            raise httpcore2.ConnectTimeout(f"resolving {host} did not finish in time")
        if isinstance(found[0], OSError):
            raise httpcore2.ConnectError(f"{host} cannot be resolved")
        addresses = [literal_address(str(info[4][0]).split("%")[0]) for info in found[0]]
        kept = [address for address in addresses if address is not None]
        if not kept:
            raise httpcore2.ConnectError(f"{host} resolves to no address")
        return kept


def _lookup(host: str, port: int, found: list[Any]) -> None:
    try:
        found.append(socket.getaddrinfo(host, port, type=socket.SOCK_STREAM))
    except OSError as exc:
        found.append(exc)


class _Transport(httpx2.HTTPTransport):
    """httpx's transport over a pool that connects through `backend`: no proxy (the connection is checked
    here), and the TLS context made only when a hop is https (loading the CA certificates takes a while)."""

    def __init__(self, backend: GuardedBackend) -> None:  # not HTTPTransport.__init__: it makes a pool of its own
        self._pool = httpcore2.ConnectionPool(network_backend=backend)


# --- the fetch ----------------------------------------------------------------------------------------


def fetch(url: str, headers: dict[str, str], policy: Policy, seconds: float, max_bytes: int) -> Fetched:
    """GET `url` within `seconds` in all; raise `Refused`, `TooLarge`, or httpx2's errors (a timeout among them).

    The caller catches them; their text never holds the URL beyond its host.
    """
    deadline = Deadline(seconds)
    backend = GuardedBackend(policy, deadline)
    with httpx2.Client(transport=_Transport(backend), follow_redirects=False, trust_env=False) as client:
        here = url
        for hop in range(MAX_HOPS + 1):
            backend.hop = "the feed's address" if hop == 0 else f"redirect {hop}"
            check_url(here, policy, backend.hop)
            request = client.build_request(
                "GET", here, headers={**headers, "Accept-Encoding": "gzip, deflate"}, timeout=deadline.left()
            )
            response = client.send(request, stream=True)
            try:
                if response.is_redirect and "Location" in response.headers:
                    here = urljoin(here, response.headers["Location"])
                    continue
                body = b"" if response.status_code != 200 else _decoded(response, deadline, max_bytes)
                return Fetched(
                    response.status_code,
                    response.reason_phrase,
                    body,
                    response.headers.get("ETag"),
                    response.headers.get("Last-Modified"),
                )
            finally:
                response.close()
    raise FeedError(f"it redirected more than {MAX_HOPS} times")


def _decoded(response: httpx2.Response, deadline: Deadline, max_bytes: int) -> bytes:
    """The body, decoded a bounded piece at a time; `TooLarge` as soon as it passes `max_bytes`."""
    pieces: list[bytes] = []
    size = 0
    for piece in _decode(response.headers.get("Content-Encoding", ""), response.iter_raw(_PIECE)):
        deadline.left()
        size += len(piece)
        if size > max_bytes:
            raise TooLarge(f"it is larger than {max_bytes // 1_000_000} MB once decoded")
        pieces.append(piece)
    return b"".join(pieces)


def _decode(encoding: str, raw: Iterator[bytes]) -> Iterator[bytes]:
    name = encoding.strip().lower()
    if name in ("", "identity"):
        yield from raw
        return
    if name not in ("gzip", "x-gzip", "deflate"):
        raise FeedError(f"it is sent in an encoding this client did not ask for ({name[:20]!r})")
    wbits = 16 + zlib.MAX_WBITS if name != "deflate" else zlib.MAX_WBITS
    inflate = zlib.decompressobj(wbits)
    try:
        for data in raw:
            while data:
                yield inflate.decompress(data, _PIECE)  # never more than a piece out of one input
                data = inflate.unconsumed_tail
                if inflate.eof:  # the next gzip member, if any (padding after the last is left alone)
                    data = inflate.unused_data if inflate.unused_data.startswith(b"\x1f\x8b") else b""
                    inflate = zlib.decompressobj(wbits)
        yield inflate.flush()
    except zlib.error as exc:
        raise FeedError(f"its {name} body cannot be decoded ({exc})") from None
