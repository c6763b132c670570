"""The Anthropic SDK, imported once, with the collector paused: every module of `api/` that needs it imports it
from here, so no import of the SDK can begin with the collector on.

The SDK's import makes about 150,000 objects that live as long as the process. Collecting while it runs
made ~300 passes over them that freed about 650 objects, 120-200 ms of a 0.9 s import here: paused until
it is done, then those objects are kept out of every later collection (issue 14). Frozen before the collector
is on again: the count of objects made while it was off would start a pass over all of them at once.

The SDK's asynchronous aiohttp transport (`DefaultAioHttpClient`) is left out of that import: the SDK loads
it whenever aiohttp is installed (xandikos, for one, brings it), about 100 ms of CPU, and this client is
synchronous and never uses it. The SDK catches the ImportError as it does when aiohttp is absent; the block is
lifted once the SDK is in, so anything that imports the transport itself later still gets it.
"""

from __future__ import annotations

import gc
import sys

from scheduler_agent.agent.collector import collector_paused

AIOHTTP_TRANSPORT = "anthropic._vendor.httpx_aiohttp"  # the SDK's optional transport, imported in a try

with collector_paused():
    blocked = AIOHTTP_TRANSPORT not in sys.modules
    if blocked:  # None in sys.modules: the import system's own way to make an import fail
        sys.modules[AIOHTTP_TRANSPORT] = None  # type: ignore[assignment]
    try:
        import anthropic
        import httpx2
        from anthropic._constants import RAW_RESPONSE_HEADER  # what `with_streaming_response` sends
    finally:
        if blocked:
            del sys.modules[AIOHTTP_TRANSPORT]

    gc.freeze()

__all__ = ["RAW_RESPONSE_HEADER", "anthropic", "httpx2"]
