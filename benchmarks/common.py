"""What every row shares: samples and their spread, interleaved runs, timed processes, the table.

Only public entry points of the package are used (the CLI in a subprocess, `storage.db.connect`,
`calendar.tools.CalendarTools(...).run`), so the suite keeps working while the code behind them changes.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

DEMO_WEEK = "2026-08-31"  # the demo calendar's "next week", seen from the pinned clock below
TODAY = "2026-08-27"  # the demo's clock: Thu 2026-08-27 09:00, owner's time
PLACEHOLDER_KEY = "sk-ant-bench-placeholder-not-a-key"  # the loopback server ignores it; never a real key
REPOSITORY = str(Path(__file__).resolve().parent.parent)  # put last on a timed process's path: `benchmarks` is found


_ENTRIES = [{"role": "user", "content": [{"type": "text", "text": "x" * 50}]} for _ in range(200)]
_ENCODE = json.JSONEncoder(separators=(",", ":")).encode


def reference_workload() -> float:
    """Seconds a fixed pure-Python workload takes (JSON-encoding 200 small entries; the median of 30 rounds):
    how fast this machine runs Python at this moment, whatever code is being measured beside it."""
    times = []
    for _ in range(30):
        start = time.perf_counter()
        for entry in _ENTRIES:
            _ENCODE(entry)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def machine_speed() -> float:
    """`reference_workload` in a fresh interpreter: how fast this machine runs Python right now.

    The 2-core machine docs/speed/results.md comes from runs it in about 0.5 ms at full speed and in about
    0.9 ms when its host slows it down, for seconds to minutes at a time, whatever the load average says, and
    every absolute time moves with it; the suite prints it before and after its rows, so a reader can tell
    which the table's times were taken in. The median of three processes."""
    workload = "from benchmarks.common import reference_workload; print(reference_workload())"
    code = f"import sys; sys.path.append({REPOSITORY!r}); {workload}"
    runs = [
        subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=bench_env(), check=True)
        for _ in range(3)
    ]
    return statistics.median(float(done.stdout) for done in runs)


@dataclass(frozen=True)
class Sample:
    """Seconds, one value per run."""

    values: tuple[float, ...]

    @property
    def median(self) -> float:
        return statistics.median(self.values)

    def ms(self, signed: bool = False) -> str:
        """`12.3 ms (11.9-13.0)`: the median, then the lowest and highest run."""
        sign = "+" if signed and self.median >= 0 else ""  # a negative median has its own sign
        head = f"{sign}{fmt_ms(self.median)}"
        if len(self.values) < 2:
            return head
        return f"{head} ({fmt_ms(min(self.values))}-{fmt_ms(max(self.values))})"


def fmt_ms(seconds: float) -> str:
    ms = seconds * 1000
    if abs(ms) >= 100:
        return f"{ms:,.0f} ms"
    if abs(ms) >= 10:
        return f"{ms:.1f} ms"
    return f"{ms:.2f} ms"


def ratio_text(ours: Sample, baseline: Sample) -> str:
    """The ratio of the medians, with the lowest and highest ratio of the paired runs."""
    head = f"{ours.median / baseline.median:.2f}x"
    if len(ours.values) < 2:
        return head
    paired = [a / b for a, b in zip(ours.values, baseline.values, strict=True)]
    return f"{head} ({min(paired):.2f}-{max(paired):.2f})"


@dataclass(frozen=True)
class Row:
    figure: str
    ours: str
    baseline: str = "-"
    ratio: str = "-"
    goal: str = "-"
    met: bool | None = None  # None: not measured (the row says why)


def interleaved(runs: int, *measures: Callable[[], float]) -> list[Sample]:
    """Run each measure once per round, alternating their order, so that load on the machine hits all alike."""
    values: list[list[float]] = [[] for _ in measures]
    for round_number in range(runs):
        order = list(range(len(measures)))
        if round_number % 2:
            order.reverse()
        for index in order:
            values[index].append(measures[index]())
    return [Sample(tuple(v)) for v in values]


def executable(name: str) -> Path | None:
    """A console script installed next to this interpreter (the venv's bin/), or on PATH."""
    beside = Path(sys.executable).with_name(name)
    if beside.exists():
        return beside
    found = shutil.which(name)
    return Path(found) if found else None


def cli() -> list[str]:
    """The `scheduler-agent` command, as a user runs it."""
    script = executable("scheduler-agent")
    if script is not None:
        return [str(script)]
    return [sys.executable, "-c", "from scheduler_agent.cli import main; main()"]


def module_command(name: str) -> list[str]:
    """`python -m benchmarks.NAME` against the INSTALLED package: the repository is put last on the path
    (so `benchmarks` is found) and the process runs from a neutral folder, so the source tree (which has
    no `scheduler_agent.prompts`: pyproject maps it from `prompts/`) never shadows the installed one."""
    run = f"runpy.run_module('benchmarks.{name}', run_name='__main__', alter_sys=True)"  # the SDK reads __main__
    code = f"import runpy, sys; sys.path.append({REPOSITORY!r}); {run}"
    return [sys.executable, "-c", code]


NEUTRAL_CWD = tempfile.gettempdir()


def bench_env(**extra: str) -> dict[str, str]:
    """The environment for a timed process: no real key, no colour, the strict checks off."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_"))}
    env.update(NO_COLOR="1", PYTHONDONTWRITEBYTECODE="1", **extra)
    return env


def timed_run(
    args: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, ok: Sequence[int] = (0,)
) -> float:
    """Wall time of one process, start to exit; raises with its stderr when its exit code is unexpected."""
    start = time.perf_counter()
    done = subprocess.run(list(args), capture_output=True, env=env or bench_env(), cwd=cwd, stdin=subprocess.DEVNULL)
    elapsed = time.perf_counter() - start
    if done.returncode not in ok:
        tail = (done.stderr or done.stdout).decode(errors="replace")[-600:]
        raise RuntimeError(f"{' '.join(map(str, args[:4]))} ... exited {done.returncode}: {tail}")
    return elapsed


@dataclass(frozen=True)
class Timed:
    """One process: its wall time, start to exit, and its CPU time (user + system, its own and its children's)."""

    wall: float
    cpu: float


def timed_process(
    args: Sequence[str], *, env: dict[str, str] | None = None, cwd: Path | None = None, ok: Sequence[int] = (0,)
) -> Timed:
    """`timed_run`, with the process's CPU time beside its wall time. On a machine shared with other jobs the wall
    time of a process includes the time it waited for a core; its CPU time does not, so the rows that compare whole
    processes are judged on CPU time, with wall time beside it. (The suite waits for one child at a time, so the
    growth of RUSAGE_CHILDREN over the run is that child's.)"""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = timed_run(args, env=env, cwd=cwd, ok=ok)
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return Timed(wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime))


def interleaved_timed(runs: int, *measures: Callable[[], Timed]) -> list[tuple[Sample, Sample]]:
    """`interleaved` for measures of processes: (its CPU times, its wall times) for each measure, run alike."""
    kept: list[list[Timed]] = [[] for _ in measures]

    def keeping(index: int) -> Callable[[], float]:
        def one() -> float:
            found = measures[index]()
            kept[index].append(found)
            return found.cpu

        return one

    interleaved(runs, *(keeping(index) for index in range(len(measures))))
    return [(Sample(tuple(t.cpu for t in series)), Sample(tuple(t.wall for t in series))) for series in kept]


def copy_db(source: Path, target: Path) -> Path:
    """A consistent copy of a SQLite file (the backup API: WAL contents included)."""
    target.unlink(missing_ok=True)
    with sqlite3.connect(source) as src, sqlite3.connect(target) as dst:
        src.backup(dst)
    src.close()
    dst.close()
    return target


def print_table(rows: Sequence[Row], out: Callable[[str], None] = print) -> None:
    headers = ("figure", "ours", "baseline", "ratio", "goal")
    cells = [(r.figure, r.ours, r.baseline, r.ratio, goal_text(r.goal, r.met)) for r in rows]
    out("| " + " | ".join(headers) + " |")
    out("|" + "|".join("---" for _ in headers) + "|")
    for line in cells:
        out("| " + " | ".join(cell.replace("|", "/") for cell in line) + " |")


def goal_text(goal: str, met: bool | None) -> str:
    """The goal cell: the goal and whether it was met; a row with no goal of its own says "-"."""
    return "-" if goal == "-" else f"{goal}: {met_text(met)}"


def met_text(met: bool | None) -> str:
    return "not measured" if met is None else "met" if met else "not yet"
