"""The README shows the loop as it is: every line of its snippet stands in loop.py, in order."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

from scheduler_agent.agent import loop

README = Path(__file__).resolve().parent.parent / "README.md"


def test_the_readme_loop_is_the_loop() -> None:
    snippet = re.search(r"```python\n(while True:.*?)```", README.read_text(), re.S)
    assert snippet, "README.md has no ```python block starting with `while True:`"
    source = [line.strip() for line in inspect.getsource(loop.run_turn).splitlines()]
    position = 0
    for line in (line.strip() for line in snippet[1].splitlines()):
        if not line or line.startswith("..."):
            continue
        assert line in source[position:], f"README's loop line not in run_turn (in order): {line}"
        position = source.index(line, position) + 1
