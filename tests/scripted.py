"""Test helpers: the real SDK against a loopback server that serves scripted replies."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from scheduler_agent.agent.loop import Send
from scheduler_agent.api.client import ModelAPI, make_client
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer

DUMMY_KEY = "sk-ant-test-dummy"


@contextmanager
def scripted_send(replies: list[Reply], *, max_retries: int = 0) -> Iterator[tuple[Send, ScriptedServer]]:
    """A `send` that goes through the real SDK and HTTP to a loopback server serving `replies`."""
    with ScriptedServer(replies) as server:
        client = make_client(api_key=DUMMY_KEY, base_url=server.url, max_retries=max_retries)
        yield ModelAPI(client).send, server
