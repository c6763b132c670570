"""Start-up cost of each command path: wall time and peak memory, median of several runs.

    python benchmarks/startup.py [--runs 5]

`--help`, `calendar` and `lint` must start without importing the SDK (about 2.4 s and 60 MB
on a 2-core machine); `demo` and `ask` pay for it. This prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

CODE = "import sys\nfrom scheduler_agent.cli import app\ntry:\n    app(sys.argv[1:])\nexcept SystemExit:\n    pass\n"


def measure(args: list[str], runs: int) -> tuple[float, float]:
    times, peaks = [], []
    for _ in range(runs):
        start = time.perf_counter()
        before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        done = subprocess.run([sys.executable, "-c", CODE, *args], capture_output=True, cwd=tempfile.gettempdir())
        if done.returncode != 0:
            raise SystemExit(f"{args} failed ({done.returncode}): {done.stderr.decode()[-500:]}")
        times.append(time.perf_counter() - start)
        peaks.append(max(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, before) / 1024)
    return statistics.median(times), max(peaks)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    runs = parser.parse_args().runs
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "bench.db")
        subprocess.run(
            [sys.executable, "-c", CODE, "calendar", "seed-demo", "--db", db], check=True, cwd=tmp, capture_output=True
        )
        paths = {
            "--help": ["--help"],
            "calendar people": ["calendar", "people", "--db", db],
            "calendar show": ["calendar", "show", "--person", "priya", "--week", "2026-08-31", "--db", db],
            "calendar show --json": ["calendar", "show", "--json", "--from", "2026-08-31T00:00", "--db", db],
            "conversations list --json": ["conversations", "list", "--json", "--db", db],
            "stats --json": ["stats", "--json", "--db", db],
            "db path": ["db", "path"],
            "demo (replays 3 requests)": ["demo"],
        }
        print(f"{'command':32} {'median s':>9} {'peak MB':>8}   ({runs} runs, python {sys.version.split()[0]})")
        for name, args in paths.items():
            seconds, peak = measure(args, runs)
            print(f"{name:32} {seconds:9.2f} {peak:8.0f}")
        # what a shown cost adds (-u, /tokens, conversations show, ask --json): the price list's import
        seconds, peak = measure_code("import genai_prices", runs)
        print(f"{'import genai_prices (a cost)':32} {seconds:9.2f} {peak:8.0f}")


def measure_code(code: str, runs: int) -> tuple[float, float]:
    times, peaks = [], []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, cwd=tempfile.gettempdir())
        times.append(time.perf_counter() - start)
        peaks.append(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)
    return statistics.median(times), max(peaks)


if __name__ == "__main__":
    main()
