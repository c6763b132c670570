"""The benchmark suite runs from the repository and prints every row of issue 14's table; no time is asserted."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.timeout(600)  # the quick suite starts many processes (the workers' rows too): minutes on a busy machine
def test_quick_suite_prints_every_row_of_the_table() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.run import FIGURES
    finally:
        sys.path.remove(str(ROOT))
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--quick"], cwd=ROOT, capture_output=True, text=True, timeout=900
    )
    assert done.returncode == 0, done.stderr[-3000:]
    lines = done.stdout.splitlines()
    header = lines.index("| figure | ours | baseline | ratio | goal |")
    rows = [line for line in lines[header + 2 :] if line.startswith("| ")]
    for row in rows:
        assert len(row.strip("|").split(" | ")) == 5, row
        assert "FAILED" not in row, row
    for figure in FIGURES:
        assert any(row.startswith(f"| {figure}") for row in rows), (figure, done.stdout)
    # Each per-iteration figure appears at both sizes, with and without the trace, over every process and again
    # over those the machine ran at full speed (by the reference workload each of them timed)
    iteration_rows = [row for row in rows if "one iteration of the loop outside `send` and the tool" in row]
    assert len(iteration_rows) == 8
    full_speed = re.compile(r"at the machine's full speed \(\d+ of \d+ processes\)")
    assert sum(full_speed.search(row) is not None for row in iteration_rows) == 4
    # The iteration with `send` in it, through loopback HTTP, beside the SDK's tool runner: a row per size of list,
    # the largest with the goal
    http_rows = [row for row in rows if row.startswith("| one iteration through loopback HTTP")]
    assert len(http_rows) == 2
    assert all("vs the SDK's tool_runner" in row and "| CPU " in row for row in http_rows)
    assert "<= 0.1x (CPU) and <= 5 ms" in http_rows[-1]
    # whole processes are judged on CPU time, with wall time beside it
    ask = next(row for row in rows if row.startswith("| whole `ask` turn"))
    assert "| CPU " in ask and "; wall " in ask and "(CPU):" in ask
    assert "QUICK" in done.stdout  # a quick run says it is not the claim
    # and how fast the machine ran, before the rows and after: its absolute times move with that
    said = r"machine speed: a reference workload took ([\d.]+) ms before the rows and ([\d.]+) ms after"
    speed = re.search(said, done.stdout)
    assert speed is not None, done.stdout[:600]
    assert all(float(value) > 0 for value in speed.groups())


def test_only_names_a_row_or_says_which_there_are() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks", "--only", "no such row"], cwd=ROOT, capture_output=True, text=True
    )
    assert done.returncode == 2
    assert "--only 'no such row' names no row; the rows: whole `ask` turn, `--help` start-up" in done.stderr
    assert "Traceback" not in done.stderr


def test_the_whole_suite_refuses_to_start_without_a_baseline_it_needs(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The whole suite writes the docs' table: without `llm` its start-up rows would have no ratio, so it stops
    before measuring anything and says what to install."""
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import run
    finally:
        sys.path.remove(str(ROOT))
    monkeypatch.setattr(run, "executable", lambda name: None)
    monkeypatch.setattr(run, "machine_speed", lambda: pytest.fail("measured before refusing"))
    with pytest.raises(SystemExit) as stopped:
        run.main(["--runs", "3"])
    assert stopped.value.code == 2
    assert "its start-up rows need `llm --help` as their baseline: pip install -e '.[bench]'" in capsys.readouterr().err


def test_the_http_stub_answers_without_parsing_the_body() -> None:
    """The stub reads the request's bytes and answers from its plan: a body that is not JSON gets the same reply."""
    import http.client
    import json

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks.http_iteration import StubAPI, per_iteration
    finally:
        sys.path.remove(str(ROOT))
    with StubAPI() as stub:
        stub.plan(2)
        host, port = stub.url.removeprefix("http://").split(":")
        connection = http.client.HTTPConnection(host, int(port))
        replies = []
        for body in (b"not json at all {", b"[]"):
            connection.request("POST", "/v1/messages", body=body, headers={"content-type": "application/json"})
            replies.append(json.loads(connection.getresponse().read()))
        connection.close()
    assert [reply["stop_reason"] for reply in replies] == ["tool_use", "end_turn"]
    calls = [block for block in replies[0]["content"] if block["type"] == "tool_use"]
    assert calls[0]["name"] == "find_free_slots"
    assert stub.requests == 2
    # one iteration is (six calls - one call) / 5 of each round, paired
    found = {"ours_6": [[0.6, 1.0], [0.7, 1.2]], "ours_1": [[0.1, 0.5], [0.2, 0.2]]}
    assert per_iteration(found, "ours", 0).values == pytest.approx((0.1, 0.1))
    assert per_iteration(found, "ours", 1).values == pytest.approx((0.1, 0.2))
