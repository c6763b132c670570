"""Two real processes book overlapping slots at the same moment: exactly one wins.

Each process runs `scheduler-agent calendar add-event` and is paused (the test hook
`between_check_and_insert`) after its free check, inside its `BEGIN IMMEDIATE` transaction,
so the first holds the write lock for a second while the second is already trying to book.
The processes write when they started, when the pause held them and when they ended, which
proves the overlap.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from sqlalchemy import Connection
from sqlalchemy import text as sql

from scheduler_agent.calendar.fixtures import seed_demo
from scheduler_agent.storage.db import connect

# Both processes import everything, meet at a barrier (files), then run the CLI at once.
RUN_CLI = """
import json, sys, time
from pathlib import Path
from scheduler_agent.agent import faults
from scheduler_agent.cli.app import main

marks_file, barrier = Path(sys.argv.pop(1)), Path(sys.argv.pop(1))
marks = {}
real_pause = faults.pause

def pause(point):
    began = time.time()
    real_pause(point)
    marks["paused"] = [began, time.time()]

faults.pause = pause
(barrier / marks_file.name).touch()
give_up = time.time() + 30
while len(list(barrier.iterdir())) < 2 and time.time() < give_up:
    time.sleep(0.001)
marks["start"] = time.time()
try:
    main()
finally:
    marks["end"] = time.time()
    marks_file.write_text(json.dumps(marks))
"""


def test_two_processes_booking_overlapping_slots_one_wins(tmp_path: Path) -> None:
    db = tmp_path / "calendar.db"
    seed_demo(connect(db))
    barrier = tmp_path / "barrier"
    barrier.mkdir()
    env = {
        **os.environ,
        "SCHEDULER_AGENT_TEST_PAUSE_AT": "between_check_and_insert",
        "SCHEDULER_AGENT_TEST_PAUSE": "1",
    }
    wanted = {"Alpha": "2026-08-31T14:00", "Beta": "2026-08-31T14:15"}  # 14:00-14:30 and 14:15-14:45
    processes = {
        title: subprocess.Popen(
            [
                *(sys.executable, "-c", RUN_CLI, str(tmp_path / f"{title}.json"), str(barrier)),
                *("calendar", "add-event", "--with", "priya", "--start", start, "--title", title),
                *("--db", str(db), "--today", "2026-08-27"),
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )
        for title, start in wanted.items()
    }
    done = {title: process.communicate(timeout=60) for title, process in processes.items()}
    codes = {title: process.returncode for title, process in processes.items()}
    assert sorted(codes.values()) == [0, 1], done
    winner = next(title for title, code in codes.items() if code == 0)
    loser = next(title for title, code in codes.items() if code == 1)

    # The winner booked; the loser got one actionable line naming the winner's event.
    conn = connect(db)
    [(event_id, title)] = conn.execute(
        sql(
            "SELECT id, title FROM events WHERE start_utc < '2026-08-31T13:45:00Z' AND end_utc > '2026-08-31T13:00:00Z'"
        )
    ).fetchall()
    assert title == winner
    out, err = done[winner]
    assert out.startswith(f"Booked '{winner}' on Mon 2026-08-31")
    assert out.endswith(f"Event id: {event_id}.\n")
    out, err = done[loser]
    assert out == ""
    assert err.startswith("Error: ")
    assert err.count("\n") == 1
    assert f"is not free: it overlaps '{winner}' (" in err
    assert "Nothing was booked; give a --start inside a free window." in err  # people's words, not the model's
    assert "Traceback" not in err

    # They really overlapped: the loser was already running while the winner held the write lock
    # (paused between its check and its insert), and could only finish after the winner let go.
    marks = {title: marks_of(tmp_path / f"{title}.json") for title in wanted}
    held_from, held_to = marks[winner]["paused"]
    assert marks[loser]["start"] < held_to < marks[loser]["end"]
    assert held_from < marks[loser]["end"]
    assert "paused" not in marks[loser]  # its check, after the winner's commit, found the conflict
    assert no_other_bookings(conn)


def marks_of(path: Path) -> dict[str, Any]:
    marks: dict[str, Any] = json.loads(path.read_text())
    return marks


def no_other_bookings(conn: Connection) -> bool:
    count: int = conn.execute(sql("SELECT count(*) FROM bookings")).fetchone()[0]
    return count == 0  # the CLI keeps no record
