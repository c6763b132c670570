"""The Anthropic SDK, imported once, with the collector paused: every module of `api/` that needs it imports it
from here, so no import of the SDK can begin with the collector on.

The SDK's import makes about 150,000 objects that live as long as the process. Collecting while it runs
made ~300 passes over them that freed about 650 objects, 120-200 ms of a 0.9 s import here: paused until
it is done, then those objects are kept out of every later collection (issue 14). Frozen before the collector
is on again: the count of objects made while it was off would start a pass over all of them at once.
"""

from __future__ import annotations

import gc

from scheduler_agent.agent.collector import collector_paused

with collector_paused():
    import anthropic
    import httpx2
    from anthropic._constants import RAW_RESPONSE_HEADER  # what `with_streaming_response` sends

    gc.freeze()

__all__ = ["RAW_RESPONSE_HEADER", "anthropic", "httpx2"]
