"""The documentation site builds, and what its pages (and the README) tell a person to type works.

- `mkdocs build --strict` builds the site from `docs/` (a broken link, a missing page or a warning fails it),
  into a temporary folder, never into the tree; the command-line reference is generated from the commands.
- Every ```` ```sh ```` block of the README and of each page in the site's nav runs, in order, in a fresh data
  folder (one per page: a new HOME, so a new `~/.local/share/scheduler-agent/`), and exits 0; a block that
  cannot run offline has `<!-- no-run: REASON -->` on the line right before its fence.
- The API page names every name of `scheduler_agent.__all__`.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
BLOCK = re.compile(r"(?m)^(?:<!-- no-run: (?P<reason>.*?) -->\n)?```sh\n(?P<body>.*?)^```$", re.S)
SNIPPET = re.compile(r'(?m)^--8<-- "(?P<path>[^"]+)"$')


def nav_pages() -> list[Path]:
    """The pages of the site, in the order of its nav."""
    config = yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))
    found: list[Path] = []

    def walk(node: object) -> None:
        if isinstance(node, str):
            found.append(DOCS / node)
        elif isinstance(node, list):
            for item in node:
                walk(item)
        elif isinstance(node, dict):
            for value in node.values():
                walk(value)

    walk(config["nav"])
    return found


def page_text(path: Path) -> str:
    """A page as the site shows it: each `--8<-- "FILE"` include replaced by the file (from docs/, else the top)."""

    def include(match: re.Match[str]) -> str:
        name = match["path"]
        source = DOCS / name if (DOCS / name).exists() else ROOT / name
        return source.read_text(encoding="utf-8")

    return SNIPPET.sub(include, path.read_text(encoding="utf-8"))


def blocks(path: Path) -> list[tuple[str | None, str]]:
    """(the no-run reason or None, the block's text) of each sh block, in order."""
    return [(match["reason"], match["body"]) for match in BLOCK.finditer(page_text(path))]


PAGES = [ROOT / "README.md", *nav_pages()]


def test_the_nav_names_every_page_and_each_exists() -> None:
    pages = nav_pages()
    assert all(page.exists() for page in pages), [str(p) for p in pages if not p.exists()]
    included = {DOCS / "speed" / "results.md", DOCS / "speed" / "workers.md"}  # tables the pages include
    on_disk = {p for p in DOCS.rglob("*.md") if p not in included}
    assert on_disk == set(pages)


def test_the_sh_block_pattern_sees_markers_and_bodies() -> None:
    text = "x\n<!-- no-run: needs a key -->\n```sh\nask hi\n```\n\n```sh\ndemo\nlint x\n```\n```text\nno\n```\n"
    found = [(m["reason"], m["body"]) for m in BLOCK.finditer(text)]
    assert found == [("needs a key", "ask hi\n"), (None, "demo\nlint x\n")]


def test_every_no_run_marker_gives_a_reason() -> None:
    for page in PAGES:
        for reason, body in blocks(page):
            assert reason is None or reason.strip(), f"{page.name}: a no-run marker without a reason before {body!r}"


def fresh_env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ANTHROPIC_", "SCHEDULER_AGENT_", "XDG_"))}
    env.update(
        HOME=str(home),
        ANTHROPIC_CONFIG_DIR=str(home / ".config" / "anthropic"),
        NO_COLOR="1",
        PATH=f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}",
    )
    return env


RUNNABLE = [page for page in PAGES if any(reason is None for reason, _ in blocks(page))]


def test_the_pages_have_blocks_that_run() -> None:
    names = {page.relative_to(ROOT).as_posix() for page in RUNNABLE}
    assert {"docs/calendar.md", "docs/message-list.md", "docs/lessons.md"} <= names  # the examples a reader pastes


@pytest.mark.timeout(600)
@pytest.mark.parametrize("page", RUNNABLE, ids=[str(p.relative_to(ROOT)) for p in RUNNABLE])
def test_every_sh_block_runs_in_a_fresh_data_folder(page: Path, tmp_path: Path) -> None:
    runnable = [body for reason, body in blocks(page) if reason is None]
    home, work = tmp_path / "reader", tmp_path / "work"  # a HOME of its own
    home.mkdir()
    work.mkdir()
    (work / "cassettes").symlink_to(
        ROOT / "cassettes"
    )  # the blocks name the repository's cassettes/ as a reader has it
    env = fresh_env(home)
    for body in runnable:
        done = subprocess.run(
            ["bash", "-e", "-o", "pipefail", "-c", body], cwd=work, env=env, capture_output=True, text=True, timeout=300
        )
        assert done.returncode == 0, f"{page.name}: this block exited {done.returncode}:\n{body}\n{done.stderr[-1500:]}"


def test_the_readme_links_to_files_that_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    links = re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text)
    local = [link for link in links if not link.startswith(("http://", "https://"))]
    assert local, "the README links into the docs"
    assert [link for link in local if not (ROOT / link).exists()] == []


def test_no_code_sends_a_reader_to_a_readme_section() -> None:
    """The README is a short front door: what the code's comments cite ("README: Speed", "README, 'Cassettes'")
    now lives on the site, and a comment names the page (docs/speed/index.md, docs/lessons.md, ...)."""
    cited = re.compile(r"README(?:'s)?[,:]? ['\"]?[A-Z]")
    found = [
        f"{path.relative_to(ROOT)}:{number}"
        for folder in ("scheduler_agent", "benchmarks", "cassettes")
        for path in sorted((ROOT / folder).rglob("*"))
        if path.suffix in (".py", ".yaml")
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if cited.search(line)
    ]
    assert found == []


def test_the_api_page_names_every_public_name() -> None:
    import scheduler_agent

    text = (DOCS / "api.md").read_text(encoding="utf-8")
    named = set(re.findall(r"(?m)^::: ([\w.]+)$", text))
    wanted = {f"{module}.{name}" for name, module in scheduler_agent._EXPORTS.items()}
    assert named == wanted
    assert set(scheduler_agent.__all__) - {"__version__"} == set(scheduler_agent._EXPORTS)


@pytest.mark.timeout(300)
def test_the_site_builds_strict_with_the_cli_reference(tmp_path: Path) -> None:
    from scheduler_agent.cli.app import COMMANDS

    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(ROOT / "mkdocs.yml"), "-d", str(site)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "NO_MKDOCS_2_WARNING": "1"},
        timeout=280,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert not (ROOT / "site").exists()  # built where it was told, not into the tree
    reference = (site / "cli" / "index.html").read_text(encoding="utf-8")
    for name in COMMANDS:
        assert f'id="scheduler-agent-{name}"' in reference, name  # generated from the commands: none left out
    assert "--max-iterations" in reference  # with their options
    speed = (site / "speed" / "index.html").read_text(encoding="utf-8")
    assert "Written by python -m benchmarks on" in speed  # the table is included, not copied
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert "run_turn" in api


FIRST_LINE = re.compile(
    r"Written by python -m benchmarks on (?P<date>\d{4}-\d{2}-\d{2}) at commit (?P<commit>[0-9a-f]{7,40}) "
    r"\(Python \d+\.\d+\.\d+, \d+ cores, load average [\d./]+ before and [\d./]+ after\)"
)


def test_the_speed_table_is_what_the_program_renders_from_its_figures() -> None:
    """docs/speed/results.md is `render(results.json)`, says which commit it measured, and the page includes it."""
    import json

    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import results
    finally:
        sys.path.remove(str(ROOT))
    data = json.loads(results.JSON_FILE.read_text(encoding="utf-8"))
    written = results.MARKDOWN_FILE.read_text(encoding="utf-8")
    assert written == results.render(data)
    first = FIRST_LINE.fullmatch(written.splitlines()[0])
    assert first is not None, written.splitlines()[0]
    # a commit of this repository (the table may be older than HEAD: it names the code it measured)
    known = subprocess.run(["git", "cat-file", "-e", f"{first['commit']}^{{commit}}"], cwd=ROOT, capture_output=True)
    assert known.returncode == 0, f"results.md names {first['commit']}, which is not a commit of this repository"
    assert len(data["rows"]) >= 10
    page = (DOCS / "speed" / "index.md").read_text(encoding="utf-8")
    assert '--8<-- "speed/results.md"' in page  # included, never copied:
    assert "| figure | ours |" not in page


def test_the_render_puts_every_row_and_the_run_s_circumstances_in_the_table() -> None:
    sys.path.insert(0, str(ROOT))
    try:
        from benchmarks import results
        from benchmarks.common import Row
    finally:
        sys.path.remove(str(ROOT))
    rows = [Row("a figure", "CPU 1.00 ms; wall 2.00 ms", "-", "-", "<= 5 ms", True), Row("no goal", "3 ms")]
    data = results.record(
        rows,
        date="2026-12-04",
        commit="abcdef123456",
        python="3.11.7",
        cores=2,
        load_before=(1.0, 2.5, 3.25),
        load_after=(4.0, 4.0, 4.0),
        speed_before=0.0005,
        speed_after=0.0009,
        runs=5,
    )
    lines = results.render(data).splitlines()
    assert lines[0] == (
        "Written by python -m benchmarks on 2026-12-04 at commit abcdef123456 (Python 3.11.7, 2 cores, "
        "load average 1.00/2.50/3.25 before and 4.00/4.00/4.00 after)"
    )
    assert FIRST_LINE.fullmatch(lines[0])
    assert "| a figure | CPU 1.00 ms; wall 2.00 ms | - | - | <= 5 ms: met |" in lines
    assert "| no goal | 3 ms | - | - | - |" in lines


def test_the_workers_page_includes_the_table_benchmarks_workers_wrote() -> None:
    """docs/speed/workers.md is written by `python -m benchmarks.workers` (a full run), names a commit of this
    repository, holds the throughput, overhead and take-over rows, and the Many workers page includes it."""
    table = (DOCS / "speed" / "workers.md").read_text(encoding="utf-8")
    first = re.fullmatch(
        r"Written by python -m benchmarks\.workers on \d{4}-\d\d-\d\d at commit (?P<commit>\w+) .*",
        table.splitlines()[0],
    )
    assert first is not None, table.splitlines()[0]
    known = subprocess.run(["git", "cat-file", "-e", f"{first['commit']}^{{commit}}"], cwd=ROOT, capture_output=True)
    assert known.returncode == 0, f"workers.md names {first['commit']}, which is not a commit of this repository"
    for figure in ("4 worker(s) of concurrency 1", "above the direct loop", "its parts", "take-over"):
        assert figure in table, figure
    page = (DOCS / "workers.md").read_text(encoding="utf-8")
    assert '--8<-- "speed/workers.md"' in page
    assert "| figure | ours |" not in page
