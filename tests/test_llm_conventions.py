"""The conventions of `llm` that issue 33 adds: the request as the default command, `conversations show` with no
id and `-r`, `list -n`, `models` and the `-m` warning, and `-o/--option KEY VALUE`."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from click.testing import CliRunner
from helpers import run_cli

from scheduler_agent.cli import app
from scheduler_agent.testing.scripted_server import Reply, ScriptedServer, text, tool_use
from scheduler_agent.testing.temporal import TemporalServer

runner = CliRunner()
Serve = Callable[..., ScriptedServer]
TODAY = ["--today", "2026-08-27T09:00"]
FIND = tool_use("toolu_lc_1", "find_free_slots", {"person": "priya", "week": "2026-08-31"})


def invoke(*args: str, input: str | None = None):  # type: ignore[no-untyped-def]
    return runner.invoke(app, list(args), input=input)


# --- the request as the default command --------------------------------------------------------------


def test_a_request_given_instead_of_a_command_runs_ask(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("Monday 14:00 works.")])])
    result = invoke("Book 30 minutes with Priya next week", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    assert result.stdout == "Monday 14:00 works.\n"
    assert server.received[0]["messages"][0]["content"][0]["text"] == "Book 30 minutes with Priya next week"


def test_the_default_command_takes_asks_options_first(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")])])
    result = invoke("--db", str(demo_db), *TODAY, "-m", "claude-opus-5", "Find Priya a slot")
    assert result.exit_code == 0, result.stderr
    assert server.received[0]["model"] == "claude-opus-5"


def test_a_word_close_to_a_command_is_a_usage_error_naming_it(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")])])
    for word, command in (("calender", "calendar"), ("conversation", "conversations")):
        result = invoke(word, "--db", str(demo_db))
        assert result.exit_code == 2
        assert f"did you mean `{command}`?" in result.stderr
    assert server.received == []


def test_no_arguments_print_the_help() -> None:
    result = invoke()
    assert "Commands:" in result.output  # as Click prints it (on stderr, exit 2, from Click 8.2)
    assert "models " in result.output


# --- conversations show with no id, -r; list -n ------------------------------------------------------


def _two_conversations(demo_db: Path, api: Serve) -> ScriptedServer:
    server = api([Reply([text("First answer.")]), Reply([text("Second answer.")])])
    assert invoke("ask", "one", "--db", str(demo_db), *TODAY).exit_code == 0
    assert invoke("ask", "two", "--db", str(demo_db), *TODAY).exit_code == 0
    return server


def test_show_with_no_id_shows_the_latest_and_r_its_answer(demo_db: Path, api: Serve) -> None:
    _two_conversations(demo_db, api)
    shown = invoke("conversations", "show", "--db", str(demo_db))
    assert shown.exit_code == 0, shown.stderr
    assert shown.stdout.startswith("conversation 2 ·")
    answer = invoke("conversations", "show", "-r", "--db", str(demo_db))
    assert answer.stdout == "Second answer.\n"
    first = invoke("conversations", "show", "1", "--response", "--db", str(demo_db))
    assert first.stdout == "First answer.\n"


def test_show_r_of_a_turn_with_no_answer_says_why(demo_db: Path, api: Serve) -> None:
    api([Reply([FIND], "tool_use")])
    assert invoke("ask", "find", "--max-iterations", "1", "--db", str(demo_db), *TODAY).exit_code == 3
    result = invoke("conversations", "show", "-r", "--db", str(demo_db))
    assert result.exit_code == 1
    assert result.stdout == ""
    assert result.stderr.startswith("Error: Conversation 1's last turn has no answer: it is ")
    assert result.stderr.count("\n") == 1


def test_show_with_no_conversation_says_so(demo_db: Path) -> None:
    result = invoke("conversations", "show", "--db", str(demo_db))
    assert result.exit_code == 1
    assert "No stored conversation yet" in result.stderr


def test_list_shows_the_latest_ten_unless_n(demo_db: Path, api: Serve) -> None:
    api([Reply([text(f"answer {n}")]) for n in range(12)])
    for n in range(12):
        assert invoke("ask", f"request {n}", "--db", str(demo_db), *TODAY).exit_code == 0
    listed = invoke("conversations", "list", "--db", str(demo_db)).stdout.splitlines()
    assert [int(line.split()[0]) for line in listed] == list(range(12, 2, -1))
    as_json = json.loads(invoke("conversations", "list", "--json", "--db", str(demo_db)).stdout)
    assert len(as_json) == 10
    assert len(json.loads(invoke("conversations", "list", "-n", "3", "--json", "--db", str(demo_db)).stdout)) == 3
    assert len(invoke("conversations", "list", "-n", "0", "--db", str(demo_db)).stdout.splitlines()) == 12
    assert len(invoke("conversations", "list", "--count", "2", "--db", str(demo_db)).stdout.splitlines()) == 2


# --- models, and the -m warning ------------------------------------------------------------------------


def test_models_lists_priced_models_with_the_default_marked() -> None:
    result = invoke("models")
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].split() == ["MODEL", "INPUT", "OUTPUT", "CACHE", "READ", "CACHE", "WRITE"]
    default = [line for line in lines if "(default)" in line]
    assert len(default) == 1
    assert default[0].startswith("claude-sonnet-5-5 (default)")
    rows = json.loads(invoke("models", "--json").stdout)
    sonnet = next(row for row in rows if row["name"] == "claude-sonnet-5-5")
    assert (sonnet["input"], sonnet["output"], sonnet["default"]) == (2.0, 10.0, True)
    assert "claude-sonnet-5-5" not in [row["name"] for row in rows if not row["default"]]


def test_m_warns_for_a_name_not_listed_and_still_sends_it(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")]), Reply([text("ok")])])
    unknown = invoke("ask", "-m", "claude-nope-9", "hi", "--db", str(demo_db), *TODAY)
    assert unknown.exit_code == 0, unknown.stderr
    assert "Warning: 'claude-nope-9' is not one of the models `scheduler-agent models` lists" in unknown.stderr
    assert server.received[0]["model"] == "claude-nope-9"
    known = invoke("ask", "-m", "claude-opus-5", "hi", "--db", str(demo_db), *TODAY)
    assert "Warning" not in known.stderr


def test_the_model_check_runs_only_when_m_is_given(demo_db: Path, api: Serve) -> None:
    import subprocess
    import sys

    api([Reply([text("ok")])])
    probe = (
        "import sys\n"
        "from scheduler_agent.cli import run_options\n"
        "ctx = run_options.click.Context(run_options.click.Command('x'))\n"
        "param = run_options.click.Option(['-m'])\n"
        "run_options._check_model(ctx, param, 'claude-nope-9')\n"
        "print('genai_prices' in sys.modules)\n"
    )
    ran = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert ran.stdout.strip() == "False"


# --- -o/--option KEY VALUE ---------------------------------------------------------------------------------


def _stored_options(path: Path) -> list[object]:
    import sqlite3

    conn = sqlite3.connect(path)
    try:
        return [json.loads(row[0]) for row in conn.execute("SELECT options FROM conversations ORDER BY id")]
    finally:
        conn.close()


def test_options_are_sent_typed_stored_and_not_carried_over(demo_db: Path, api: Serve, tmp_path: Path) -> None:
    server = api([Reply([text("ok")]), Reply([text("still ok")])])
    dump = tmp_path / "dump.jsonl"
    options = ["-o", "max_tokens", "777", "-o", "stop_sequences", '["END"]', "-o", "thinking", '{"type": "adaptive"}']
    args = ["--db", str(demo_db), *TODAY, "--no-stream"]
    first = invoke("ask", *options, "-o", "speed", "fast", "hi", *args, "--dump-array-file", str(dump))
    assert first.exit_code == 0, first.stderr
    sent = server.received[0]
    assert sent["max_tokens"] == 777
    assert sent["stop_sequences"] == ["END"]
    assert sent["thinking"] == {"type": "adaptive"}
    assert sent["speed"] == "fast"  # not JSON: taken as the string
    assert list(sent)[:3] == ["max_tokens", "messages", "model"]
    assert list(sent)[3:] == sorted(list(sent)[3:])  # the optional keys in the SDK's order
    assert json.loads(dump.read_text().splitlines()[0])["request"]["stop_sequences"] == ["END"]
    assert _stored_options(demo_db) == [{"speed": "fast", "stop_sequences": ["END"], "thinking": {"type": "adaptive"}}]
    later = invoke("ask", "-c", "and then?", *args)
    assert later.exit_code == 0, later.stderr
    assert "stop_sequences" not in server.received[1]
    assert server.received[1]["max_tokens"] == 4096
    assert _stored_options(demo_db) == [{}]


def test_the_dumped_array_shows_the_options(demo_db: Path, api: Serve) -> None:
    api([Reply([text("ok")])])
    result = invoke("ask", "-o", "stop_sequences", '["END"]', "hi", "--dump-array", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    assert 'options: {"stop_sequences": ["END"]}' in result.stderr


def test_a_removed_key_is_refused_by_name_with_the_keys_taken(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")])])
    result = invoke("ask", "-o", "temperature", "0.2", "hi", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 2
    assert "the API (2026-10-21) has removed temperature" in result.stderr
    assert "the keys taken are max_tokens, stop_sequences, thinking" in result.stderr
    assert server.received == []


def test_a_value_of_the_wrong_type_is_refused_before_sending(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")])])
    for key, value, says in (
        ("max_tokens", "lots", "max_tokens takes an integer"),
        ("stop_sequences", "END", "stop_sequences takes a list of strings"),
        ("thinking", '{"type": "enabled"}', "thinking takes"),
        ("frobnicate", "1", "-o frobnicate: not a request key"),
    ):
        result = invoke("ask", "-o", key, value, "hi", "--db", str(demo_db), *TODAY)
        assert result.exit_code == 2, key
        assert says in result.stderr, result.stderr
    assert server.received == []


def test_the_default_command_takes_o(demo_db: Path, api: Serve) -> None:
    server = api([Reply([text("ok")])])
    result = invoke("-o", "max_tokens", "777", "Find Priya a slot", "--db", str(demo_db), *TODAY)
    assert result.exit_code == 0, result.stderr
    assert server.received[0]["max_tokens"] == 777


def test_resume_sends_the_interrupted_turns_options_again(demo_db: Path, api: Serve) -> None:
    server = api([Reply([FIND], "tool_use"), Reply([text("Monday 14:00.")])])
    args = ["--db", str(demo_db), *TODAY]
    asked = invoke("ask", "-o", "stop_sequences", '["END"]', "find", "--max-iterations", "1", *args)
    assert asked.exit_code == 3, asked.stderr
    assert invoke("resume", "1", "--db", str(demo_db)).exit_code == 0
    assert server.received[1]["stop_sequences"] == ["END"]


def test_chat_submit_and_resume_take_o() -> None:
    for path in (["chat"], ["submit"], ["resume"], ["ask"]):
        command = app.get_command(None, path[0])  # type: ignore[arg-type]
        assert command is not None
        assert any("--option" in p.opts for p in command.params), path


def test_submit_stores_the_options_for_the_worker(demo_db: Path, temporal: TemporalServer) -> None:
    # a process of its own: a command that used the Temporal client leaves at once (cli/workers.py)
    env = {"SCHEDULER_AGENT_TEMPORAL": temporal.address, "SCHEDULER_AGENT_TASK_QUEUE": "llm-conventions"}
    result = run_cli(["submit", "-o", "stop_sequences", '["END"]', "hi", "--db", str(demo_db), *TODAY], env=env)
    assert result.returncode == 0, result.stderr
    assert _stored_options(demo_db) == [{"stop_sequences": ["END"]}]


def test_resume_with_o_sends_its_own_keys(demo_db: Path, api: Serve) -> None:
    server = api([Reply([FIND], "tool_use"), Reply([text("Monday 14:00.")])])
    asked = invoke("ask", "find", "--max-iterations", "1", "--db", str(demo_db), *TODAY)
    assert asked.exit_code == 3, asked.stderr
    resumed = invoke("resume", "1", "-o", "max_tokens", "555", "-o", "speed", "fast", "--db", str(demo_db))
    assert resumed.exit_code == 0, resumed.stderr
    assert (server.received[1]["max_tokens"], server.received[1]["speed"]) == (555, "fast")
