"""What users of `llm` expect: --version, -h, examples, JSON for scripts, stdin, db path, filters, cost."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from decimal import Decimal
from importlib.metadata import version
from pathlib import Path

import click
import genai_prices
import pytest
from click.testing import CliRunner

from scheduler_agent.api.prices import Cost, price_of, total
from scheduler_agent.cli import app
from scheduler_agent.cli.database import mask
from scheduler_agent.storage import db
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
BOOK = {"with": "priya", "start": "2026-08-31T14:00", "minutes": 30}


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


def commands(group: click.Group, prefix: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    found: list[tuple[str, ...]] = []
    context = click.Context(group)
    for name in group.list_commands(context):
        command = group.get_command(context, name)
        assert command is not None, f"{' '.join((*prefix, name))} is listed but cannot be loaded"
        if isinstance(command, click.Group):
            found += commands(command, (*prefix, name))
        else:
            found.append((*prefix, name))
    return found


ALL = commands(app)


def test_version_and_short_help() -> None:
    result = invoke("--version")
    assert result.exit_code == 0
    assert result.stdout.strip() == f"scheduler-agent {version('scheduler-agent')}"
    assert invoke("-h").stdout == invoke("--help").stdout
    assert "--install-completion" in invoke("--help").stdout  # shell completion, as the README says


@pytest.mark.parametrize("command", ALL, ids=[" ".join(c) for c in ALL])
def test_every_command_has_examples_and_clean_help(command: tuple[str, ...]) -> None:
    shown = invoke(*command, "-h")
    assert shown.exit_code == 0, shown.stderr
    help_text = shown.stdout
    assert "Examples:" in help_text, f"{' '.join(command)} --help has no Examples"
    assert "[[" not in help_text
    assert "<bool>" not in help_text
    assert "Priya Raman" not in help_text or command != ("calendar", "set-owner")


def test_help_texts_show_what_defaults_mean() -> None:
    assert "current week" in " ".join(invoke("calendar", "show", "-h").stdout.split())
    assert "standard output" in " ".join(invoke("calendar", "export", "-h").stdout.split())


def test_ask_json_is_one_object_with_calls_results_bookings_tokens_and_cost(demo_db: Path, api: Serve) -> None:
    api([Reply([tool_use("toolu_j1", "create_event", BOOK)], "tool_use"), Reply([text("Booked Monday 14:00.")])])
    result = invoke("ask", "Book Priya Monday 2pm", "--json", "--yes", "--no-stream", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    record = json.loads(result.stdout)  # stdout is the object and nothing else
    assert record["conversation"] == 1
    assert record["outcome"] == "done"
    assert record["exit_code"] == 0
    assert record["text"] == "Booked Monday 14:00."
    [call] = record["tool_calls"]
    assert call["name"] == "create_event"
    assert call["input"] == BOOK
    assert "Event id: 29" in call["result"]
    conn = sqlite3.connect(demo_db)
    assert record["booked_event_ids"] == [29] == [r[0] for r in conn.execute("SELECT event_id FROM bookings")]
    assert record["usage"]["input_tokens"] > 0
    assert len(record["iterations"]) == 2
    assert record["cost"]["usd"] > 0
    assert record["cost"]["estimated"] is False


def test_ask_json_at_the_bound_says_why(demo_db: Path, api: Serve) -> None:
    find = {"person": "priya", "week": "2026-08-31"}
    api([Reply([tool_use("toolu_b1", "find_free_slots", find)], "tool_use")])
    result = invoke("ask", "find", "--json", "--max-iterations", "1", "--db", str(demo_db), *TODAY)
    record = json.loads(result.stdout)
    assert result.exit_code == 3 == record["exit_code"]
    assert record["outcome"] == "iteration_bound"
    assert "Stopped after 1 iterations" in record["exit_reason"]


def test_the_request_from_standard_input(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Monday 14:00.")]), Reply([text("Tuesday.")])])
    result = invoke("ask", "-", "--db", str(demo_db), *TODAY, input="When is Priya free?\n")
    assert result.exit_code == 0, result.stderr
    assert server.received[0]["messages"][0]["content"][0]["text"] == "When is Priya free?"
    piped = invoke("ask", "--db", str(demo_db), *TODAY, input="And Tuesday?\n")  # no argument, stdin not a tty
    assert piped.exit_code == 0
    assert server.received[1]["messages"][0]["content"][0]["text"] == "And Tuesday?"


def test_a_piped_request_never_reads_its_approval_from_the_pipe(demo_db: Path, api: Serve) -> None:
    import subprocess
    import sys

    api([Reply([tool_use("toolu_p1", "create_event", BOOK)], "tool_use"), Reply([text("Not booked.")])])
    code = "from scheduler_agent.cli import main; main()"
    done = subprocess.run(
        [sys.executable, "-c", code, "ask", "-", "--db", str(demo_db), *TODAY, "--no-stream"],
        input="Book Priya Monday 2pm\ny\n",  # the "y" is part of the request, never an answer
        capture_output=True,
        text=True,
        start_new_session=True,  # no controlling terminal: /dev/tty cannot be opened
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    conn = sqlite3.connect(demo_db)
    # no terminal: the booking is refused, and the model is told --yes allows it
    assert conn.execute("SELECT count(*) FROM bookings").fetchone() == (0,)
    answered = conn.execute("SELECT content FROM entries WHERE position = 2").fetchone()[0]
    assert "--yes" in answered
    assert "Nothing was booked" in answered


def test_a_piped_approval_answer_is_echoed_on_its_own_line(demo_db: Path, api: Serve) -> None:
    api([Reply([tool_use("toolu_e1", "create_event", BOOK)], "tool_use"), Reply([text("Booked.")])])
    result = invoke("chat", "--db", str(demo_db), *TODAY, input="Book Priya Monday 2pm\ny\n")
    assert result.exit_code == 0, result.stderr
    assert "Approve? [y]es / [n]o / no, <reason>: y\n" in result.stderr


def test_db_path_and_a_masked_password() -> None:
    assert invoke("db", "path", "--db", "/tmp/x.db").stdout.strip() == "/tmp/x.db"
    assert invoke("db", "path").stdout.strip() == str(db.default_db_path())
    assert mask("postgresql://jo:s3cret@db.example/cal") == "postgresql://jo:***@db.example/cal"
    assert mask("/home/jo/cal.db") == "/home/jo/cal.db"
    assert "s3cret" not in invoke("db", "path", "--db", "sqlite://jo:s3cret@host/x").stdout


def test_read_only_commands_refuse_a_missing_db_file(tmp_path: Path) -> None:
    missing = tmp_path / "typo.db"
    for args in (["conversations", "list"], ["conversations", "show", "1"], ["stats"]):
        result = invoke(*args, "--db", str(missing))
        assert result.exit_code == 1 and result.stderr.strip().count("\n") == 0, result.stderr
        assert f"no database at {missing}" in result.stderr
    assert not missing.exists()


def test_no_store_short_form(demo_db: Path, api: Serve) -> None:
    api([Reply([text("ok")])])
    assert invoke("ask", "hi", "-n", "--db", str(demo_db), *TODAY).exit_code == 0
    assert sqlite3.connect(demo_db).execute("SELECT count(*) FROM conversations").fetchone() == (0,)


def stored_three(demo_db: Path, api: Serve) -> None:
    find = {"person": "priya", "week": "2026-08-31"}
    api([Reply([text("Done.")]), Reply([tool_use("toolu_s1", "find_free_slots", find)], "tool_use")])
    assert invoke("ask", "Book Priya, never before 10am", "--db", str(demo_db), *TODAY).exit_code == 0
    assert (
        invoke("ask", "Find Omar", "--max-iterations", "1", "-m", "claude-haiku-5-5", "--db", str(demo_db)).exit_code
        == 3
    )


def test_conversations_list_filters_states_limit_and_json(demo_db: Path, api: Serve) -> None:
    stored_three(demo_db, api)
    listed = invoke("conversations", "list", "--db", str(demo_db), "--json")
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["state"], r["entries"]) for r in rows] == [(2, "stopped", 3), (1, "complete", 2)]
    assert rows[1]["first_text"] == "Book Priya, never before 10am"
    assert rows[0]["model"] == "claude-haiku-5-5"

    def ids(*args: str) -> list[int]:
        listed = invoke("conversations", "list", "--json", "--db", str(demo_db), *args)
        return [row["id"] for row in json.loads(listed.stdout)]

    assert ids("-q", "10AM") == [1]
    assert ids("--model", "claude-haiku-5-5") == [2]
    assert ids("--state", "stopped") == [2]
    assert ids("--state", "complete") == [1]
    assert ids("--state", "waiting") == []
    assert ids("--limit", "1") == [2]
    assert ids("--limit", "0") == [2, 1]  # 0: all of them
    assert invoke("conversations", "list", "--limit", "-1", "--db", str(demo_db)).exit_code == 2
    assert invoke("conversations", "list", "--state", "sleeping", "--db", str(demo_db)).exit_code == 2
    text_lines = invoke("conversations", "list", "--db", str(demo_db)).stdout
    assert "3 entries" in text_lines
    assert "stopped" in text_lines


def test_one_entry_is_singular(demo_db: Path, api: Serve) -> None:
    api([Reply(status=400, error_type="invalid_request_error", error_message="no")])
    invoke("ask", "hello", "--db", str(demo_db), *TODAY)
    assert " 1 entry " in invoke("conversations", "list", "--db", str(demo_db)).stdout
    assert "· 1 entry ·" in invoke("conversations", "show", "1", "--db", str(demo_db)).stdout


def test_stats_json_counts_real_conversations(demo_db: Path, api: Serve) -> None:
    stored_three(demo_db, api)
    totals = json.loads(invoke("stats", "--json", "--db", str(demo_db)).stdout)
    assert totals == {"conversations": 2, "retries_exhausted": 0, "tool_deadlines": 0, "restarts": 0}


def test_conversations_show_has_the_cost_per_turn_and_in_all(demo_db: Path, api: Serve) -> None:
    stored_three(demo_db, api)
    shown = invoke("conversations", "show", "2", "--db", str(demo_db)).stdout
    assert "cost: $" in shown
    assert "turn 1 (1 iteration)" in shown
    assert "genai-prices" in shown


# --- prices -----------------------------------------------------------------------------------


def test_a_price_counts_cache_reads_and_writes_as_genai_prices_expects() -> None:
    usage = {
        "input_tokens": 1000,
        "output_tokens": 100,
        "cache_read_input_tokens": 4000,
        "cache_creation_input_tokens": 500,
    }
    cost = price_of("claude-sonnet-5-5", usage)
    model_price = genai_prices.calc_price(
        genai_prices.Usage(input_tokens=1, output_tokens=0), "claude-sonnet-5-5", provider_id="anthropic"
    ).model_price
    per_million = Decimal(1_000_000)
    expected = (
        1000 * Decimal(str(model_price.input_mtok))
        + 100 * Decimal(str(model_price.output_mtok))
        + 4000 * Decimal(str(model_price.cache_read_mtok))
        + 500 * Decimal(str(model_price.cache_write_mtok))
    ) / per_million
    assert cost.usd == expected
    assert cost.text().startswith("$")


def test_an_unknown_model_has_no_price_never_zero() -> None:
    cost = price_of("claude-imaginary-9", {"input_tokens": 10, "output_tokens": 5})
    assert cost.usd is None
    assert cost.text() == "no price"
    assert total([Cost(Decimal("0.5")), cost]).text() == "no price"
    assert Cost(Decimal("0.0123"), estimated=True).text() == "~$0.0123 (estimate)"


@pytest.mark.parametrize(
    "argv",
    [
        ["--version"],
        ["-h"],
        ["db", "path"],
        ["stats", "--json", "--db", "{db}"],
        ["conversations", "list", "--json", "-q", "x", "--state", "stopped", "--db", "{db}"],
        ["conversations", "show", "1", "--db", "{db}"],
        ["calendar", "people", "--json", "--db", "{db}"],
        ["calendar", "show", "--json", "--from", "2026-08-31T00:00", "--db", "{db}"],
    ],
)
def test_the_new_read_only_paths_do_not_import_the_sdk_or_vcrpy(argv: list[str], tmp_path: Path) -> None:
    import subprocess
    import sys

    path = str(tmp_path / "c.db")
    args = [a.replace("{db}", path) for a in argv]
    code = (
        "import sys\nfrom scheduler_agent.cli import app\n"
        f"try:\n    app(['calendar', 'seed-demo', '--db', {path!r}])\nexcept SystemExit:\n    pass\n"
        f"try:\n    app({args!r})\nexcept SystemExit:\n    pass\n"
        "print('LOADED', 'anthropic' in sys.modules, 'vcr' in sys.modules, "
        "[m for m in ('pydantic', 'rich', 'typer') if m in sys.modules])"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip().splitlines()[-1] == "LOADED False False []"  # nor pydantic, rich or Typer (issue 14)
