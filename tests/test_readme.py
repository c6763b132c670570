"""The README shows the loop as it is: every line of its snippet stands in loop.py, in order.

And every output sample in the README and on the documentation site's pages (docs/) is what the command prints.

A sample is a fenced block right after `<!-- sample: scheduler-agent ARGS -->`. Its lines must appear
in the command's output (stdout and stderr, as a terminal shows them) in order; a line ending in `...`
stands for any line that starts with what comes before it, and a line that is only `...` for any
number of lines. Only offline commands are samples (demo, --help): no key, no network.
"""

from __future__ import annotations

import inspect
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.agent import loop
from scheduler_agent.cli import app

README = Path(__file__).resolve().parent.parent / "README.md"
PAGES = [README, *sorted((README.parent / "docs").rglob("*.md"))]


def test_the_readme_loop_is_the_loop() -> None:
    snippet = re.search(r"```python\n((?:[^\n]*\n)?while True:.*?)```", README.read_text(), re.S)
    assert snippet, "README.md has no ```python block with `while True:` on its first or second line"
    source = [line.strip() for line in inspect.getsource(loop.run_turn).splitlines()]
    position = 0
    for line in (line.strip() for line in snippet[1].splitlines()):
        if not line or line.startswith("..."):
            continue
        assert line in source[position:], f"README's loop line not in run_turn (in order): {line}"
        position = source.index(line, position) + 1


SAMPLE = re.compile(r"<!-- sample: scheduler-agent (.*?) -->\n```[a-z]*\n(.*?)```", re.S)


def samples() -> list[tuple[str, str, str]]:
    """(the page, the command's arguments, the sample) of every marked sample, the README's first."""
    return [
        (page.relative_to(README.parent).as_posix(), args, sample)
        for page in PAGES
        for args, sample in SAMPLE.findall(page.read_text(encoding="utf-8"))
    ]


def matches(sample: str, output: str) -> str | None:
    """None when every line of `sample` is found in `output` in order; else the first line that is not."""
    lines = output.splitlines()
    position = 0
    for wanted in sample.splitlines():
        if wanted.strip() == "...":
            continue
        prefix = wanted[:-3] if wanted.endswith("...") else None
        for index in range(position, len(lines)):
            line = lines[index]
            if line.startswith(prefix) if prefix is not None else line == wanted:
                position = index + 1
                break
        else:
            return wanted
    return None


def test_the_readme_and_the_docs_have_samples() -> None:
    pages = [page for page, _, _ in samples()]
    assert pages.count("README.md") >= 1
    assert len(set(pages)) >= 3  # the README and docs pages (the lessons, the message list)


@pytest.mark.parametrize(("page", "args", "sample"), samples(), ids=[f"{page}: {args}" for page, args, _ in samples()])
def test_a_sample_is_what_the_command_prints(page: str, args: str, sample: str) -> None:
    result = CliRunner().invoke(app, shlex.split(args))
    missing = matches(sample, result.output)
    assert missing is None, f"{page} sample of `scheduler-agent {args}`: not printed (in order): {missing!r}"


def test_the_matcher_refuses_a_line_that_is_not_printed() -> None:
    assert matches("a\n...\nc...", "a\nb\ncd\n") is None
    assert matches("a\nx", "a\nb\n") == "x"
    assert matches("b\na", "a\nb\n") == "a"  # order counts
