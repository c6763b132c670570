"""Failover on Temporal (issue 36): worker processes die, race, and lose their servers, and every turn still ends
once, on the real PostgreSQL and a real Temporal dev server, against the loopback scripted API.

- a worker SIGKILLed after its first booking, before its round is stored: another worker, started then, takes
  the step over within the take-over time (the heartbeat timeout, 10 s, and a little: at most 15 s), and
  nothing is done twice;
- six conversations racing for one slot through two workers: one booking;
- the Temporal server restarted mid-turn (the same port and `--db-filename`), and PostgreSQL restarted
  mid-turn: every turn still ends, nothing twice, and no request reaches the API twice (a reply that came
  while PostgreSQL was down is handed to the step's next attempt in its heartbeat).

Take-over is timed from the moment the killed worker is seen dead to the moment its step's round is in the
store, written by the other worker; the test prints it (a bound is asserted, not a speed).
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from worker_fleet import (
    BOOKINGS,
    Asked,
    all_ended,
    count,
    first_text,
    lint_clean,
    statuses,
    stored,
    submit,
    temporal_cli,
    until,
    workers,
)

from scheduler_agent.agent.types import JSON
from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.storage import db
from scheduler_agent.testing.booking_script import booking_script, request_text
from scheduler_agent.testing.postgres import PostgresServer, ServerUnavailable
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use
from scheduler_agent.testing.temporal import TemporalServer
from scheduler_agent.workflows.names import HEARTBEAT_TIMEOUT, TurnKey

TAKE_OVER_BOUND = 15.0  # the bound on moving a dead worker's step to another
FINISH_SECONDS = 150.0  # every turn ends within this (generous: a loaded 2-core machine)
COMPLETED = "WORKFLOW_EXECUTION_STATUS_COMPLETED"


def seeded(url: str) -> str:
    conn = db.open_db(url)
    seed_demo(conn)
    conn.close()
    return url


@pytest.fixture
def pg_store(pg_url: str) -> str:
    """The demo calendar on a new database of the session's PostgreSQL server."""
    return seeded(pg_url)


@pytest.fixture
def queue(temporal: TemporalServer) -> str:
    return os.environ["SCHEDULER_AGENT_TASK_QUEUE"]


def all_completed(address: str, keys: list[TurnKey]) -> None:
    """Every turn's workflow completes (a moment after its last step stored the answer), as the server says."""
    try:
        until("every workflow completed", 60, lambda: set(statuses(address, keys).values()) == {COMPLETED}, 0.5)
    except AssertionError as exc:  # which did not, and how each stands: what to look for in the workers' output
        raise AssertionError(f"{exc}; the workflows' statuses by conversation: {statuses(address, keys)}") from None


def each_slot_booked_once(store: str, slots: range) -> None:
    for n in slots:
        assert count(store, "SELECT count(*) FROM events WHERE title = :title", f"Slot {n}") == 1, n
    assert count(store, "SELECT count(*) FROM events WHERE title LIKE 'Slot %'") == len(slots)


@pytest.mark.timeout(300)
def test_a_worker_killed_after_a_booking_hands_the_turn_to_the_other_within_the_take_over_time(
    temporal: TemporalServer, queue: str, pg_store: str, tmp_path: Path
) -> None:
    conversations = range(10)
    asked = Asked(booking_script(delay=0.2))
    killer = "SCHEDULER_AGENT_FAULT=after_calendar_write"  # SIGKILL once its first booking is committed
    # The doomed worker runs alone until it dies, so the first booking is surely its own (with the other beside it
    # from the start, Temporal may give every booking round to the other); the other starts at its death, and is
    # ready well inside the heartbeat timeout that the take-over waits for.
    with (
        ScriptedServer([], script=asked) as api,
        workers(tmp_path, temporal.address, queue, api.url, pg_store, (killer,)) as (doomed,),
    ):
        keys = submit(pg_store, temporal.address, queue, [request_text(n) for n in conversations], BOOKINGS)
        until("the worker reached a booking and died", 120, lambda: doomed.process.poll() is not None, 0.05)
        died = time.monotonic()
        assert doomed.process.returncode == -9, doomed.said()
        with workers(tmp_path, temporal.address, queue, api.url, pg_store, (), first="B") as (other,):
            # the turn it was running: its booking is in the calendar, the round that answers it is not in the list
            booked = [
                n
                for n in conversations
                if count(pg_store, "SELECT count(*) FROM events WHERE title = :title", f"Slot {n}")
            ]
            [victim] = booked  # the only booking: the other worker books nothing before the take-over
            killed = stored(pg_store, keys[victim].cid)
            assert len(killed) == 4, killed  # the user turn, a search and its round, the booking
            assert killed[-1]["content"][-1]["id"] == f"toolu_s{victim}_book"

            until(
                "the other worker stored the killed step's round",
                60,
                lambda: len(stored(pg_store, keys[victim].cid)) >= 5,
                0.05,
            )
            take_over = time.monotonic() - died
            until("every turn ended", FINISH_SECONDS, lambda: all_ended(pg_store, keys))
            next_request = asked.first(victim, 5)
            assert next_request is not None
            print(
                f"\ntake-over: the killed worker's step was stored by the other worker {take_over:.1f} s after its "
                f"death (heartbeat timeout {HEARTBEAT_TIMEOUT:g} s); the turn's next request came "
                f"{next_request - died:.1f} s after it"
            )
            assert take_over < TAKE_OVER_BOUND
            assert f"conversation {keys[victim].cid} done" in other.said()  # the other worker ended it
            # with the worker still running: a turn's answer is stored by its last step, and its workflow completes
            # in the workflow task after it, which no worker runs once the block has stopped it
            all_completed(temporal.address, keys)
    each_slot_booked_once(pg_store, conversations)
    lint_clean(pg_store, keys)
    for n, key in zip(conversations, keys, strict=True):
        assert stored(pg_store, key.cid)[-1]["content"] == [text(f"Booked slot {n}.")]
    # every request once: the booking reply the killed worker had stored was taken from the store, not asked again
    assert asked.counts() == {(n, entries): 1 for n in conversations for entries in (1, 3, 5)}


def attempts(address: str, key: TurnKey) -> list[int]:
    """The attempt of every activity the turn's workflow started, from the server's own history."""
    shown = json.loads(temporal_cli(address, "workflow", "show", "--workflow-id", key.workflow_id, "-o", "json"))
    started = [
        event["activityTaskStartedEventAttributes"]
        for event in shown["events"]
        if "activityTaskStartedEventAttributes" in event
    ]
    return [int(each.get("attempt", 1)) for each in started]


@pytest.mark.timeout(240)
def test_a_step_waiting_longer_than_the_heartbeat_timeout_heartbeats_and_is_not_taken_from_its_worker(
    temporal: TemporalServer, queue: str, pg_store: str, tmp_path: Path
) -> None:
    """The model takes longer than the heartbeat timeout to answer, and so does the booking: each step heartbeats
    while it waits, so neither is run again (on the other worker, idle beside it)."""
    slow = HEARTBEAT_TIMEOUT + 3
    script = booking_script()

    def slow_first_reply(request: JSON) -> Reply | None:
        reply = script(request)
        return replace(reply, delay=slow) if reply is not None and len(request["messages"]) == 1 else reply

    asked = Asked(slow_first_reply)
    pause = ("SCHEDULER_AGENT_TEST_PAUSE_AT=between_check_and_insert", f"SCHEDULER_AGENT_TEST_PAUSE={slow}")
    with (
        ScriptedServer([], script=asked) as api,
        workers(tmp_path, temporal.address, queue, api.url, pg_store, pause, pause),
    ):
        [key] = submit(pg_store, temporal.address, queue, [request_text(0)], BOOKINGS)
        until("the turn ended", FINISH_SECONDS, lambda: all_ended(pg_store, [key]))
    assert asked.counts() == {(0, 1): 1, (0, 3): 1, (0, 5): 1}
    assert attempts(temporal.address, key) == [1, 1, 1, 1, 1]  # three model steps, two rounds: each run once
    each_slot_booked_once(pg_store, range(1))


RACED = "2026-09-14T11:00"


def racing(request: JSON) -> Reply:
    """A racer ("Race K"): book Priya at the same time as every other racer; then say what the tool answered."""
    messages = request["messages"]
    k = re.findall(r"Race (\d+)", first_text(messages))[0]
    if len(messages) == 1:
        book = {"with": "priya", "start": RACED, "minutes": 30, "title": f"Race {k}"}
        return Reply([tool_use(f"toolu_race_{k}", "create_event", book)], "tool_use")
    result = messages[-1]["content"][0]
    return Reply([text(f"Race {k}: {'lost' if result.get('is_error') else 'won'}.")])


@pytest.mark.timeout(240)
def test_six_conversations_racing_for_one_slot_through_the_workers_book_it_once(
    temporal: TemporalServer, queue: str, pg_store: str, tmp_path: Path
) -> None:
    asked = Asked(racing)
    concurrency = ("--concurrency", "3")
    with (
        ScriptedServer([], script=asked) as api,
        workers(tmp_path, temporal.address, queue, api.url, pg_store, concurrency, concurrency),
    ):
        keys = submit(pg_store, temporal.address, queue, [f"Race {k}" for k in range(6)], BOOKINGS)
        until("every racer ended", FINISH_SECONDS, lambda: all_ended(pg_store, keys))
    assert count(pg_store, "SELECT count(*) FROM events WHERE title LIKE 'Race %'") == 1
    answers = [stored(pg_store, key.cid)[-1]["content"][0]["text"] for key in keys]
    assert sorted(answer.split(": ")[1] for answer in answers) == ["lost."] * 5 + ["won."]
    winner = next(answer.split(":")[0] for answer in answers if answer.endswith("won."))
    assert count(pg_store, "SELECT count(*) FROM events WHERE title = :title", winner) == 1
    lint_clean(pg_store, keys)
    assert asked.counts() == {(k, entries): 1 for k in range(6) for entries in (1, 3)}


@pytest.fixture
def own_temporal(tmp_path: Path) -> Iterator[TemporalServer]:
    """A Temporal dev server of this test's own (the test restarts it), its state in a file in tmp."""
    from scheduler_agent.testing.temporal import ServerUnavailable as NoTemporal

    try:
        server = TemporalServer(tmp_path / "temporal").start()
    except NoTemporal as exc:
        pytest.skip(f"no Temporal dev server can be started: {exc}")
    yield server
    server.stop()


@pytest.fixture
def own_postgres() -> Iterator[PostgresServer]:
    """A PostgreSQL server of this test's own (the test restarts it)."""
    try:
        server = PostgresServer().start()
    except ServerUnavailable as exc:
        pytest.skip(f"no PostgreSQL server can be started: {exc}")
    yield server
    server.stop()


def slow_bookings(asked: Asked) -> None:
    """Wait until every turn's booking request has come (each waits 3 s for its reply: mid-turn)."""
    until("the turns are mid-turn", 90, lambda: sum(e == 3 for (_, e) in asked.counts()) >= 4, 0.05)


@pytest.mark.timeout(300)
def test_the_temporal_server_restarted_mid_turn_every_turn_still_ends_and_nothing_twice(
    own_temporal: TemporalServer, pg_store: str, tmp_path: Path
) -> None:
    asked = Asked(booking_script(delay=3.0))
    address, queue = own_temporal.address, "restart-temporal"
    many = ("--concurrency", "2")
    with (
        ScriptedServer([], script=asked) as api,
        workers(tmp_path, address, queue, api.url, pg_store, many, many) as running,
    ):
        keys = submit(pg_store, address, queue, [request_text(n) for n in range(4)], BOOKINGS)
        slow_bookings(asked)
        restarted = time.monotonic()
        own_temporal.restart()  # the same port, the same --db-filename: every workflow kept
        print(f"\nthe Temporal server was down for {time.monotonic() - restarted:.1f} s")
        until("every turn ended", FINISH_SECONDS, lambda: all_ended(pg_store, keys))
        assert all(worker.process.poll() is None for worker in running)  # the workers rode it out
        all_completed(address, keys)
    each_slot_booked_once(pg_store, range(4))
    lint_clean(pg_store, keys)
    assert asked.counts() == {(n, entries): 1 for n in range(4) for entries in (1, 3, 5)}


@pytest.mark.timeout(300)
def test_postgresql_restarted_mid_turn_every_turn_still_ends_and_nothing_twice(
    temporal: TemporalServer, queue: str, own_postgres: PostgresServer, tmp_path: Path
) -> None:
    store = seeded(own_postgres.new_database())
    asked = Asked(booking_script(delay=3.0))
    many = ("--concurrency", "2")
    with (
        ScriptedServer([], script=asked) as api,
        workers(tmp_path, temporal.address, queue, api.url, store, many, many) as running,
    ):
        keys = submit(store, temporal.address, queue, [request_text(n) for n in range(4)], BOOKINGS)
        slow_bookings(asked)
        own_postgres.restart()  # every open connection ended; the same port and data after
        until("every turn ended", FINISH_SECONDS, lambda: all_ended(store, keys))
        assert all(worker.process.poll() is None for worker in running)
        all_completed(temporal.address, keys)
    each_slot_booked_once(store, range(4))
    lint_clean(store, keys)
    for n, key in zip(range(4), keys, strict=True):  # no entry twice: the user turn, three replies, two rounds
        assert len(stored(store, key.cid)) == 6, n
    # every request once: a reply that came while the database was down rode in the step's last heartbeat to its
    # next attempt, which stored it instead of asking the model again
    assert asked.counts() == {(n, entries): 1 for n in range(4) for entries in (1, 3, 5)}
