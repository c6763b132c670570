"""A worker process: the turn's workflow and its activities, polling one task queue of a Temporal server.

Temporal hands it workflow tasks (the while-loop deciding the next step) and activity tasks (the steps); it
runs up to `concurrency` steps at once. SIGTERM (or Ctrl-C) stops it gracefully: it takes no new task and lets
the steps it runs finish (and store what they appended) for up to `grace` seconds. `drain`: it stops by itself
once no turn on its task queue is running, except those that wait for a person.
"""

from __future__ import annotations

import asyncio
import re
import signal
from datetime import timedelta

from sqlalchemy import Connection
from temporalio.client import Client
from temporalio.worker import Worker

from scheduler_agent.workflows import records
from scheduler_agent.workflows.steps import TurnSteps
from scheduler_agent.workflows.turn import TurnWorkflow

_CID = re.compile(r"conversation-([0-9]+)-turn-")
DRAIN_POLL = 0.5  # seconds between a draining worker's looks at its task queue


def make_worker(client: Client, task_queue: str, steps: TurnSteps, concurrency: int, grace: float) -> Worker:
    return Worker(
        client,
        task_queue=task_queue,
        workflows=[TurnWorkflow],
        activities=[steps.mcp_tools, steps.model_step, steps.tool_round],
        max_concurrent_activities=concurrency,
        graceful_shutdown_timeout=timedelta(seconds=grace),
    )


async def run(client: Client, task_queue: str, steps: TurnSteps, concurrency: int, grace: float, drain: bool) -> None:
    """Run until SIGTERM or SIGINT (or, `drain`, until the task queue has nothing left to run)."""
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for number in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(number, stopping.set)
    async with make_worker(client, task_queue, steps, concurrency, grace):
        if drain:
            waiting = asyncio.ensure_future(stopping.wait())
            drained = asyncio.ensure_future(until_drained(client, task_queue, steps))
            await asyncio.wait({waiting, drained}, return_when=asyncio.FIRST_COMPLETED)
            for task in (waiting, drained):
                task.cancel()
        else:
            await stopping.wait()


async def until_drained(client: Client, task_queue: str, steps: TurnSteps) -> None:
    """Return once, twice in a row, every running turn on `task_queue` waits for a person (or none runs)."""
    quiet = 0
    while quiet < 2:
        await asyncio.sleep(DRAIN_POLL)
        query = f'TaskQueue="{task_queue}" AND ExecutionStatus="Running"'
        cids = [int(_CID.search(execution.id)[1]) async for execution in client.list_workflows(query)]  # type: ignore[index]
        busy = await asyncio.get_running_loop().run_in_executor(steps.pool, _busy, steps, cids)
        quiet = 0 if busy else quiet + 1


def _busy(steps: TurnSteps, cids: list[int]) -> bool:
    if not cids:
        return False
    conn: Connection = steps.connect()
    try:
        return any(not records.pending(conn, cid) for cid in cids)
    finally:
        conn.close()
