"""The suite's figures as files: `docs/speed/results.json`, and `docs/speed/results.md` rendered from it.

    python -m benchmarks.results          # render results.md again from results.json (nothing is measured)

`python -m benchmarks` writes both at the end of a full run (`--quick` and `--only` runs write nothing:
they are not the claim). The speed page includes results.md as it is; no figure is typed into a page.
`tests/test_docs.py` renders results.md from results.json again and compares, and checks that the
commit it names is one of the repository's.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

from benchmarks.common import Row, fmt_ms, goal_text

FOLDER = Path(__file__).resolve().parent.parent / "docs" / "speed"
JSON_FILE, MARKDOWN_FILE = FOLDER / "results.json", FOLDER / "results.md"


def record(
    rows: Sequence[Row],
    *,
    date: str,
    commit: str,
    python: str,
    cores: int,
    load_before: Sequence[float],
    load_after: Sequence[float],
    speed_before: float,
    speed_after: float,
    runs: int,
) -> dict[str, Any]:
    """What results.json holds: the run's circumstances, then every row as the table prints it."""
    return {
        "date": date,
        "commit": commit,
        "python": python,
        "cores": cores,
        "load_average_before": [round(value, 2) for value in load_before],
        "load_average_after": [round(value, 2) for value in load_after],
        "reference_workload_seconds": [speed_before, speed_after],
        "runs": runs,
        "rows": [asdict(row) for row in rows],
    }


def render(data: dict[str, Any]) -> str:
    """results.md: the line that says where the figures come from, the machine's speed, and the table."""

    def load(values: Sequence[float]) -> str:
        return "/".join(f"{value:.2f}" for value in values)

    before, after = data["reference_workload_seconds"]
    lines = [
        f"Written by python -m benchmarks on {data['date']} at commit {data['commit']} (Python {data['python']}, "
        f"{data['cores']} cores, load average {load(data['load_average_before'])} before and "
        f"{load(data['load_average_after'])} after)",
        "",
        f"{data['runs']} interleaved run(s) per row; medians, with the lowest and highest run in brackets. The "
        f"reference workload took {fmt_ms(before)} before the rows and {fmt_ms(after)} after.",
        "",
        "| figure | ours | baseline | ratio | goal |",
        "|---|---|---|---|---|",
    ]
    for row in data["rows"]:
        goal = goal_text(row["goal"], row["met"])
        cells = (row["figure"], row["ours"], row["baseline"], row["ratio"], goal)
        lines.append("| " + " | ".join(cell.replace("|", "/") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def write(data: dict[str, Any], folder: Path = FOLDER) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / JSON_FILE.name).write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    (folder / MARKDOWN_FILE.name).write_text(render(data), encoding="utf-8")


def main() -> int:
    data = json.loads(JSON_FILE.read_text(encoding="utf-8"))
    MARKDOWN_FILE.write_text(render(data), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
