"""The benchmark suite of issue 14: every figure against its baseline and its goal, in one table.

    python -m benchmarks            # 5 interleaved runs per row, full-size inputs (a few minutes)
    python -m benchmarks --runs 9   # more runs
    python -m benchmarks --quick    # 1 run, small inputs: checks that every row runs (CI)

The baselines come from the `bench` extra (`pip install -e '.[bench]'`): the SDK's tool runner,
`llm`, `icalendar`. Inputs are built in a temporary folder: a 100,000-event calendar, a
10,000-entry conversation, a 10,000-event .ics file. Absolute times vary by machine; the ratios,
measured side by side in the same rounds, are the claim. Nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import datetime
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from benchmarks import caldav_sync, http_iteration, inputs, loop_rows, process_rows, results, store_rows, workers
from benchmarks.common import (
    NEUTRAL_CWD,
    Row,
    bench_env,
    executable,
    fmt_ms,
    machine_speed,
    module_command,
    print_table,
)


@dataclass(frozen=True)
class Sizes:
    events: int
    entries: int
    ics_events: int

    @staticmethod
    def label(number: int) -> str:
        return f"{number:,}"


FULL = Sizes(events=100_000, entries=10_000, ics_events=10_000)
QUICK = Sizes(events=1_000, entries=100, ics_events=200)

# Every figure of the table, in its order: the test checks that each is printed.
FIGURES = (
    "whole `ask` turn",
    "`--help` start-up",
    "`calendar show` start-up",
    "`lint` start-up",
    "`conversations list` start-up",
    loop_rows.ITERATION_FIGURE,
    http_iteration.FIGURE,
    "`find_free_slots` for one week",
    "`create_event`'s conflict check",
    "resume of a",
    "`calendar import` of",
    store_rows.FIGURE,
    workers.FIGURE,  # issue 36: on Temporal
    "an empty sync of a connected CalDAV calendar",  # issue 37
    "the first sync of",
)


def guarded(name: str, make: Callable[[], list[Row]]) -> list[Row]:
    """A row that fails says so in the table (the code under it may be changing) instead of ending the suite."""
    try:
        return make()
    except Exception as exc:
        traceback.print_exc(file=sys.stderr)
        return [Row(name, f"FAILED: {type(exc).__name__}: {str(exc)[:160]}".replace("\n", " "))]


def compile_package(say: Callable[[str], None]) -> None:
    """Bytecode for the installed package, as `pip install` writes it: the timed processes run with
    PYTHONDONTWRITEBYTECODE (they write nothing), and an editable install has no .pyc of its own, so
    without this every run compiled each module it imported, which no installed copy does (nor `llm`)."""
    code = "import compileall, os, scheduler_agent as p; compileall.compile_dir(os.path.dirname(p.__file__), quiet=1)"
    env = {k: v for k, v in bench_env().items() if k != "PYTHONDONTWRITEBYTECODE"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=NEUTRAL_CWD)
    if done.returncode != 0:  # a read-only install: the rows then also pay the compiling, and say so here
        say(f"could not compile the package to bytecode ({done.stderr.strip()[-200:]}): start-up rows include it")


def suite(folder: Path, sizes: Sizes, runs: int, say: Callable[[str], None], only: tuple[str, ...] = ()) -> list[Row]:
    label = Sizes.label
    compile_package(say)
    say("building inputs ...")
    demo = inputs.demo_db(folder)
    started = time.perf_counter()
    large = inputs.large_calendar(folder, demo, sizes.events)
    say(f"  {label(sizes.events)}-event calendar in {time.perf_counter() - started:.1f} s")
    ics = inputs.ics_file(folder, sizes.ics_events)
    small_done = process_rows.build_conversation(folder, demo, 100 if sizes.entries > 100 else 10, open_end=False)
    middle = [("1,000", process_rows.build_conversation(folder, demo, 1_000, open_end=False))] if sizes == FULL else []
    large_done = process_rows.build_conversation(folder, demo, sizes.entries, open_end=False)
    one_open = process_rows.build_conversation(folder, demo, 1, open_end=True)
    large_open = process_rows.build_conversation(folder, demo, sizes.entries, open_end=True)
    small_label = "100" if sizes.entries > 100 else "10"
    rows: list[Row] = []
    plan: list[tuple[str, Callable[[], list[Row]]]] = [
        ("whole `ask` turn", lambda: process_rows.ask_turn(folder, demo, runs)),
        ("start-up", lambda: process_rows.startup(folder, demo, small_done, runs)),
        (
            loop_rows.ITERATION_FIGURE,
            lambda: loop_rows.per_iteration(
                folder, small_done, large_done, (small_label, label(sizes.entries)), runs, 3 if runs == 1 else 10
            ),
        ),
        (
            http_iteration.FIGURE,
            lambda: http_iteration.rows([(small_label, small_done), *middle, (label(sizes.entries), large_done)], runs),
        ),
        (
            "`find_free_slots` for one week",
            lambda: [loop_rows.free_slots(demo, large, runs, label(sizes.events))],
        ),
        (
            "`create_event`'s conflict check",
            lambda: [loop_rows.conflict_check(folder, demo, large, runs, label(sizes.events))],
        ),
        ("resume of a", lambda: process_rows.resume(folder, one_open, large_open, runs, label(sizes.entries))),
        (
            "`calendar import` of",
            lambda: process_rows.calendar_import(folder, demo, ics, runs, label(sizes.ics_events)),
        ),
        (store_rows.FIGURE, lambda: store_rows.per_iteration_overhead(folder, runs, 5 if runs == 1 else 50)),
        (workers.FIGURE, lambda: workers_rows(sizes == QUICK)),  # issues 16 and 36
        (  # issue 37: the CalDAV replica
            caldav_sync.FIGURE,
            lambda: caldav_sync.rows(folder / "caldav", runs, 10_000 if sizes == FULL else 200),
        ),
    ]
    for name, make in plan:
        if only and not any(word in name for word in only):
            continue
        started = time.perf_counter()
        rows += guarded(name, make)
        say(f"  measured {name} in {time.perf_counter() - started:.1f} s")
    return rows


def workers_rows(quick: bool) -> list[Row]:
    """benchmarks/workers.py's rows, measured in a helper process against the installed package (this
    process runs from the repository, whose source tree has no `scheduler_agent.prompts`)."""
    command = [*module_command("workers"), "--suite-rows", *(["--quick"] if quick else [])]
    done = subprocess.run(command, capture_output=True, text=True, env=bench_env(), cwd=NEUTRAL_CWD, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"benchmarks.workers exited {done.returncode}: {done.stderr[-600:]}")
    sys.stderr.write(done.stderr)
    return [Row(**row) for row in json.loads(done.stdout.strip().splitlines()[-1])]


def free_slots_script(quick: bool, say: Callable[[str], None]) -> None:
    """The iCalendar issue's benchmarks/free_slots.py, when it is there: run as it is, its own output shown."""
    script = Path(__file__).with_name("free_slots.py")
    if not script.exists():
        say("benchmarks/free_slots.py: not in this checkout yet (another issue adds it); skipped")
        return
    if quick:
        say("benchmarks/free_slots.py: skipped in --quick (run `python -m benchmarks` for it)")
        return
    say("\nbenchmarks/free_slots.py:")
    done = subprocess.run([sys.executable, str(script)], capture_output=True, text=True, env=bench_env(), check=False)
    print(done.stdout.rstrip())
    if done.returncode != 0:
        say(f"  it exited {done.returncode}: {done.stderr[-400:]}")


def head_commit() -> str:
    """The commit the measured code is at (the table says it: it may be older than the docs beside it)."""
    root = Path(__file__).resolve().parent.parent
    done = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=root, capture_output=True)
    if dirty.stdout.strip():
        print("note: the tree has uncommitted changes; the table names HEAD", file=sys.stderr)
    return done.stdout.strip() if done.returncode == 0 else "unknown"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks", description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="1 run, small inputs: check that every row runs")
    parser.add_argument("--runs", type=int, default=5, help="interleaved runs per row (default 5; --quick: 1)")
    parser.add_argument(
        "--only",
        action="append",
        default=[],
        metavar="WORDS",
        help="measure only the rows whose figure contains WORDS ('resume', 'start-up', 'workers'; repeatable)",
    )
    args = parser.parse_args(argv)
    unknown = [word for word in args.only if not any(word in figure for figure in FIGURES)]
    if unknown:
        parser.error(f"--only {unknown[0]!r} names no row; the rows: {', '.join(FIGURES)}")
    writes_docs = not args.quick and not args.only  # the whole suite at full size: the figures the docs show
    if writes_docs and executable("llm") is None:
        parser.error(
            "the whole suite writes the docs' table, and its start-up rows need `llm --help` as their baseline: "
            "pip install -e '.[bench]' first (--quick and --only run without it, and write nothing)"
        )
    runs, sizes = (1, QUICK) if args.quick else (max(1, args.runs), FULL)

    def say(line: str) -> None:
        print(line, file=sys.stderr, flush=True)

    load_before, before = os.getloadavg(), machine_speed()
    with tempfile.TemporaryDirectory(prefix="scheduler-agent-bench-") as tmp:
        rows = suite(Path(tmp), sizes, runs, say, tuple(args.only))
    after, load_after = machine_speed(), os.getloadavg()
    load = ", ".join(f"{value:.1f}" for value in load_after)
    print(
        f"scheduler-agent benchmarks, {datetime.date.today().isoformat()}: {runs} interleaved run(s) per row, "
        f"medians (lowest-highest run); python {platform.python_version()}, {os.cpu_count()} cores, "
        f"load average {load}{'; QUICK: small inputs, not the claim' if args.quick else ''}"
    )
    print(
        f"machine speed: a reference workload took {fmt_ms(before)} before the rows and {fmt_ms(after)} after "
        "(benchmarks/common.py, `machine_speed`: absolute times move with it)"
    )
    print()
    print_table(rows)
    if writes_docs:
        data = results.record(
            rows,
            date=datetime.date.today().isoformat(),
            commit=head_commit(),
            python=platform.python_version(),
            cores=os.cpu_count() or 1,
            load_before=load_before,
            load_after=load_after,
            speed_before=before,
            speed_after=after,
            runs=runs,
        )
        results.write(data)
        say(f"wrote {results.JSON_FILE} and {results.MARKDOWN_FILE.name}")
    free_slots_script(args.quick, say)
    return 0 if all(not row.ours.startswith("FAILED") for row in rows) else 1
