"""Where a feed may connect: the scheme and the address of every hop, checked against the subscription's flags.

Link-local, multicast, unspecified, broadcast and reserved addresses are never reached (169.254.169.254 and
fe80::/10 hold cloud metadata services); loopback and private ones only with `--allow-private`; plain http only
with `--allow-http`. An IPv4-mapped IPv6 address, and a decimal, hex or octal IPv4 form, is the address it
stands for. No I/O here: `feed_fetch` applies `refusal` to the addresses a name resolves to, before connecting.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass
from urllib.parse import urlsplit

from scheduler_agent.calendar.types import CalendarError

_IPV4_FORM = re.compile(r"^(0x[0-9a-f]*|[0-9]+)(\.(0x[0-9a-f]*|[0-9]+)){0,3}$", re.IGNORECASE)
IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address


class FeedError(CalendarError):
    """A feed that cannot be subscribed or fetched; the message never holds its address, only `masked`."""


class Refused(FeedError):
    """A hop the subscription's flags do not allow: its scheme or its address. Nothing was connected to it."""


@dataclass(frozen=True)
class Policy:
    """What a subscription allows beyond https to public addresses; stored with it, applied at every fetch."""

    allow_http: bool = False
    allow_private: bool = False


# --- addresses ---------------------------------------------------------------------------------------


def literal_address(host: str) -> IPAddress | None:
    """The address a host written as an address stands for (`2852039166`, `0251.0376.0251.0376`, `[::1]`)."""
    text = host.strip("[]")
    try:
        found: IPAddress = ipaddress.ip_address(text)
    except ValueError:
        if not _IPV4_FORM.match(text):
            return None
        try:  # the C library's reading: decimal, octal and hex parts, as a resolver reads them
            found = ipaddress.IPv4Address(socket.inet_aton(text))
        except OSError:
            return None
    if isinstance(found, ipaddress.IPv6Address) and found.ipv4_mapped is not None:
        return found.ipv4_mapped
    return found


def refusal(address: IPAddress, policy: Policy) -> str | None:
    """Why a fetch may not connect to `address`, or None when it may."""
    if address.is_link_local:
        return "a link-local address (where cloud metadata services answer): a feed may never reach it"
    if address.is_multicast:
        return "a multicast address: a feed may never reach it"
    if address.is_unspecified:
        return "the unspecified address: a feed may never reach it"
    if address.is_reserved or address == ipaddress.IPv4Address("255.255.255.255"):
        return "a reserved address: a feed may never reach it"
    if not address.is_global and not policy.allow_private:
        kind = "a loopback" if address.is_loopback else "a private"
        return f"{kind} address: subscribe with --allow-private if the feed is on your own machine or network"
    return None


def shown(host: str, address: IPAddress) -> str:
    return str(address) if host.strip("[]") == str(address) else f"{host} ({address})"


def check_url(url: str, policy: Policy, hop: str) -> None:
    """Refuse a hop whose scheme, credentials or literal address the policy does not allow (before any I/O)."""
    parts = urlsplit(url)
    if parts.scheme == "http" and not policy.allow_http:
        raise Refused(f"refused: {hop} is plain http://: subscribe with --allow-http to fetch it unencrypted")
    if parts.scheme not in ("http", "https"):
        raise Refused(f"refused: {hop} is not an http(s) address (scheme {parts.scheme or 'none'!r})")
    if parts.password is not None:
        raise Refused(f"refused: {hop} holds a password: use the calendar's secret address, which needs no login")
    host = parts.hostname or ""
    address = literal_address(host)
    if address is not None and (why := refusal(address, policy)):
        raise Refused(f"refused: {hop} goes to {shown(host, address)}, {why}")
