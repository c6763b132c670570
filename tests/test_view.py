"""The trace viewer's page, read as data: which entries each request sent, what it cost, what is escaped.

The browser tests (test_view_browser.py) check what a person sees; these check the page's content and
size, and the `view` command and its shortcuts on all three sources.
"""

from __future__ import annotations

import base64
import hashlib
import json
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest
from click.testing import CliRunner

from scheduler_agent.cli import app
from scheduler_agent.lessons.catalogue import lesson_path
from scheduler_agent.storage import conversations, db
from scheduler_agent.testing.scripted_server import Reply, text, tool_use
from scheduler_agent.view.figures import figures
from scheduler_agent.view.page import build_page
from scheduler_agent.view.prices import price_of
from scheduler_agent.view.sources import from_cassette, from_conversation, from_dump

runner = CliRunner()
PAYLOAD = "</script><script>alert(1)</script>"


def invoke(*args: str):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args))


def sent_text(trace, request) -> str:  # type: ignore[no-untyped-def]
    return json.dumps([trace.entries[i] for i in request.indices])


def test_forgotten_rule_request_three_sends_only_the_new_turn_and_the_rule_is_gone() -> None:
    trace = from_cassette(lesson_path("forgotten_rule"))
    assert [len(r.indices) for r in trace.requests] == [1, 3, 1, 3]
    assert [r.turn for r in trace.requests] == [1, 1, 2, 2]
    assert [r.iteration for r in trace.requests] == [1, 2, 1, 2]
    third = trace.requests[2]
    assert third.dropped() == [(0, 3)]  # turn 1 and its answer were trimmed away
    assert ["10am" in sent_text(trace, r) for r in trace.requests] == [True, True, False, False]
    kept = from_cassette(lesson_path("kept_rule"))
    assert ["10am" in sent_text(kept, r) for r in kept.requests] == [True, True, True, True]
    assert kept.requests[2].dropped() == [(1, 2)]  # the project's trim keeps turn 1 and drops the first round


def test_no_mornings_entries_are_embedded_once_and_requests_are_prefixes() -> None:
    trace = from_cassette(lesson_path("no_mornings"))
    assert [r.ranges() for r in trace.requests] == [[(0, 0)], [(0, 2)], [(0, 4)]]
    assert [r.new for r in trace.requests] == [[0], [1, 2], [3, 4]]
    assert [r.bytes for r in trace.requests] == [7386, 7852, 8260]  # as the README's demo trace says
    assert all(r.usage_estimated for r in trace.requests)  # the cassette's replies were scripted
    page = build_page(trace)
    assert len(re.findall(r'id="e\d+"', page)) == len(trace.entries) == 6
    result = trace.entries[2]["content"][0]["content"]
    assert page.count(result.splitlines()[0]) == 1  # the tool result, resent twice, is in the page once


def test_tokens_split_into_new_resent_and_cached_and_sum_to_the_usage() -> None:
    trace = from_cassette(lesson_path("no_mornings"))
    rows = [figures(r) for r in trace.requests]
    assert [row.total for row in rows] == [1846, 1963, 2065]  # the usage the replies reported
    assert all(row.new + row.resent + row.cached == row.total for row in rows)
    assert rows[0].new == 1846
    assert rows[1].resent > rows[1].new > 0  # request 2 mostly resends request 1
    assert sum(row.new for row in rows) < sum(row.total for row in rows) / 2


def test_price_of_an_unknown_model_is_none_never_zero() -> None:
    usage = {"input_tokens": 1_000_000, "output_tokens": 0}
    assert price_of("no-such-model-1", usage) is None
    known = price_of("claude-sonnet-5-5", usage)
    assert known is not None
    assert known > 0
    cached = price_of("claude-sonnet-5-5", {"input_tokens": 0, "cache_read_input_tokens": 1_000_000})
    assert cached is not None
    assert 0 < cached < known  # cache reads bill below fresh input


class Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self.styles: list[str] = []
        self.urls: list[str] = []
        self.meta_csp: str | None = None
        self._in: str | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        if tag in ("script", "style"):
            self._in = tag
            if tag == "script":
                self.scripts.append((values, ""))
        for name in ("src", "href", "action", "data"):
            if values.get(name):
                self.urls.append(str(values[name]))
        if tag == "meta" and values.get("http-equiv") == "Content-Security-Policy":
            self.meta_csp = values.get("content")

    def handle_endtag(self, tag: str) -> None:
        self._in = None

    def handle_data(self, data: str) -> None:
        if self._in == "script":
            attrs, body = self.scripts[-1]
            self.scripts[-1] = (attrs, body + data)
        elif self._in == "style":
            self.styles.append(data)


def sha256(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


def test_the_page_is_self_contained_and_its_policy_allows_only_its_own_script_and_style() -> None:
    page = build_page(from_cassette(lesson_path("forgotten_rule")))
    tags = Tags()
    tags.feed(page)
    assert len(tags.scripts) == 1
    assert tags.scripts[0][0] == {}  # one inline script, no src
    assert tags.meta_csp is not None
    directives = dict(part.strip().split(" ", 1) for part in tags.meta_csp.split(";"))
    assert directives["default-src"] == "'none'"
    assert directives["script-src"] == f"'{sha256(tags.scripts[0][1])}'"
    assert directives["style-src"] == f"'{sha256(tags.styles[0])}'"
    assert all(url.startswith("#") for url in tags.urls), [u for u in tags.urls if not u.startswith("#")]


@pytest.fixture
def booked_with_payload(demo_db: Path, api, tmp_path: Path):  # type: ignore[no-untyped-def]
    """A real `ask` against the loopback server: a call whose title, and so its tool result, holds a script."""
    call = tool_use(
        "toolu_x1", "create_event", {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30, "title": PAYLOAD}
    )
    api([Reply([call], "tool_use"), Reply([text(f"Booked {PAYLOAD}.")])])
    dump = tmp_path / "dump.jsonl"
    result = invoke(
        "ask", "Book Priya Monday 2pm", "--yes", "--db", str(demo_db), "--today", "2026-08-27",
        "--dump-array-file", str(dump),
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    return demo_db, dump


def test_a_script_in_a_tool_result_and_an_event_title_is_escaped(booked_with_payload) -> None:  # type: ignore[no-untyped-def]
    database, dump = booked_with_payload
    conn = db.connect(database)
    _, messages = conversations.load(conn, 1)
    assert PAYLOAD in messages[2]["content"][0]["content"]  # the booking result names the event's title
    for trace in (from_conversation(conn, 1), from_dump(dump)):
        page = build_page(trace)
        assert "<script>alert" not in page
        assert page.count("<script") == 1
        assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page


def test_markup_anywhere_in_a_trace_is_text_on_the_page_title_notes_prompt_and_tool_names() -> None:
    trace = from_cassette(lesson_path("forgotten_rule"))
    trace.title, trace.notes = "<b>title</b>", ["<i>note</i>"]
    trace.systems = ["<img src=x onerror=alert(1)>"]
    trace.tools = [[{"name": "<svg onload=alert(2)>"}]]
    page = build_page(trace)
    for raw in ("<b>title", "<i>note", "<img src=x", "<svg onload"):
        assert raw not in page
    assert "&lt;b&gt;title&lt;/b&gt;" in page
    assert "&lt;svg onload=alert(2)&gt;" in page


def test_the_page_templates_ship_with_the_package() -> None:
    from importlib import resources

    folder = resources.files("scheduler_agent.view") / "templates"
    assert sorted(p.name for p in folder.iterdir()) == ["chart.svg", "entries.html", "page.html"]


def test_a_page_written_over_a_file_you_have_keeps_that_files_mode(booked_with_payload, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    database, _ = booked_with_payload
    out = tmp_path / "shared.html"
    out.write_text("old")
    out.chmod(0o640)
    result = invoke("view", "1", "--db", str(database), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert out.read_text().startswith("<!DOCTYPE html>")
    assert out.stat().st_mode & 0o777 == 0o640  # it was chmod 0600 before: as root, `-o /dev/null` changed it


def test_view_a_stored_conversation_with_real_usage_and_its_cost(booked_with_payload, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    database, _ = booked_with_payload
    out = tmp_path / "c1.html"
    result = invoke("view", "1", "--db", str(database), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == str(out)
    assert out.stat().st_mode & 0o777 == 0o600
    trace = from_conversation(db.connect(database), 1)
    assert [len(r.indices) for r in trace.requests] == [1, 3]
    assert not any(r.usage_estimated for r in trace.requests)  # the usage the server reported, as stored
    page = out.read_text()
    assert f"{figures(trace.requests[1]).total:,} input tokens" in page
    assert "no price" not in page  # claude-sonnet-5-5 has a price
    shortcut = tmp_path / "show.html"
    assert invoke("conversations", "show", "1", "--db", str(database), "--html", str(shortcut)).exit_code == 0
    assert shortcut.read_text() == page


def test_an_unknown_model_shows_no_price_never_zero(demo_db: Path, api, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    api([Reply([text("Hello.")])])
    ask = invoke("ask", "Hi", "--db", str(demo_db), "--today", "2026-08-27", "-m", "claude-unknown-9")
    assert ask.exit_code == 0, ask.stderr
    out = tmp_path / "c.html"
    assert invoke("view", "1", "--db", str(demo_db), "-o", str(out)).exit_code == 0
    page = out.read_text()
    assert "no price" in page
    assert "$0.0000" not in page


def test_view_a_dump_marks_every_token_count_as_an_estimate(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    assert invoke("demo", "--dump-array-file", str(dump)).exit_code == 0
    out = tmp_path / "d.html"
    result = invoke("view", str(dump), "-o", str(out))
    assert result.exit_code == 0, result.stderr
    trace = from_dump(dump)
    assert [len(r.indices) for r in trace.requests] == [1, 3, 5]
    assert all(r.usage_estimated for r in trace.requests)
    assert [figures(r).total for r in trace.requests] == [1846, 1963, 2065]  # estimated the way the server does
    assert "≈1,846" in out.read_text()


def test_replay_and_demo_write_the_page_with_html(tmp_path: Path) -> None:
    demo_page, replay_page = tmp_path / "demo.html", tmp_path / "replay.html"
    assert invoke("demo", "kept_rule", "--html", str(demo_page)).exit_code == 0
    replayed = invoke("replay", str(lesson_path("kept_rule")), "--html", str(replay_page))
    assert replayed.exit_code == 0, replayed.stderr
    assert demo_page.read_text() == replay_page.read_text() == build_page(from_cassette(lesson_path("kept_rule")))


def test_grammar_findings_and_a_changed_system_prompt_are_shown_where_they_are(tmp_path: Path) -> None:
    dump = tmp_path / "d.jsonl"
    assert invoke("demo", "--dump-array-file", str(dump)).exit_code == 0
    records = [json.loads(line) for line in dump.read_text().splitlines()]
    records[2]["request"]["system"] += "\nA new day."
    records[2]["messages"][2]["content"][0]["is_error"] = True
    records[2]["messages"][2]["content"][0]["content"] = []  # an is_error result with no text
    broken = tmp_path / "broken.jsonl"
    broken.write_text("".join(json.dumps(r) + "\n" for r in records))
    trace = from_dump(broken)
    assert [r.system_version for r in trace.requests] == [0, 0, 1]
    finding = trace.findings[0]
    assert finding.request == 2
    assert finding.block == 0
    assert "is_error" in finding.cause
    page = build_page(trace)
    entry = page[page.index(f'id="e{finding.entry}"') :]
    entry = entry[: entry.index('<div class="entry ')]  # up to the next entry
    assert entry.index('class="block tool_result error"') < entry.index('class="finding error"')  # in its block
    assert "changed at request 3" in page
    assert 'class="is-error"' in page


def test_bad_sources_get_one_line(tmp_path: Path, demo_db: Path) -> None:
    (tmp_path / "bad.jsonl").write_text("not json\n")
    (tmp_path / "edited.yaml").write_text("interactions:\n- request: 5\n  response: 7\n")
    for args in (
        ["view", str(tmp_path / "edited.yaml")],
        ["view", "nonsense"],
        ["view", "7", "--db", str(tmp_path / "missing.db")],
        ["view", "7", "--db", str(demo_db)],
        ["view", str(tmp_path / "bad.jsonl")],
    ):
        result = invoke(*args)
        assert result.exit_code == 1, (args, result.stdout)
        lines = [line for line in result.stderr.splitlines() if line]
        assert len(lines) == 1 and lines[0].startswith("Error: "), (args, result.stderr)
    assert not (tmp_path / "missing.db").exists()


def stored(path: Path, entries: int) -> Path:
    """A stored conversation of `entries` entries (one person's turn, then rounds of call and result), with a
    reply row per request as the session writes them."""
    conn = db.connect(path)
    cid = conversations.create(
        conn, conversations.Context("claude-sonnet-5-5", 4096, "System.", []), started_on="2026-08-27", clock_pin=None
    )
    messages = [{"role": "user", "content": [{"type": "text", "text": "Find me a slot, nothing before 10am."}]}]
    journal = conversations.Journal(conn, cid, [])
    journal.sync(messages)
    while len(messages) < entries:
        n = len(messages)
        call = {"type": "tool_use", "id": f"toolu_{n}", "name": "find_free_slots", "input": {"week": f"w{n}"}}
        usage = {"input_tokens": 10 * n, "output_tokens": 20, "cache_read_input_tokens": 0}
        messages.append({"role": "assistant", "content": [call]})
        reply = conversations.Reply(n, n // 2 + 1, "claude-sonnet-5-5", "tool_use", usage, 100 * n)
        journal.sync(messages, reply)
        result = {"type": "tool_result", "tool_use_id": f"toolu_{n}", "content": f"Free windows for w{n}: none."}
        messages.append({"role": "user", "content": [result]})
        journal.sync(messages)
    conn.close()
    return path


def test_a_thousand_entry_conversation_page_grows_linearly(tmp_path: Path) -> None:
    sizes = {}
    for entries in (251, 501, 1001):
        database = stored(tmp_path / f"{entries}.db", entries)
        out = tmp_path / f"{entries}.html"
        assert invoke("view", "1", "--db", str(database), "-o", str(out)).exit_code == 0
        sizes[entries] = out.stat().st_size
    trace = from_conversation(db.connect(tmp_path / "1001.db"), 1)
    assert len(trace.entries) == 1001
    assert len(trace.requests) == 500
    assert sum(len(r.indices) for r in trace.requests) == 250_000  # what a page holding every array would repeat
    # Linear: each step of 250 then 500 entries adds the same bytes per entry (a square would double it).
    per_entry_low = (sizes[501] - sizes[251]) / 250
    per_entry_high = (sizes[1001] - sizes[501]) / 500
    assert per_entry_high < 1.15 * per_entry_low, sizes
    assert sizes[1001] < 2_000 * 1001, sizes  # and a bound: under 2 KB a entry, timeline and chart included


def test_ci_runs_exactly_the_readme_test_command() -> None:
    """.ci/run installs what the browser tests need (chromium, chromium-driver) the way the README says."""
    root = Path(__file__).resolve().parent.parent
    command = (root / ".ci" / "run").read_text().strip().splitlines()[-1]
    readme = (root / "README.md").read_text()
    assert f"\n{command}\n" in readme
    # Debian's packages without their recommended set (135 packages with it: a desktop's worth, set up as the
    # system browser), and the font the pages are drawn in named, since it was one of the recommended.
    assert "apt-get install -y -qq --no-install-recommends tmux chromium chromium-driver fonts-liberation" in command


def test_view_starts_without_the_sdk_or_vcrpy(tmp_path: Path) -> None:
    """Reading a cassette for its page replays nothing: neither the SDK nor vcrpy is imported."""
    args = ["view", str(lesson_path("streamed")), "-o", str(tmp_path / "s.html")]
    code = (
        "import sys\nfrom scheduler_agent.cli import app\n"
        f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
        "print('LOADED', 'anthropic' in sys.modules, 'vcr' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "LOADED False False"
    assert [len(r.indices) for r in from_cassette(lesson_path("streamed")).requests] == [1, 3, 5]  # SSE replies read
